"""Log compaction (cleanup.policy=compact) seen through real clients: after the cleaner runs a
consumer sees exactly the latest value per key, offsets are kept (with gaps), tombstones go
after delete.retention.ms, keyless records are refused, and a restart in between loses nothing.
On a transactional topic aborted records go, and so do the markers of transactions with no
record left (read off the segment files), while read_committed readers see the latest committed
value of every key."""
import struct
import threading
import time

import pytest
from confluent_kafka import KafkaException, Producer

import kit
from kit import wait_until

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="cleaner timings tuned for Strata")

CLEANER = {"log.cleaner.backoff.ms": "200", "log.retention.check.interval.ms": "500"}
TOPIC_CONFIG = {"cleanup.policy": "compact", "segment.bytes": "20000", "segment.ms": "500",
                "min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": "1000"}


def produce(bootstrap, topic, items):
    """items: [(key, value-or-None)] to partition 0; returns their offsets."""
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5,
                  "enable.idempotence": True, "compression.type": "lz4", "batch.size": 8000})
    offsets, errors = [None] * len(items), []
    for i, (k, v) in enumerate(items):
        def cb(err, msg, i=i):
            if err:
                errors.append(err)
            else:
                offsets[i] = msg.offset()
        p.produce(topic, key=k, value=v, partition=0, on_delivery=cb)
        if i % 500 == 0:
            p.poll(0)
    p.flush(60)
    assert not errors, errors[:3]
    return offsets


def latest_view(bootstrap, topic):
    got = kit.consume_confluent(bootstrap, topic, 1)[0]
    return [(m.offset(), m.key(), m.value()) for m in got]


def test_compaction_keeps_latest_value_per_key(broker_factory):
    b = broker_factory(set_args=CLEANER)
    topic = kit.unique_topic("compact")
    kit.create_topic(b.bootstrap, topic, 1, TOPIC_CONFIG)
    keys = [f"k{i}".encode() for i in range(200)]
    items = [(keys[i % 200], f"v{round}-{i}".encode() * 5) for round in range(10) for i in range(200)]
    offsets = produce(b.bootstrap, topic, items)
    # Tombstones for the first 20 keys, then filler so the tombstones leave the active segment.
    tomb = produce(b.bootstrap, topic, [(keys[i], None) for i in range(20)])
    produce(b.bootstrap, topic, [(b"filler", b"x" * 300) for _ in range(200)])

    latest = {}
    for (k, v), o in zip(items, offsets):
        latest[k] = (o, v)
    for i, o in enumerate(tomb):
        latest[keys[i]] = (o, None)

    def compacted():
        view = latest_view(b.bootstrap, topic)
        seen = {k for _, k, _ in view}
        return len(view) < len(items) // 2 and not (seen & set(keys[:20]))
    b.restart()  # a restart between writes and cleaning loses nothing
    wait_until(compacted, 60, "cleaning and tombstone removal")

    view = latest_view(b.bootstrap, topic)
    by_key = {}
    for o, k, v in view:
        if k == b"filler":
            continue
        assert k not in by_key, f"key {k} appears twice after compaction"
        by_key[k] = (o, v)
    want = {k: ov for k, ov in latest.items() if ov[1] is not None}
    assert by_key == want, "compacted view differs from the latest value per key"
    offs = [o for o, _, _ in view]
    assert offs == sorted(offs) and len(set(offs)) == len(offs)


def control_batches_with_records(partition_dir) -> int:
    """Transaction markers still holding their record, read from the .log files (v2 batch
    headers: attributes at 21, record count at 57). A cleaned segment being swapped in is
    counted too (.log.swap), so a swap in progress never makes markers look gone."""
    count = 0
    for path in sorted([*partition_dir.glob("*.log"), *partition_dir.glob("*.log.swap")]):
        data, pos = path.read_bytes(), 0
        while pos + 61 <= len(data):
            length = struct.unpack_from(">i", data, pos + 8)[0]
            attributes = struct.unpack_from(">h", data, pos + 21)[0]
            records = struct.unpack_from(">i", data, pos + 57)[0]
            if attributes & 0x20 and records > 0:
                count += 1
            pos += 12 + length
    return count


def test_compaction_removes_aborted_records_and_emptied_transactions_markers(broker_factory):
    """Transactions overwrite keys and are committed or aborted in turn, then plain writes
    overwrite half the keys: every aborted record and every transaction marker whose records
    are all gone leave (a marker delete.retention.ms after), the last transaction keeps its
    marker, and read_committed readers see the latest committed value of every key."""
    from confluent_kafka import Producer as TxnProducer
    txn_config = {"transaction.state.log.replication.factor": "1",
                  "transaction.state.log.min.isr": "1",
                  "transaction.state.log.num.partitions": "2", "offsets.topic.num.partitions": "2"}
    b = broker_factory(set_args={**CLEANER, **txn_config})
    topic = kit.unique_topic("compact-txn")
    kit.create_topic(b.bootstrap, topic, 1, TOPIC_CONFIG)
    p = TxnProducer({"bootstrap.servers": b.bootstrap, "transactional.id": "compact-txn",
                     "linger.ms": 5})
    p.init_transactions(30)
    keys = [f"k{i}".encode() for i in range(20)]
    latest = {}
    for t in range(8):
        p.begin_transaction()
        for k in keys:
            p.produce(topic, key=k, value=f"txn{t}-{k.decode()}".encode(), partition=0)
        if t % 2 == 1 and t != 7:
            p.abort_transaction(30)
        else:
            p.commit_transaction(30)
            latest.update({k: f"txn{t}-{k.decode()}".encode() for k in keys})
    p.flush(30)
    plain = {k: f"plain-{k.decode()}".encode() for k in keys[:10]}
    produce(b.bootstrap, topic, list(plain.items()))
    latest.update(plain)

    # Plain writes keep the log dirty, so passes go on (a marker leaves two passes after its
    # records: one finds its transaction empty and sets the horizon).
    stop = threading.Event()

    def keep_dirty():
        while not stop.wait(0.3):
            produce(b.bootstrap, topic, [(b"dirt", b"x")])
    writer = threading.Thread(target=keep_dirty, daemon=True)
    writer.start()
    seen = {}

    def markers_gone():
        seen["markers"] = control_batches_with_records(b.partition_dir(topic, 0))
        return seen["markers"] == 1
    try:
        wait_until(markers_gone, 60, "one marker left", lambda: seen.get("markers"))
    finally:
        stop.set()
        writer.join(30)
    view = kit.consume_confluent(b.bootstrap, topic, 1,
                                 extra={"isolation.level": "read_committed"})[0]
    got = {m.key(): m.value() for m in view if m.key() != b"dirt"}
    assert got == latest
    everything = kit.consume_confluent(b.bootstrap, topic, 1,
                                       extra={"isolation.level": "read_uncommitted"})[0]
    aborted = [m.value() for m in everything if m.value().startswith((b"txn1-", b"txn3-", b"txn5-"))]
    assert not aborted, aborted[:3]


def test_keyless_record_rejected_on_compacted_topic(broker):
    topic = kit.unique_topic("compact-nokey")
    kit.create_topic(broker.bootstrap, topic, 1, {"cleanup.policy": "compact"})
    p = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all", "retries": 0})
    errors = []
    p.produce(topic, value=b"no key", on_delivery=lambda err, msg: errors.append(err))
    p.flush(30)
    assert errors and errors[0] is not None and errors[0].code() == 87, errors  # INVALID_RECORD
