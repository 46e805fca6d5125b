"""Kafka transactions end to end with real transactional producers: Kafka's Java client
(java/.../TxnProducer.java) and librdkafka (confluent-kafka), against a broker whose
transaction coordinator serves InitProducerId with a transactional.id, AddPartitionsToTxn,
EndTxn and writes the markers (WriteTxnMarkers) to the partitions.

What is checked, on topics A (2 partitions) and B (1): transactions committed and aborted
in turn are read exactly by a read_committed consumer (the committed values, once each, none
of the aborted) and wholly by a read_uncommitted one, every record at the offset its send
order gives it, with one control marker per transaction and partition after its records, so
each partition ends (ListOffsets, both isolation levels) at records + markers; a producer
fenced by a second one with the same transactional.id (a zombie) fails, its open transaction is
aborted and only the second's records are committed; a transaction left open past its
transaction.timeout.ms is aborted by the coordinator (the last stable offset reaches the end,
read_committed readers get past it) and the hung producer's late commit fails. With Strata,
the same on three brokers (RF=3 topics, min.insync.replicas=2, __transaction_state RF=3).
"""
from __future__ import annotations

import queue
import subprocess
import threading
import time
import urllib.request
import zipfile
from collections import Counter

import pytest

import conftest
import kit

JAR = kit.JAVA_DIR / "target" / "strata-it-java.jar"
TXN_TIMEOUT_MS = 3000  # the hung producer's transaction.timeout.ms
CLEANUP_INTERVAL_MS = 500  # how often the coordinator looks for timed-out transactions
# Writing PrepareAbort to __transaction_state and a marker to each partition, on a busy
# two-core machine.
MARKER_SLACK_S = 10
# A transaction open past its timeout is aborted within one cleanup pass plus the writes.
ABORT_WITHIN = (TXN_TIMEOUT_MS + CLEANUP_INTERVAL_MS) / 1000 + MARKER_SLACK_S
TXN_CONFIG = {
    # One broker: Kafka would refuse transactions with its defaults (RF 3, min ISR 2).
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "4",  # fast to create and load
    "offsets.topic.num.partitions": "4",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": str(CLEANUP_INTERVAL_MS),
}
TXNS, RECORDS, ABORT_EVERY = 6, 20, 3
# How a fenced producer's send or commit fails in kafka-clients 4.1 (EndTxn answered
# PRODUCER_FENCED, or Produce answered INVALID_PRODUCER_EPOCH first; Kafka 4.1 gives the
# latter to the zombie here with either transaction.version).
FENCED = {"ProducerFencedException", "InvalidProducerEpochException"}
# How the commit of a transaction the coordinator aborted on timeout fails. Kafka 4.1:
# transaction.version 1 ProducerFencedException (the abort bumped the epoch), 2
# InvalidTxnStateException (EndTxn v5 at the previous epoch, the transaction already
# CompleteAbort).
LATE_COMMIT = {"tv1": FENCED, "tv2": {"InvalidTxnStateException"}}


@pytest.fixture(scope="module", autouse=True)
def java_program_built():
    if not JAR.exists() or "io/strata/it/TxnProducer.class" not in zipfile.ZipFile(JAR).namelist():
        pytest.fail(f"{JAR} missing or without TxnProducer: run scripts/install-test-deps.sh")


# The module runs twice: with transaction.version 2 (a new cluster's default: KIP-890 part 2,
# the epoch bumped at every transaction end, partitions added by their leaders) and at 1, the
# classic protocol (Kafka downgraded by kafka-features, Strata by strata.transaction.version).
TXN_VERSIONS = ["tv2", "tv1"]


@pytest.fixture(scope="module", params=TXN_VERSIONS)
def tbroker(request, tmp_path_factory):
    """One broker for the module with a small __transaction_state and a fast timeout check."""
    b = make_txn_broker(tmp_path_factory, TXN_CONFIG, request.param)
    yield b
    b.stop()
    conftest._fail_on_sanitizer_reports([b])
    conftest._fail_on_unclean_stops([b])


