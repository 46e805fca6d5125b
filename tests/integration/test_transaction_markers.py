"""Transactions on a partition, driven by hand: transactional batches produced raw under a
fixed producer id, then ended by Kafka's own kafka-transactions tool (TransactionsCommand),
whose `abort` sends WriteTxnMarkers to the partition leader and whose `describe-producers`
sends DescribeProducers and whose `find-hanging` finds it hanging first. Checked: the last stable offset holds read_committed readers at
the open transaction (ListOffsets, librdkafka's consumer), the aborted records never reach
a read_committed consumer and do reach a read_uncommitted one, and kafka-dump-log reads
the .txnindex entry Strata wrote for the abort. Also the coordinator's side of the tool:
`list` (ListTransactions) and `describe` (DescribeTransactions) against librdkafka's
transactional producers.
"""
from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.request

import pytest

import kit
import rawkafka as raw

TXN_CMD = "org.apache.kafka.tools.TransactionsCommand"
DUMP_LOG = "kafka.tools.DumpLogSegments"
PID = 4242


@pytest.fixture(scope="module", autouse=True)
def need_jars():
    if not list(kit.KAFKA_LIB.glob("kafka-tools-*.jar")):
        pytest.fail(f"Kafka tool jars missing in {kit.KAFKA_LIB}: run scripts/install-test-deps.sh")


def tool(main_class: str, *args: str, timeout: float = 120) -> str:
    r = subprocess.run(["java", "-Xmx512m", "-cp", f"{kit.KAFKA_LIB}/*", main_class, *args],
                       capture_output=True, text=True, timeout=timeout, errors="replace")
    out = r.stdout + r.stderr
    assert r.returncode == 0, f"{main_class} {' '.join(args)} -> {r.returncode}:\n{out[-6000:]}"
    assert not re.search(r"\bERROR\b|Exception", r.stderr), r.stderr[-6000:]
    return r.stdout


def produce_raw(conn: raw.Conn, topic: str, batch: bytes, cid: int,
                transactional_id: str | None = None) -> tuple[int, int]:
    """Produces one batch with acks=all; (error code, base offset)."""
    body = raw.produce_body(7, topic, 0, batch, acks=-1, transactional_id=transactional_id)
    conn.send(raw.request(raw.API_PRODUCE, 7, cid, body))
    got_cid, body = conn.recv_frame()
    assert got_cid == cid
    [(_, _, code, base)] = raw.parse_produce_response(7, body)
    return code, base


def produce(conn: raw.Conn, topic: str, batch: bytes, cid: int,
            transactional_id: str | None = None) -> int:
    code, base = produce_raw(conn, topic, batch, cid, transactional_id)
    assert code == 0, f"produce error {code}"
    return base


def latest(conn: raw.Conn, topic: str, isolation_level: int, cid: int) -> int:
    conn.send(raw.request(2, 2, cid, raw.list_offsets_body(topic, 0, -1, isolation_level)))
    got_cid, body = conn.recv_frame()
    assert got_cid == cid
    [(_, _, code, offset)] = raw.parse_list_offsets_v2(body)
    assert code == 0, f"list offsets error {code}"
    return offset


def consume_offsets(bootstrap: str, topic: str, isolation: str, until: int,
                    timeout: float = 60) -> list[int]:
    """Offsets a consumer with `isolation` reads from the start until it has read `until`."""
    from confluent_kafka import OFFSET_BEGINNING, TopicPartition
    c = kit.consumer_confluent(bootstrap, {"isolation.level": isolation})
    try:
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        seen: list[int] = []
        deadline = time.time() + timeout
        while until not in seen:
            assert time.time() < deadline, f"{isolation} consumer read {seen}, not {until}"
            for m in c.consume(num_messages=100, timeout=0.5):
                assert m.error() is None, f"consume error: {m.error()}"
                seen.append(m.offset())
        return seen
    finally:
        c.close()


