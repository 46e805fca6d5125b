"""Shared helpers for Strata's integration tests: paths, test records, confluent-kafka
produce/consume helpers that remember exact offsets, and byte-exact comparison.

Everything here is client-side; nothing knows how the broker is implemented.
"""
from __future__ import annotations

import os
import random
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

IT_DIR = Path(__file__).resolve().parent
REPO_ROOT = IT_DIR.parent.parent
KAFKA_LIB = Path(os.environ.get("KAFKA_LIB", IT_DIR / "kafka-tools" / "target" / "lib"))
JAVA_DIR = IT_DIR / "java"
JAVA_CLASSPATH = f"{JAVA_DIR / 'target' / 'strata-it-java.jar'}:{JAVA_DIR / 'target' / 'lib'}/*"

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
BASE_TS = 1_700_000_000_000  # explicit CreateTime of record i is BASE_TS + i
TIMESTAMP_CREATE_TIME = 1  # confluent_kafka.TIMESTAMP_CREATE_TIME


def against_kafka() -> bool:
    """True when the suite runs against a real Apache Kafka broker (suite self-check)."""
    return os.environ.get("STRATA_TEST_AGAINST_KAFKA", "") not in ("", "0")


def unique_topic(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@dataclass
class Rec:
    """One record as sent; offset is filled in from the producer's delivery report."""

    partition: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]
    timestamp: int
    offset: int = -1
    index: int = field(default=-1, compare=False)


WORDS = ("alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega broker topic "
         "partition offset segment index record batch header key value leader replica commit "
         "fetch produce stream log byte crc codec zstd snappy gzip lz4 kafka strata").split()


def text_value(rnd: random.Random, min_len: int, max_len: int) -> str:
    """Printable text (no '|' or newline) that every codec, lz4 and snappy included, can
    compress: librdkafka sends a batch uncompressed when compressing does not shrink it."""
    target = rnd.randint(min_len, max_len)
    parts, size = [], 0
    while size < target:
        w = rnd.choice(WORDS) if rnd.random() < 0.8 else f"{rnd.getrandbits(20):05x}"
        parts.append(w)
        size += len(w) + 1
    return " ".join(parts)[:target]


def make_records(n: int, partitions: int, seed: int, tag: str, value_size: int = 200,
                 nulls: bool = True, null_header_values: bool = True) -> list[Rec]:
    """Deterministic records spread round-robin over `partitions`.

    Keys are text, values alternate random binary / compressible text; with `nulls`, some
    keys and values are null. Headers include an empty value, a duplicated key and (with
    `null_header_values`) a null value.
    """
    rnd = random.Random(seed)
    recs = []
    for i in range(n):
        key = None if nulls and i % 97 == 13 else f"key-{i}-{rnd.getrandbits(32):08x}".encode()
        if nulls and i % 101 == 7:
            value = None
        else:
            size = rnd.randint(1, value_size)
            if i % 2 == 0:
                value = rnd.randbytes(size)
            else:
                value = bytes(ord("a") + (j + i) % 7 for j in range(size))
        headers: list[tuple[str, bytes | None]] = [
            ("idx", str(i).encode()), ("tag", tag.encode()), ("empty", b""),
            ("dup", b"first"), ("dup", b"second")]
        if null_header_values and i % 7 == 0:
            headers.append(("nullval", None))
        recs.append(Rec(i % partitions, key, value, headers, BASE_TS + i, index=i))
    return recs


# ---- confluent-kafka --------------------------------------------------------------------

def admin(bootstrap: str):
    from confluent_kafka.admin import AdminClient
    return AdminClient({"bootstrap.servers": bootstrap})


def create_topic(bootstrap: str, topic: str, partitions: int, config: dict | None = None,
                 timeout: float = 30) -> None:
    """Creates `topic` and waits until its metadata shows every partition with a leader."""
    from confluent_kafka.admin import NewTopic
    a = admin(bootstrap)
    fs = a.create_topics([NewTopic(topic, partitions, 1, config=config or {})],
                         operation_timeout=timeout, request_timeout=timeout)
    fs[topic].result(timeout)
    wait_for_topic(a, topic, partitions, timeout)


def wait_for_topic(a, topic: str, partitions: int, timeout: float = 30) -> None:
    deadline = time.time() + timeout
    while True:
        md = a.list_topics(topic=topic, timeout=10).topics.get(topic)
        if md is not None and md.error is None and len(md.partitions) == partitions and all(
                p.leader >= 0 and p.error is None for p in md.partitions.values()):
            return
        if time.time() > deadline:
            raise AssertionError(f"topic {topic} not ready: {md and md.partitions}")
        time.sleep(0.2)