def make_txn_broker(tmp_path_factory, config: dict, txn_version: str):
    """A broker at transaction version `txn_version` ("tv2" or "tv1"): Strata's by
    strata.transaction.version, Kafka's downgraded by kafka-features for tv1."""
    config = dict(config)
    if not kit.against_kafka():
        from ports import free_port
        config["strata.transaction.version"] = txn_version[-1]
        config["strata.admin.listener"] = f"127.0.0.1:{free_port()}"
    b = conftest._make_broker(tmp_path_factory.mktemp("broker"), config)
    b.admin = config.get("strata.admin.listener")
    b.txn_version = txn_version
    if txn_version == "tv1" and kit.against_kafka():
        set_kafka_transaction_version(b, 1)
    return b


def set_kafka_transaction_version(b, level: int) -> None:
    """Kafka's kafka-features downgrade, then waits until the broker describes that level
    (clients read it from ApiVersions)."""
    tool = ["java", "-Xmx256m", "-cp", f"{kit.KAFKA_LIB}/*",
            "org.apache.kafka.tools.FeatureCommand", "--bootstrap-server", b.bootstrap]
    r = subprocess.run(tool + ["downgrade", "--feature", f"transaction.version={level}"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr

    def described():
        out = subprocess.run(tool + ["describe"], capture_output=True, text=True,
                             timeout=120).stdout
        return [line for line in out.splitlines() if "transaction.version" in line]
    kit.wait_until(lambda: f"FinalizedVersionLevel: {level}" in "".join(described()), 30,
                   f"transaction.version finalized at {level}", described)


# ---- helpers ---------------------------------------------------------------------------

def java_cmd(bootstrap: str, tid: str, topics: str, mode: str = "txns", **opts) -> list[str]:
    cmd = ["java", "-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
           "-cp", kit.JAVA_CLASSPATH, "io.strata.it.TxnProducer", "--bootstrap", bootstrap,
           "--transactional-id", tid, "--topics", topics, "--mode", mode]
    for k, v in opts.items():
        cmd += [f"--{k.replace('_', '-')}", str(v)]
    return cmd


def run_java(*args, **opts) -> list[str]:
    """Runs TxnProducer to the end; its stdout lines (it must exit 0)."""
    r = subprocess.run(java_cmd(*args, **opts), capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, f"TxnProducer exited {r.returncode}:\n{r.stdout}\n{r.stderr[-6000:]}"
    return r.stdout.split("\n")[:-1]


def new_topics(bootstrap: str, **partitions: int) -> list[tuple[str, int]]:
    """Creates fresh topics (name prefix -> partition count); every partition, in order."""
    tps = []
    for prefix, n in partitions.items():
        topic = kit.unique_topic(f"txn-{prefix}")
        kit.create_topic(bootstrap, topic, n)
        tps += [(topic, p) for p in range(n)]
    return tps


def spec(tps: list[tuple[str, int]]) -> str:
    """TxnProducer's --topics for the partitions `tps` (every partition of their topics)."""
    counts: dict[str, int] = {}
    for t, _ in tps:
        counts[t] = counts.get(t, 0) + 1
    return ",".join(f"{t}:{n}" for t, n in counts.items())


class Layout:
    """What each partition must hold after transactions written one after another: record i of
    a transaction goes to partition i mod len(tps) (as both producers here send), in send order,
    and each transaction's marker follows its records in every partition it touched (the next
    transaction cannot add a partition before the previous one's markers are written)."""

    def __init__(self, tps: list[tuple[str, int]]):
        self.tps = tps
        self.records: dict[tuple[str, int], list[tuple[int, str, bool]]] = {tp: [] for tp in tps}
        self.end = {tp: 0 for tp in tps}

    def txn(self, prefix: str, n: int, committed: bool, ended: bool = True) -> list:
        """Values prefix + "r<i>"; without `ended`, add the markers later (`marker`).
        Returns the partitions the transaction touched."""
        touched = list(dict.fromkeys(self.tps[i % len(self.tps)] for i in range(n)))
        for i in range(n):
            tp = self.tps[i % len(self.tps)]
            self.records[tp].append((self.end[tp], f"{prefix}r{i}", committed))
            self.end[tp] += 1
        for tp in touched if ended else []:
            self.marker(tp)
        return touched

    def marker(self, tp: tuple[str, int]) -> None:
        self.end[tp] += 1  # a control record: takes an offset, never delivered

    def plain(self, tp: tuple[str, int], value: str) -> None:
        self.records[tp].append((self.end[tp], value, True))
        self.end[tp] += 1

    def visible(self, committed_only: bool) -> dict[tuple[str, int], list[tuple[int, str]]]:
        return {tp: [(o, v) for o, v, c in recs if c or not committed_only]
                for tp, recs in self.records.items()}


def list_offsets(bootstrap: str, tps, committed: bool) -> dict[tuple[str, int], int]:
    """ListOffsets latest: the high watermark, or with read_committed the last stable offset."""
    from confluent_kafka import IsolationLevel, TopicPartition
    from confluent_kafka.admin import OffsetSpec
    level = IsolationLevel.READ_COMMITTED if committed else IsolationLevel.READ_UNCOMMITTED
    a = kit.admin(bootstrap)  # kept alive until the answers are in
    fs = a.list_offsets({TopicPartition(t, p): OffsetSpec.latest() for t, p in tps},
                        isolation_level=level, request_timeout=30)
    return {(tp.topic, tp.partition): f.result(timeout=60).offset for tp, f in fs.items()}


def read(bootstrap: str, tps, isolation: str, ends: dict, timeout: float = 60):
    """(offset, value) of every record an assign()ed consumer with `isolation` reads from the
    start of each partition until its position reaches ends[tp] (positions move past control
    markers, which are never delivered)."""
    from confluent_kafka import OFFSET_BEGINNING, TopicPartition
    c = kit.consumer_confluent(bootstrap, {"isolation.level": isolation})
    try:
        c.assign([TopicPartition(t, p, OFFSET_BEGINNING) for t, p in tps])
        got: dict[tuple[str, int], list[tuple[int, str]]] = {tp: [] for tp in tps}

        def positions():
            return {(tp.topic, tp.partition): tp.offset
                    for tp in c.position([TopicPartition(t, p) for t, p in tps])}

        deadline = time.time() + timeout
        while any(positions()[tp] < ends[tp] for tp in tps):
            assert time.time() < deadline, (
                f"{isolation} consumer at {positions()}, not at the ends {ends}; read {got}")
            for m in c.consume(num_messages=500, timeout=0.5):
                assert m.error() is None, f"consume error: {m.error()}"
                got[(m.topic(), m.partition())].append((m.offset(), m.value().decode()))
        # Nothing may follow the ends (a marker or record past them would be a bug).
        extra = c.consume(num_messages=500, timeout=1)
        assert not [m for m in extra if m.error() is None], [(m.topic(), m.offset()) for m in extra]
        return got
    finally:
        c.close()


def check_partitions(bootstrap: str, layout: Layout) -> None:
    """Both isolation levels: end offsets, and exactly the expected records at their offsets."""
    tps = layout.tps
    assert list_offsets(bootstrap, tps, committed=False) == layout.end, "high watermarks"
    assert list_offsets(bootstrap, tps, committed=True) == layout.end, "last stable offsets"
    committed = read(bootstrap, tps, "read_committed", layout.end)
    want = layout.visible(committed_only=True)
    # The multiset first: clearer when something aborted shows up or something is missing.
    values = Counter(v for recs in committed.values() for _, v in recs)
    want_values = Counter(v for recs in want.values() for _, v in recs)
    assert values == want_values, (f"read_committed: extra {values - want_values}, "
                                   f"missing {want_values - values}")
    assert committed == want, "read_committed offsets"
    uncommitted = read(bootstrap, tps, "read_uncommitted", layout.end)
    assert uncommitted == layout.visible(committed_only=False), "read_uncommitted"


class Lines:
    """The stdout lines of a running process, read by a thread (to wait with a deadline)."""

    def __init__(self, proc: subprocess.Popen):
        self.proc, self.q, self.seen = proc, queue.Queue(), []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.proc.stdout:
            self.q.put(line.rstrip("\n"))

    def wait_for(self, prefix: str, timeout: float) -> str:
        deadline = time.time() + timeout
        while True:
            try:
                line = self.q.get(timeout=max(0.0, min(0.5, deadline - time.time())))
                self.seen.append(line)
                if line.startswith(prefix):
                    return line
            except queue.Empty:
                if time.time() > deadline or self.proc.poll() is not None and self.q.empty():
                    raise AssertionError(f"no '{prefix}' line within {timeout}s; "
                                         f"exit {self.proc.poll()}, saw {self.seen}") from None


def committed_offsets(bootstrap: str, group: str) -> dict[tuple[str, int], int]:
    from confluent_kafka import ConsumerGroupTopicPartitions
    a = kit.admin(bootstrap)
    [f] = a.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)],
                                        request_timeout=30).values()
    return {(tp.topic, tp.partition): tp.offset for tp in f.result(timeout=60).topic_partitions}