@pytest.fixture
def broker(broker_factory):
    # Kafka's leader would ask the transaction coordinator whether the raw
    # transactional produce belongs to an ongoing transaction (KIP-890), and
    # no coordinator knows this hand-made one.
    if kit.against_kafka():
        return broker_factory(**{"transaction.partition.verification.enable": "false"})
    from ports import free_port
    b = broker_factory(config={"strata.admin.listener": f"127.0.0.1:{free_port()}",
                               "transaction.partition.verification.enable": "false"})
    b.admin = b.config["strata.admin.listener"]
    return b


def admin_partition(b, topic: str) -> dict | None:
    """Strata's admin API view of partition 0 of `topic` (None against Kafka)."""
    if kit.against_kafka():
        return None
    topics = json.loads(urllib.request.urlopen(f"http://{b.admin}/v1/topics", timeout=10).read())
    [t] = [t for t in topics if t["name"] == topic]
    return t["partitions"][0]


def lso_lag_metric(b, topic: str) -> float | None:
    text = urllib.request.urlopen(f"http://{b.admin}/metrics", timeout=10).read().decode()
    for line in text.splitlines():
        if line.startswith("strata_last_stable_offset_lag{") and f'topic="{topic}"' in line:
            return float(line.rsplit(" ", 1)[1])
    return None


def test_an_aborted_transaction_never_reaches_a_read_committed_consumer(broker):
    topic = kit.unique_topic("txn-abort")
    kit.create_topic(broker.bootstrap, topic, 1)
    recs = [(b"k%d" % i, b"aborted-%d" % i, []) for i in range(3)]
    with raw.Conn(broker.bootstrap) as conn:
        txn = raw.record_batch(recs, kit.BASE_TS, PID, 0, 0, transactional=True)
        # As Kafka: transactional records need the producer's transactional id.
        assert produce_raw(conn, topic, txn, 9)[0] == 53  # TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        assert produce(conn, topic, txn, 1, "it-txn") == 0  # offsets 0-2, transaction open
        plain = raw.record_batch([(b"p0", b"plain-0", []), (b"p1", b"plain-1", [])], kit.BASE_TS)
        assert produce(conn, topic, plain, 2) == 3  # offsets 3-4
        assert latest(conn, topic, 0, 3) == 5
        assert latest(conn, topic, 1, 4) == 0  # held at the open transaction
        if not kit.against_kafka():
            p = admin_partition(broker, topic)
            assert p["last_stable_offset"] == 0 and p["high_watermark"] == 5, p
            assert p["open_transactions"] == [
                {"producer_id": PID, "producer_epoch": 0, "first_offset": 0}], p
            assert lso_lag_metric(broker, topic) == 5

        out = tool(TXN_CMD, "--bootstrap-server", broker.bootstrap, "describe-producers",
                   "--topic", topic, "--partition", "0")
        row = next((line for line in out.splitlines() if line.split()[:1] == [str(PID)]), None)
        assert row is not None, out
        assert row.split()[-1] == "0", f"open transaction should start at 0:\n{out}"

        # No coordinator knows this producer and its records are old (BASE_TS): hanging.
        hanging = tool_rows(tool(TXN_CMD, "--bootstrap-server", broker.bootstrap, "find-hanging",
                                 "--topic", topic, "--partition", "0"))
        assert [(r["Topic"], r["Partition"], r["ProducerId"], r["StartOffset"])
                for r in hanging] == [(topic, "0", str(PID), "0")], hanging
        tool(TXN_CMD, "--bootstrap-server", broker.bootstrap, "abort", "--topic", topic,
             "--partition", "0", "--producer-id", str(PID), "--producer-epoch", "0",
             "--coordinator-epoch", "0")
        assert latest(conn, topic, 1, 5) == 6  # the marker at 5 is committed
        if not kit.against_kafka():
            p = admin_partition(broker, topic)
            assert p["last_stable_offset"] == 6 and p["open_transactions"] == [], p
            assert lso_lag_metric(broker, topic) is None
        after = raw.record_batch([(b"p2", b"plain-2", [])], kit.BASE_TS)
        assert produce(conn, topic, after, 6) == 6

    assert consume_offsets(broker.bootstrap, topic, "read_committed", 6) == [3, 4, 6]
    assert consume_offsets(broker.bootstrap, topic, "read_uncommitted", 6) == [0, 1, 2, 3, 4, 6]
    out = tool(TXN_CMD, "--bootstrap-server", broker.bootstrap, "describe-producers",
               "--topic", topic, "--partition", "0")
    row = next(line for line in out.splitlines() if line.split()[:1] == [str(PID)])
    assert row.split()[-1] == "None", f"no transaction should be open:\n{out}"
    assert tool_rows(tool(TXN_CMD, "--bootstrap-server", broker.bootstrap, "find-hanging",
                          "--topic", topic, "--partition", "0")) == []

    # In the segment holding the marker (Kafka rolls on record timestamps, so its is not
    # always the first).
    indexes = sorted(broker.partition_dir(topic, 0).glob("*.txnindex"))
    assert indexes, "no .txnindex written"
    dumped = tool(DUMP_LOG, "--files", ",".join(map(str, indexes)))
    assert re.search(rf"producerId:\s*{PID}\b.*firstOffset:\s*0\b.*lastOffset:\s*5\b.*"
                     rf"lastStableOffset:\s*6\b", dumped), dumped


