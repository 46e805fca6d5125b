"""kafka-python (pure-Python client) against the broker: KafkaProducer with every codec it
supports, KafkaConsumer with assign() + seek_to_beginning(), byte-exact comparison."""
from __future__ import annotations

import time

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

import kit

N = 10_000
PARTITIONS = 4


def produce(bootstrap: str, topic: str, recs: list[kit.Rec], codec: str, idempotence: bool):
    p = KafkaProducer(bootstrap_servers=bootstrap, acks="all",
                      compression_type=None if codec == "none" else codec,
                      enable_idempotence=idempotence, linger_ms=5, batch_size=64 * 1024,
                      request_timeout_ms=30000)
    try:
        futures = [(r, p.send(topic, key=r.key, value=r.value, headers=r.headers,
                              partition=r.partition, timestamp_ms=r.timestamp)) for r in recs]
        p.flush(timeout=60)
        for r, f in futures:
            md = f.get(timeout=30)
            assert md.partition == r.partition
            r.offset = md.offset
    finally:
        p.close(timeout=10)


def consume(bootstrap: str, topic: str, partitions: int) -> dict[int, list]:
    c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                      auto_offset_reset="earliest", check_crcs=True)
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        c.assign(tps)
        c.seek_to_beginning(*tps)
        end = c.end_offsets(tps)
        got: dict[int, list] = {p: [] for p in range(partitions)}
        deadline = time.time() + 60
        while any(c.position(tp) < end[tp] for tp in tps):
            assert time.time() < deadline, f"timed out: end offsets {end}"
            for tp, msgs in c.poll(timeout_ms=500, max_records=5000).items():
                got[tp.partition].extend(msgs)
        return got
    finally:
        c.close()


def assert_same(recs: list[kit.Rec], got: dict[int, list]) -> None:
    exp = kit.expected_by_partition(recs)
    for p in range(PARTITIONS):
        have = got[p]
        assert [m.offset for m in have] == list(range(len(exp.get(p, {})))), f"partition {p} offsets"
        assert sorted(exp.get(p, {})) == [m.offset for m in have]
        for m in have:
            r = exp[p][m.offset]
            where = f"partition {p} offset {m.offset} (record {r.index})"
            assert m.key == r.key, where
            assert m.value == r.value, where
            assert list(m.headers) == r.headers, where
            assert (m.timestamp, m.timestamp_type) == (r.timestamp, 0), where


@pytest.mark.parametrize("codec", kit.CODECS)
def test_produce_consume_roundtrip(broker, codec):
    topic = kit.unique_topic(f"kp-{codec}")
    kit.create_topic(broker.bootstrap, topic, PARTITIONS)
    # kafka-python cannot send null header values; keys/values may be null.
    recs = kit.make_records(N, PARTITIONS, seed=100 + kit.CODECS.index(codec), tag=codec,
                            null_header_values=False)
    for r in recs:  # kafka-python refuses records whose key and value are both null
        if r.key is None and r.value is None:
            r.key = b""
    produce(broker.bootstrap, topic, recs, codec, idempotence=(codec != "gzip"))
    got = consume(broker.bootstrap, topic, PARTITIONS)
    assert sum(len(v) for v in got.values()) == N
    assert_same(recs, got)
    kit.assert_stored_with(broker, topic, PARTITIONS, codec)


def test_cross_client_confluent_produce_kafka_python_consume(broker):
    """Batches written by librdkafka (zstd) are read back by kafka-python unchanged."""
    topic = kit.unique_topic("kp-cross")
    kit.create_topic(broker.bootstrap, topic, PARTITIONS)
    recs = kit.make_records(2000, PARTITIONS, seed=7, tag="cross", null_header_values=False)
    kit.produce_confluent(broker.bootstrap, topic, recs, {"compression.type": "zstd"})
    assert_same(recs, consume(broker.bootstrap, topic, PARTITIONS))