# ---- tests -----------------------------------------------------------------------------

def test_java_transactions_committed_and_aborted(tbroker):
    """Also the offsets each transaction commits for a group (sendOffsetsToTransaction):
    only those of committed transactions count."""
    bs = tbroker.bootstrap
    tps = new_topics(bs, a=2, b=1)
    group = kit.unique_topic("txn-group")
    out = run_java(bs, kit.unique_topic("tid-java"), spec(tps), transactions=TXNS,
                   records=RECORDS, abort_every=ABORT_EVERY, group=group)
    aborted = {t for t in range(TXNS) if (t + 1) % ABORT_EVERY == 0}
    assert out == [f"{'ABORTED' if t in aborted else 'COMMITTED'} t{t}" for t in range(TXNS)]
    layout = Layout(tps)
    for t in range(TXNS):
        layout.txn(f"t{t}-", RECORDS, committed=t not in aborted)
    assert layout.end == {tps[0]: 48, tps[1]: 48, tps[2]: 42}  # 7/7/6 records + 1 marker, x6
    check_partitions(bs, layout)
    last_committed = max(t for t in range(TXNS) if t not in aborted)
    # Transaction t commits offset t+1 of the first partition. The last committed one ended
    # before the next began (its markers written, __consumer_offsets' included), and the
    # aborted offsets of the last are never served.
    assert committed_offsets(bs, group) == {tps[0]: last_committed + 1}