def earliest_local(bootstrap: str, topic: str) -> int:
    """ListOffsets v4 with timestamp -4: the partition's local log start."""
    w = raw.Writer().i32(-1).i8(0)
    w.array([0], lambda w2, _: w2.string(topic).array(
        [0], lambda w3, _: w3.i32(0).i32(-1).i64(-4)))
    with raw.Conn(bootstrap) as c:
        c.send(raw.request(2, 4, 7, bytes(w.buf)))
        _, body = c.recv_frame()
    r = raw.Reader(body)
    r.i32()
    r.array_len()
    r.string()
    r.array_len()
    _p, err, _ts, offset, _epoch = r.i32(), r.i16(), r.i64(), r.i64(), r.i32()
    assert err == 0, f"ListOffsets(-4): error {err}"
    return offset


@pytest.mark.skipif(kit.against_kafka(), reason="Strata's local remote storage")
def test_an_aborted_transaction_in_remote_storage_stays_invisible(broker_factory, tmp_path):
    remote = tmp_path / "remote"
    remote.mkdir()
    b = broker_factory(config={
        "remote.log.storage.system.enable": "true",
        "strata.remote.storage.uri": f"file://{remote}",
        "remote.log.manager.task.interval.ms": "300",
        "log.retention.check.interval.ms": "300",
        # Raw transactional batches of a producer no coordinator knows.
        "transaction.partition.verification.enable": "false",
    })
    topic = kit.unique_topic("txn-tiered")
    segment = 1024 * 1024
    kit.create_topic(b.bootstrap, topic, 1, config={
        "remote.storage.enable": "true", "segment.bytes": str(segment),
        "local.retention.bytes": str(segment), "retention.ms": "-1"})
    recs = [(b"k%d" % i, b"aborted-%d" % i, []) for i in range(3)]
    with raw.Conn(b.bootstrap) as conn:
        txn = raw.record_batch(recs, kit.BASE_TS, PID, 0, 0, transactional=True)
        assert produce(conn, topic, txn, 1, "it-txn") == 0
    tool(TXN_CMD, "--bootstrap-server", b.bootstrap, "abort", "--topic", topic, "--partition", "0",
         "--producer-id", str(PID), "--producer-epoch", "0", "--coordinator-epoch", "0")
    plain = kit.make_records(2000, 1, seed=890, tag="after", value_size=2000)
    kit.produce_confluent(b.bootstrap, topic, plain)
    last = 3 + len(plain)  # aborted 0-2, the marker at 3, then the plain records
    kit.wait_until(lambda: earliest_local(b.bootstrap, topic) > 3, 60,
                   "the aborted transaction's segment uploaded and deleted locally")

    committed = consume_offsets(b.bootstrap, topic, "read_committed", last)
    assert committed[:2] == [4, 5] and len(committed) == len(plain), committed[:10]
    uncommitted = consume_offsets(b.bootstrap, topic, "read_uncommitted", last)
    assert uncommitted[:4] == [0, 1, 2, 4], uncommitted[:10]


