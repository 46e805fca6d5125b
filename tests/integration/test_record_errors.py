"""Per-record produce errors (KIP-467): a batch with invalid records is refused whole, and the
answer names each record at fault by its index in the batch, with Kafka's messages. The
scenario of librdkafka's own test 0011 (test_message_single_partition_record_fail): 100
records to a compacted topic, every tenth without a key. In one batch, librdkafka reports
INVALID_RECORD for the 10 named records and _INVALID_DIFFERENT_RECORD for the other 90; one
record per batch, only the 10 fail and the 90 are stored. CreateTime timestamps outside
message.timestamp.before/after.max.ms are refused the same way with INVALID_TIMESTAMP.
"""
from __future__ import annotations

import time

import pytest

import kit
import rawkafka

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="run against Strata")

INVALID_RECORD = 87
INVALID_TIMESTAMP = 32


def produce_100(bootstrap: str, topic: str, extra: dict) -> dict:
    """librdkafka 0011's 100 records (every tenth without a key) -> {error name: count}."""
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 500, "batch.num.messages": 1000,
                  "message.timeout.ms": 30000, **extra})
    outcome: dict[str, int] = {}

    def delivered(err, _msg):
        name = "ok" if err is None else err.name()
        outcome[name] = outcome.get(name, 0) + 1
    for i in range(100):
        value = f"record_errors test message #{i}".encode()
        p.produce(topic, value=value, key=None if i % 10 == 0 else value, partition=0,
                  on_delivery=delivered)
    assert p.flush(60) == 0
    return outcome


def test_keyless_records_of_a_compacted_topic_are_named_and_fail_only_their_batch(broker):
    topic = kit.unique_topic("kip467")
    kit.create_topic(broker.bootstrap, topic, 1, config={"cleanup.policy": "compact"})
    one_batch = produce_100(broker.bootstrap, topic, {})
    assert one_batch == {"INVALID_RECORD": 10, "_INVALID_DIFFERENT_RECORD": 90}, one_batch
    batch_each = produce_100(broker.bootstrap, topic, {"batch.size": 1})
    assert batch_each == {"INVALID_RECORD": 10, "ok": 90}, batch_each
    got = kit.consume_confluent(broker.bootstrap, topic, 1)[0]
    assert len(got) == 90 and all(m.key() is not None for m in got)
    assert [m.offset() for m in got] == list(range(90)), "the refused batch left no offsets"


def produce_v8(bootstrap: str, topic: str, batch: bytes):
    """One raw Produce v8 of `batch` -> (error code, [(batch index, message)], error message)."""
    with rawkafka.Conn(bootstrap) as c:
        c.send(rawkafka.request(0, 8, 31, rawkafka.produce_body(8, topic, 0, batch, acks=1)))
        cid, body = c.recv_frame()
    assert cid == 31
    r = rawkafka.Reader(body)
    assert r.array_len() == 1 and r.string() == topic and r.array_len() == 1
    r.i32()
    code = r.i16()
    r.i64(), r.i64(), r.i64()  # base offset, log append time, log start
    errors = [(r.i32(), r.string()) for _ in range(r.array_len())]
    return code, errors, r.string()


def test_the_answer_names_the_records_on_the_wire(broker):
    topic = kit.unique_topic("kip467-wire")
    kit.create_topic(broker.bootstrap, topic, 1, config={
        "cleanup.policy": "compact", "message.timestamp.after.max.ms": "60000"})
    now = int(time.time() * 1000)
    records = [(b"k", b"v", []), (None, b"v", []), (b"k", b"v", []), (None, None, [])]
    code, errors, message = produce_v8(broker.bootstrap, topic,
                                       rawkafka.record_batch(records, now))
    assert code == INVALID_RECORD
    assert [i for i, _ in errors] == [1, 3], errors
    assert errors[0][1] == (f"Compacted topic cannot accept message without key in topic "
                            f"partition {topic}-0."), errors
    assert message.startswith("One or more records have been rejected due to 2 record errors"), \
        message
    # A batch an hour ahead of the broker's clock, with a window of a minute.
    code, errors, _ = produce_v8(broker.bootstrap, topic,
                                 rawkafka.record_batch([(b"k", b"v", [])], now + 3_600_000))
    assert code == INVALID_TIMESTAMP and [i for i, _ in errors] == [0], errors
    assert "is out of range. The timestamp should be within" in errors[0][1], errors
    code, errors, message = produce_v8(broker.bootstrap, topic,
                                       rawkafka.record_batch([(b"k", b"v", [])], now))
    assert (code, errors, message) == (0, [], None)