def test_librdkafka_transactions_committed_and_aborted(tbroker):
    from confluent_kafka import Producer
    bs = tbroker.bootstrap
    tps = new_topics(bs, a=2, b=1)
    p = Producer({"bootstrap.servers": bs, "transactional.id": kit.unique_topic("tid-rdkafka"),
                  "linger.ms": 5})
    errors = []
    p.init_transactions(60)
    layout = Layout(tps)
    for t, commit in enumerate([True, False, True, False, True]):
        p.begin_transaction()
        for i in range(RECORDS):
            topic, part = tps[i % len(tps)]
            p.produce(topic, value=f"c{t}-r{i}", partition=part,
                      on_delivery=lambda err, msg: err and errors.append(err))
        # Everything acknowledged before the end: an abort purges what is not yet sent.
        assert p.flush(60) == 0 and not errors, errors
        if commit:
            p.commit_transaction(60)
        else:
            p.abort_transaction(60)
        layout.txn(f"c{t}-", RECORDS, committed=commit)
    check_partitions(bs, layout)


def marker_counters(b) -> tuple[float, float]:
    """Strata's (WriteTxnMarkers requests, transactions' markers sent) counters."""
    text = urllib.request.urlopen(f"http://{b.admin}/metrics", timeout=10).read().decode()
    values = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        values[name] = float(value) if value and not line.startswith("#") else 0.0
    return (values.get("strata_transaction_marker_requests_total", 0.0),
            values.get("strata_transaction_marker_sends_total", 0.0))