def tool_rows(out: str) -> list[dict[str, str]]:
    """A TransactionsCommand table (a tab-separated header line, then a row per line) as
    dicts from column to value."""
    lines = [line for line in out.splitlines() if "\t" in line]
    assert lines, out
    header = [c.strip() for c in lines[0].split("\t")]
    return [dict(zip(header, (c.strip() for c in line.split("\t")))) for line in lines[1:]]


def test_kafka_transactions_lists_and_describes_the_coordinators_transactions(broker_factory):
    """kafka-transactions list (ListTransactions, every filter) and describe
    (DescribeTransactions) against librdkafka producers: one transaction committed, one
    left open."""
    from confluent_kafka import Producer
    b = broker_factory(config={"transaction.state.log.num.partitions": "4"})
    topic = kit.unique_topic("txn-list")
    kit.create_topic(b.bootstrap, topic, 2)
    prefix = kit.unique_topic("txn-tool")
    committed_id, open_id = f"{prefix}-committed", f"{prefix}-open"

    done = Producer({"bootstrap.servers": b.bootstrap, "transactional.id": committed_id})
    done.init_transactions(30)
    done.begin_transaction()
    done.produce(topic, key=b"k", value=b"committed", partition=0)
    done.commit_transaction(30)
    producer = Producer({"bootstrap.servers": b.bootstrap, "transactional.id": open_id,
                         "transaction.timeout.ms": 300000})
    producer.init_transactions(30)
    producer.begin_transaction()
    for p in (0, 1):
        producer.produce(topic, key=b"k", value=b"open-%d" % p, partition=p)
    assert producer.flush(30) == 0
    try:
        def listed(*args: str) -> dict[str, str]:
            out = tool(TXN_CMD, "--bootstrap-server", b.bootstrap, "list", *args)
            return {r["TransactionalId"]: r["TransactionState"] for r in tool_rows(out)}

        # The commit's markers may still be on their way.
        want = {committed_id: "CompleteCommit", open_id: "Ongoing"}
        seen: list = [None]

        def listed_as_wanted() -> bool:
            seen[0] = listed()
            return seen[0] == want

        kit.wait_until(listed_as_wanted, 30, "both transactions listed", lambda: seen[0])
        assert listed("--transactional-id-pattern", f"{prefix}-o.*") == {open_id: "Ongoing"}
        assert listed("--transactional-id-pattern", f"{prefix}-o") == {}  # the whole id
        assert listed("--duration-filter", "3600000") == {}

        [row] = tool_rows(tool(TXN_CMD, "--bootstrap-server", b.bootstrap, "describe",
                               "--transactional-id", open_id))
        assert row["TransactionalId"] == open_id and row["TransactionState"] == "Ongoing", row
        assert row["TransactionTimeoutMs"] == "300000", row
        assert int(row["CurrentTransactionStartTimeMs"]) > 0, row
        assert row["ProducerEpoch"] == "0", row
        assert sorted(row["TopicPartitions"].split(",")) == [f"{topic}-0", f"{topic}-1"], row
        [row] = tool_rows(tool(TXN_CMD, "--bootstrap-server", b.bootstrap, "describe",
                               "--transactional-id", committed_id))
        assert row["TransactionState"] == "CompleteCommit" and row["TopicPartitions"] == "", row
    finally:
        producer.abort_transaction(30)