def produce_confluent(bootstrap: str, topic: str, recs: list[Rec], extra: dict | None = None,
                      flush_timeout: float = 60) -> None:
    """Produces `recs` to their partitions and stores each delivery report's offset.

    Raises if any delivery failed.
    """
    from confluent_kafka import Producer
    conf = {"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5,
            "batch.num.messages": 2000, "message.timeout.ms": 60000}
    conf.update(extra or {})
    p = Producer(conf)
    errors = []

    def on_delivery(rec: Rec):
        def cb(err, msg):
            if err is not None:
                errors.append((rec.index, err))
            else:
                rec.offset = msg.offset()
                if msg.partition() != rec.partition:
                    errors.append((rec.index, f"acked on partition {msg.partition()}"))
        return cb

    for rec in recs:
        while True:
            try:
                p.produce(topic, value=rec.value, key=rec.key, partition=rec.partition,
                          headers=rec.headers, timestamp=rec.timestamp, on_delivery=on_delivery(rec))
                break
            except BufferError:
                p.poll(0.1)
        p.poll(0)
    remaining = p.flush(flush_timeout)
    assert remaining == 0, f"{remaining} messages still undelivered after flush"
    assert not errors, f"{len(errors)} deliveries failed, first: {errors[:3]}"


def consumer_confluent(bootstrap: str, extra: dict | None = None):
    from confluent_kafka import Consumer
    conf = {"bootstrap.servers": bootstrap, "group.id": "strata-it-unused",
            "enable.auto.commit": False, "enable.auto.offset.store": False,
            "auto.offset.reset": "earliest", "check.crcs": True, "enable.partition.eof": False}
    conf.update(extra or {})
    return Consumer(conf)


def consume_confluent(bootstrap: str, topic: str, partitions: int, timeout: float = 60,
                      start: dict[int, int] | None = None,
                      extra: dict | None = None) -> dict[int, list]:
    """Reads every partition of `topic` from the beginning (or `start[p]`) up to its current
    high watermark with assign(); `extra` configures the consumer. Returns {partition:
    [Message, ...]} in offset order."""
    from confluent_kafka import OFFSET_BEGINNING, TopicPartition
    c = consumer_confluent(bootstrap, extra)
    try:
        end = {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
               for p in range(partitions)}
        c.assign([TopicPartition(topic, p, (start or {}).get(p, OFFSET_BEGINNING))
                  for p in range(partitions)])
        got: dict[int, list] = {p: [] for p in range(partitions)}
        nxt = {p: (start or {}).get(p, 0) for p in range(partitions)}
        deadline = time.time() + timeout
        while any(nxt[p] < end[p] for p in range(partitions)):
            assert time.time() < deadline, f"timed out consuming {topic}: at {nxt}, end {end}"
            for m in c.consume(num_messages=1000, timeout=0.5):
                assert m.error() is None, f"consume error: {m.error()}"
                got[m.partition()].append(m)
                nxt[m.partition()] = max(nxt[m.partition()], m.offset() + 1)
        return got
    finally:
        c.close()


def expected_by_partition(recs: list[Rec]) -> dict[int, dict[int, Rec]]:
    out: dict[int, dict[int, Rec]] = {}
    for r in recs:
        assert r.offset >= 0, f"record {r.index} has no delivery offset"
        part = out.setdefault(r.partition, {})
        assert r.offset not in part, f"two records acked at {r.partition}@{r.offset}"
        part[r.offset] = r
    return out


def assert_same_records(recs: list[Rec], got: dict[int, list], check_timestamps: bool = True,
                        contiguous_from: int | None = 0) -> None:
    """Partition by partition: exactly the produced offsets, each with identical key, value,
    headers (order included) and CreateTime. With `contiguous_from`, offsets must also run
    without gaps from that offset."""
    exp = expected_by_partition(recs)
    for p in sorted(set(exp) | set(got)):
        want = exp.get(p, {})
        have = got.get(p, [])
        have_offsets = [m.offset() for m in have]
        assert have_offsets == sorted(want), (
            f"partition {p}: consumed offsets {_span(have_offsets)} != produced {_span(sorted(want))}")
        if contiguous_from is not None and have_offsets:
            assert have_offsets == list(range(contiguous_from, contiguous_from + len(have))), (
                f"partition {p}: offsets not contiguous from {contiguous_from}")
        for m in have:
            r = want[m.offset()]
            where = f"partition {p} offset {m.offset()} (record {r.index})"
            assert m.key() == r.key, f"{where}: key {m.key()!r} != {r.key!r}"
            assert m.value() == r.value, f"{where}: value differs"
            assert (m.headers() or []) == r.headers, f"{where}: headers {m.headers()} != {r.headers}"
            if check_timestamps:
                assert m.timestamp() == (TIMESTAMP_CREATE_TIME, r.timestamp), (
                    f"{where}: timestamp {m.timestamp()} != {r.timestamp}")