def test_concurrent_transactional_producers(tbroker):
    """Eight librdkafka producers commit and abort transactions over the same partitions at
    once: read_committed readers get exactly the committed records, the partitions end at a
    last stable offset equal to the high watermark, and (Strata) markers of transactions ending
    together share WriteTxnMarkers requests."""
    from confluent_kafka import Producer
    bs = tbroker.bootstrap
    tps = new_topics(bs, a=2, b=1)
    before = None if kit.against_kafka() else marker_counters(tbroker)
    producers, txns = 8, 10
    committed, errors = [], []
    # The producers end each round's transactions together, so their markers meet.
    together = threading.Barrier(producers, timeout=120)

    def run(n: int):
        try:
            p = Producer({"bootstrap.servers": bs, "linger.ms": 2,
                          "transactional.id": kit.unique_topic(f"tid-many-{n}")})
            p.init_transactions(60)
            for t in range(txns):
                p.begin_transaction()
                values = [f"p{n}-t{t}-r{i}" for i in range(len(tps))]
                for (topic, part), v in zip(tps, values):
                    p.produce(topic, value=v, partition=part)
                assert p.flush(60) == 0
                together.wait()
                if t % 3 == 2:
                    p.abort_transaction(60)
                else:
                    p.commit_transaction(60)
                    committed.extend(values)
        except Exception as e:  # reported below, with the others'
            errors.append(f"producer {n}: {e!r}")
            together.abort()
    threads = [threading.Thread(target=run, args=(n,)) for n in range(producers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors
    # The last markers may still be on their way (EndTxn answers once the decision is
    # logged): the partitions settle with the last stable offset at the high watermark.
    seen = {}

    def settled():
        seen["hw"] = list_offsets(bs, tps, committed=False)
        seen["lso"] = list_offsets(bs, tps, committed=True)
        return seen["lso"] == seen["hw"] and seen["hw"]
    ends = kit.wait_until(settled, ABORT_WITHIN, "last stable offsets at the high watermarks",
                          lambda: seen)
    got = read(bs, tps, "read_committed", ends)
    values = Counter(v for recs in got.values() for _, v in recs)
    assert values == Counter(committed), (f"extra {values - Counter(committed)}, "
                                          f"missing {Counter(committed) - values}")
    if before is not None:
        requests, sends = (a - b for a, b in zip(marker_counters(tbroker), before))
        print(f"WriteTxnMarkers: {sends:.0f} transactions' markers in {requests:.0f} requests")
        assert sends >= producers * txns, "every transaction's markers were sent"
        assert requests < sends, "no two transactions' markers ever shared a request"


class Copier:
    """A TxnCopier process (kafka-clients consume-transform-produce) and its output lines."""

    def __init__(self, bs: str, src: str, dst: str, group: str, stop_file, n: int):
        cmd = ["java", "-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
               "-cp", kit.JAVA_CLASSPATH, "io.strata.it.TxnCopier", "--bootstrap", bs,
               "--input", src, "--output", dst, "--group", group,
               "--transactional-id", kit.unique_topic(f"tid-copier-{n}"),
               "--stop-file", str(stop_file)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def assignments(self) -> list[str]:
        return [line.split(" ", 1)[1] if " " in line else "" for line in list(self.lines)
                if line.startswith("ASSIGNED")]

    def finish(self) -> list[str]:
        rc = self.proc.wait(120)
        self.reader.join(30)
        err = self.proc.stderr.read()
        assert rc == 0, f"TxnCopier exited {rc}:\n{self.lines}\n{err[-6000:]}"
        return self.lines


def test_consume_transform_produce_across_a_group_rebalance(tbroker, tmp_path):
    """Kafka's exactly-once loop with kafka-clients: a copier reads an input topic at
    read_committed in a group and copies each poll in a transaction that also commits the
    group's offsets (sendOffsetsToTransaction with the consumer's group metadata, KIP-447);
    a second copier joins the group mid-stream, so partitions move between them. The output
    holds every input record exactly once and the group's offsets reach the input's end."""
    from confluent_kafka import Producer
    bs = tbroker.bootstrap
    src = new_topics(bs, cin=4)[0][0]
    dst = new_topics(bs, cout=4)[0][0]
    group = kit.unique_topic("txn-copier")
    stop_file = tmp_path / "stop"
    fed = threading.Event()
    rebalanced = threading.Event()
    sent = [0]

    def feed():
        # A steady stream until the group has rebalanced, and as much again after it, so the
        # partitions move while records are being copied and both copiers copy some.
        # Paced by the copying (at most 400 records ahead of the group's offsets).
        p = Producer({"bootstrap.servers": bs, "enable.idempotence": True, "linger.ms": 5})
        after = None
        while after is None or sent[0] < after:
            for _ in range(100):
                p.produce(src, value=f"v{sent[0]}", partition=sent[0] % 4)
                sent[0] += 1
            p.flush(30)
            if after is None and rebalanced.is_set():
                after = sent[0] + 1000
            deadline = time.time() + 60
            while sum(committed_offsets(bs, group).values()) < sent[0] - 400:
                assert time.time() < deadline, "the copiers stopped copying"
                time.sleep(0.05)
        assert p.flush(60) == 0
        fed.set()
    feeder = threading.Thread(target=feed, daemon=True)
    first = Copier(bs, src, dst, group, stop_file, 1)
    copiers = [first]
    try:
        kit.wait_until(lambda: "0,1,2,3" in first.assignments(), 60,
                       "the first copier holds every partition", first.assignments)
        feeder.start()
        kit.wait_until(lambda: sum(list_offsets(bs, [(dst, p) for p in range(4)],
                                                committed=True).values()) > 200,
                       60, "the first copier copies", lambda: first.lines[-5:])
        second = Copier(bs, src, dst, group, stop_file, 2)
        copiers.append(second)
        # The group rebalances: each copier ends up with part of the partitions.
        kit.wait_until(lambda: second.assignments() and second.assignments()[-1] != ""
                       and first.assignments()[-1] not in ("", "0,1,2,3"), 90,
                       "the partitions shared after the second copier joined",
                       lambda: (first.assignments(), second.assignments()))
        rebalanced.set()
        assert fed.wait(120), "input not fed"
        ends = {(src, p): o for (_, p), o in
                list_offsets(bs, [(src, p) for p in range(4)], committed=False).items()}
        kit.wait_until(lambda: committed_offsets(bs, group) == ends, 120,
                       "the group's offsets at the input's end",
                       lambda: (committed_offsets(bs, group), ends))
    finally:
        stop_file.touch()
        outputs = [c.finish() for c in copiers]
    print("copiers:", [o[-1:] + [line for line in o if line.startswith("ABORTED")][:3]
                       for o in outputs])
    for o in outputs:
        assert o and o[-1].startswith("DONE committed=") and o[-1] != "DONE committed=0", o[-3:]
    total = sent[0]
    out_ends = list_offsets(bs, [(dst, p) for p in range(4)], committed=False)
    assert list_offsets(bs, [(dst, p) for p in range(4)], committed=True) == out_ends
    got = read(bs, [(dst, p) for p in range(4)], "read_committed", out_ends)
    values = Counter(v for recs in got.values() for _, v in recs)
    want = Counter(f"copy:v{i}" for i in range(total))
    assert values == want, (f"duplicated {[v for v, n in values.items() if n > 1][:5]}, "
                            f"missing {list((want - values).keys())[:5]}, "
                            f"extra {list((values - want).keys())[:5]}")


def test_zombie_producer_is_fenced(tbroker):
    bs = tbroker.bootstrap
    tps = new_topics(bs, a=2, b=1)
    r = subprocess.run(java_cmd(bs, kit.unique_topic("tid-zombie"), spec(tps), "zombie",
                                records=RECORDS), capture_output=True, text=True, timeout=180)
    out = r.stdout.split("\n")[:-1]
    assert r.returncode == 0 and len(out) == 2, f"exit {r.returncode}: {out}\n{r.stderr[-6000:]}"
    print("zombie producers:", out)
    fenced, committed = out
    assert fenced.split()[0] == "FENCED" and fenced.split()[1] in FENCED, out
    assert committed == "COMMITTED t0", out
    # The zombie's flushed transaction, aborted by the coordinator when the second producer
    # took over (its later send never written), then the second producer's transaction.
    layout = Layout(tps)
    layout.txn("zombie-", RECORDS, committed=False)
    layout.txn("t0-", RECORDS, committed=True)
    check_partitions(bs, layout)


def test_transaction_left_open_is_aborted_after_its_timeout(tbroker):
    """Plain records written after a hung producer's open transaction reach read_committed
    readers once the coordinator has aborted it, within its timeout plus a cleanup pass."""
    from confluent_kafka import Producer
    bs = tbroker.bootstrap
    tps = new_topics(bs, a=2)
    n, m = 10, 3  # the transaction's records, plain records per partition
    per = n // len(tps)
    end = {tp: per + m + 1 for tp in tps}  # and the abort marker
    plain = Producer({"bootstrap.servers": bs, "enable.idempotence": True})
    launched = time.time()
    proc = subprocess.Popen(java_cmd(bs, kit.unique_topic("tid-hang"), spec(tps), "hang",
                                     records=n, timeout_ms=TXN_TIMEOUT_MS),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    lines = Lines(proc)
    try:
        lines.wait_for("OPEN t0", 120)
        opened = time.time()
        for topic, part in tps:
            for i in range(m):
                plain.produce(topic, value=f"after-{part}-{i}", partition=part)
        assert plain.flush(60) == 0
        held = list_offsets(bs, tps, committed=True)
        # The transaction began after the launch: it cannot have timed out before this.
        in_time = time.time() - launched < TXN_TIMEOUT_MS / 1000
        print(f"open after {opened - launched:.1f}s, last stable offsets {held} "
              f"after {time.time() - launched:.1f}s")
        if in_time:
            assert held == {tp: 0 for tp in tps}, "last stable offsets not held by the open txn"

        kit.wait_until(lambda: list_offsets(bs, tps, committed=True) == end,
                       ABORT_WITHIN - (time.time() - opened),
                       f"last stable offsets at the ends {end} (the timed-out transaction "
                       f"aborted)",
                       lambda: {"read_committed": list_offsets(bs, tps, committed=True),
                                "read_uncommitted": list_offsets(bs, tps, committed=False)},
                       interval=0.2)
        # The abort marker follows the plain records, unless the coordinator aborted the
        # transaction before they were written (a slow machine; not when in_time).
        seen = read(bs, tps, "read_uncommitted", end)
        layout = Layout(tps)
        layout.txn("t0-", n, committed=False, ended=False)
        for tp in tps:
            first = next((o for o, v in seen[tp] if v.startswith("after-")), None)
            assert first is not None, f"{tp}: no plain record read: {seen[tp]}"
            marker_first = not in_time and first == per + 1
            if marker_first:
                layout.marker(tp)
            for i in range(m):
                layout.plain(tp, f"after-{tp[1]}-{i}")
            if not marker_first:
                layout.marker(tp)
        check_partitions(bs, layout)

        proc.stdin.write("commit\n")
        proc.stdin.flush()
        failed = lines.wait_for("COMMIT_FAILED", 60)
        assert failed.split()[1] in LATE_COMMIT[tbroker.txn_version], failed
        assert proc.wait(30) == 0, lines.seen
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        print("hung producer:", lines.seen, proc.stderr.read()[-3000:])


@pytest.fixture
def txn_cluster(tmp_path, broker_factory):
    """Three Strata brokers on one etcd with an RF=3 __transaction_state (test_cluster.py's
    start_cluster); stopped at teardown, after a failing test's report has their logs."""
    from test_cluster import start_cluster
    etcd, brokers = start_cluster(tmp_path, broker_factory, extra={
        "transaction.state.log.replication.factor": "3", "transaction.state.log.min.isr": "2",
        "transaction.state.log.num.partitions": "4"})
    yield brokers
    for b in brokers:
        b.stop()
    etcd.stop_all()


@pytest.mark.skipif(kit.against_kafka(), reason="Strata's cluster mode")
def test_transactions_on_three_brokers(txn_cluster):
    """RF=3 topics (min.insync.replicas=2) and an RF=3 __transaction_state of 4 partitions:
    the Java producer's transactions through broker 2, checked through broker 3, every
    replica's log identical (the markers replicated like any batch)."""
    from confluent_kafka.admin import NewTopic
    from test_replication import JOIN_WITHIN, wait_identical
    b1, b2, b3 = txn_cluster
    names = [kit.unique_topic("txn-a"), kit.unique_topic("txn-b")]
    a = kit.admin(b1.bootstrap)
    for name, n in zip(names, (2, 1)):
        a.create_topics([NewTopic(name, n, 3, config={"min.insync.replicas": "2"})]
                        )[name].result(timeout=30)
    tps = [(names[0], 0), (names[0], 1), (names[1], 0)]

    def isrs():
        md = a.list_topics(timeout=10).topics
        return {t: {p: sorted(pm.isrs) for p, pm in md[t].partitions.items()}
                for t in names if t in md}

    def full():
        got = isrs()
        return len(got) == 2 and all(i == [1, 2, 3] for t in got.values() for i in t.values())
    kit.wait_until(full, JOIN_WITHIN, "every replica in its ISR", isrs)

    out = run_java(b2.bootstrap, kit.unique_topic("tid-rf3"), spec(tps), transactions=TXNS,
                   records=RECORDS, abort_every=ABORT_EVERY)
    aborted = {t for t in range(TXNS) if (t + 1) % ABORT_EVERY == 0}
    assert out == [f"{'ABORTED' if t in aborted else 'COMMITTED'} t{t}" for t in range(TXNS)]
    state = a.list_topics("__transaction_state", timeout=10).topics["__transaction_state"]
    assert state.error is None and len(state.partitions) == 4, (
        f"__transaction_state: {state.partitions} (transaction.state.log.num.partitions=4)")
    assert all(len(pm.replicas) == 3 for pm in state.partitions.values()), (
        {p: pm.replicas for p, pm in state.partitions.items()})
    layout = Layout(tps)
    for t in range(TXNS):
        layout.txn(f"t{t}-", RECORDS, committed=t not in aborted)
    check_partitions(b3.bootstrap, layout)
    for name, n in zip(names, (2, 1)):
        wait_identical(txn_cluster, name, n)