def _span(offsets: list[int]) -> str:
    if not offsets:
        return "[]"
    return f"[{offsets[0]}..{offsets[-1]}] ({len(offsets)} offsets)"


def wait_until(pred, timeout: float, what: str, seen=None, interval: float = 0.1):
    """Polls pred() until it returns something truthy (returned) or `timeout` seconds pass:
    then fails naming `what` and, with `seen`, what was seen last."""
    deadline = time.time() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.time() > deadline:
            detail = f"; seen: {seen()}" if seen is not None else ""
            raise AssertionError(f"{what}: not within {timeout}s{detail}")
        time.sleep(interval)


def retry(fn, timeout: float = 30, what: str = ""):
    """Calls fn() until it stops raising a retriable KafkaException (e.g. NOT_LEADER or
    UNKNOWN_LEADER_EPOCH right after a broker restart) or `timeout` passes."""
    from confluent_kafka import KafkaError, KafkaException
    transient = {KafkaError.UNKNOWN_LEADER_EPOCH, KafkaError.NOT_LEADER_FOR_PARTITION,
                 KafkaError.LEADER_NOT_AVAILABLE, KafkaError.UNKNOWN_TOPIC_OR_PART,
                 KafkaError._TRANSPORT, KafkaError.REQUEST_TIMED_OUT, KafkaError._TIMED_OUT}
    deadline = time.time() + timeout
    while True:
        try:
            return fn()
        except KafkaException as e:
            err = e.args[0]
            ok = isinstance(err, KafkaError) and (err.retriable() or err.code() in transient)
            if not ok or time.time() > deadline:
                raise
            time.sleep(0.3)


# ---- what the broker stored ------------------------------------------------------------

CODEC_BY_ID = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
CODEC_HINT = ("librdkafka silently sends batches uncompressed unless the broker's ApiVersions "
              "includes Produce v0 (gzip/snappy/lz4, librdkafka <= 2.11) and FindCoordinator v0 "
              "(lz4); Kafka 4.x advertises both for that reason")


def stored_codecs(broker, topic: str, partitions: int, count: str = "batches") -> Counter:
    """{codec: number of batches (or, with count="records", of records in them)} over the
    topic's segment files (read from disk).

    Lets data-path tests check that the codec under test really went over the wire and
    into the log: clients may fall back to 'none' without telling anyone."""
    import struct
    codecs: Counter = Counter()
    for p in range(partitions):
        for seg in broker.partition_dir(topic, p).glob("*.log"):
            data = seg.read_bytes()
            pos = 0
            while pos + 27 <= len(data):
                length = struct.unpack_from(">i", data, pos + 8)[0]
                if length < 49 or pos + 12 + length > len(data):
                    break  # end of written data
                attributes = struct.unpack_from(">h", data, pos + 21)[0]
                last_offset_delta = struct.unpack_from(">i", data, pos + 23)[0]
                n = last_offset_delta + 1 if count == "records" else 1
                codecs[CODEC_BY_ID.get(attributes & 0x7, f"unknown-{attributes & 0x7}")] += n
                pos += 12 + length
    return codecs


def assert_stored_with(broker, topic: str, partitions: int, codec: str) -> None:
    """Most records must be in batches that carry `codec`. Clients send a batch uncompressed
    when compressing would not shrink it (a lone small record, which a slow broker makes more
    frequent), so some 'none' batches may occur; counted by records, they stay a minority."""
    batches = stored_codecs(broker, topic, partitions)
    counts = stored_codecs(broker, topic, partitions, count="records")
    total = sum(counts.values())
    assert total > 0 and set(counts) <= {codec, "none"}, f"stored batches: {dict(batches)}"
    assert counts[codec] >= 0.5 * total, \
        f"stored batches: {dict(batches)}, records: {dict(counts)}; {CODEC_HINT}"
