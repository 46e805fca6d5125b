"""Transactional nemesis: on three brokers (RF=3 topics, min.insync.replicas=2,
__transaction_state and __consumer_offsets RF=3), two librdkafka transactional clients run while
brokers are SIGKILLed and restarted, round after round, alternating between the leader of a
data partition and the transaction coordinator of the writer's transactional id:

* the writer commits transactions of one record per partition over 6 partitions, and aborts
  every fourth on purpose. Each transaction's outcome is what its producer was told: committed,
  aborted, or unknown (the producer failed fatally mid-commit and was replaced; a new
  producer's init_transactions fences the old one and settles its transaction);
* the copier reads an input topic, which an idempotent producer keeps feeding, at
  read_committed in a consumer group and copies each batch to an output topic in a transaction that also commits the group's offsets
  (send_offsets_to_transaction), rewinding to the committed offsets after any failed commit:
  Kafka's exactly-once consume-transform-produce.

Afterwards, reading at read_committed: each committed transaction's records are there exactly
once, no aborted one's, an unknown one's all or none, in commit order per partition; the
copier's output holds every acknowledged input record exactly once; no transaction is left hanging (the
last stable offset of every partition reaches its high watermark); every replica's log is
byte-identical.

STRATA_NEMESIS_ROUNDS sets the number of rounds: 10 here, 100 in scripts/soak.sh.
"""
from __future__ import annotations

import os
import threading
import time
from collections import Counter

import pytest
from confluent_kafka import (OFFSET_BEGINNING, Consumer, KafkaException, Producer,
                             TopicPartition)

import kit
from kit import wait_until
from test_cluster import OFFLINE_WITHIN, TTL_MS, leaders, start_cluster
from test_replication import JOIN_WITHIN, create_rf3, isr, wait_identical
from test_transactions import list_offsets, read
from test_transactions_cluster import txn_coordinator

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's cluster mode")

ROUNDS = int(os.environ.get("STRATA_NEMESIS_ROUNDS", "10"))
PARTITIONS = 6
ABORT_EVERY = 4
WRITER_ID = "nemesis-writer"
COPIER_ID = "nemesis-copier"
# A dead broker's leaderships move after its lease; a client's call then succeeds on retry.
CALL_WITHIN = TTL_MS / 1000 * 5 + 30
CLUSTER_CONFIG = {
    "transaction.state.log.num.partitions": "3",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "offsets.topic.num.partitions": "3",
    "offsets.topic.replication.factor": "3",
}


class StuckCall(Exception):
    """A client call that did not return within its deadline."""


def call_within(fn, seconds: float):
    """fn() on a daemon thread: its result, or StuckCall when it has not returned after
    `seconds`. librdkafka's send_offsets_to_transaction can block past its own timeout when
    the group coordinator's broker dropped out of the metadata while it was down
    (confluentinc/librdkafka#5456 and #5511); the caller then gives that producer up (a new
    one with the same transactional.id fences it) instead of waiting with it."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            box["error"] = e
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        raise StuckCall(f"{fn} still running after {seconds}s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


def end_transaction(p: Producer, commit: bool) -> str:
    """Commits (or aborts) the open transaction, retrying what librdkafka calls retriable;
    'committed' or 'aborted' as the coordinator confirmed, 'unknown' when the producer
    failed for good (the caller replaces it)."""
    deadline = time.time() + CALL_WITHIN
    while True:
        try:
            if commit:
                p.commit_transaction(30)
                return "committed"
            p.abort_transaction(30)
            return "aborted"
        except KafkaException as e:
            err = e.args[0]
            if commit and err.txn_requires_abort():
                commit = False  # the transaction failed: it is aborted, never committed
                continue
            if err.retriable() and time.time() < deadline:
                continue
            return "unknown"


class Client:
    """A thread with a transactional producer it replaces when the producer fails for good."""

    def __init__(self, bootstrap: str, transactional_id: str):
        self.bootstrap = bootstrap
        self.transactional_id = transactional_id
        self.errors: list[str] = []
        self.replaced = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._guarded, daemon=True)
        self.p = self._producer()

    def _producer(self) -> Producer:
        p = Producer({"bootstrap.servers": self.bootstrap,
                      "transactional.id": self.transactional_id,
                      "transaction.timeout.ms": 60000, "linger.ms": 2})
        deadline = time.time() + CALL_WITHIN
        while True:
            try:
                p.init_transactions(30)
                return p
            except KafkaException as e:
                if not e.args[0].retriable() or time.time() > deadline:
                    raise

    def replace(self) -> None:
        self.replaced += 1
        self.p = self._producer()  # fences the old one, settling its transaction

    def _guarded(self):
        try:
            self.run()
        except Exception as e:  # noqa: BLE001 - reported by the test
            self.errors.append(repr(e))

    def run(self):
        raise NotImplementedError


class Writer(Client):
    """Transaction n writes "w-n-i" to partition i, commits, or aborts when n % 4 == 3."""

    def __init__(self, bootstrap: str, topic: str):
        super().__init__(bootstrap, WRITER_ID)
        self.topic = topic
        self.outcomes: list[str] = []

    def committed(self) -> int:
        return self.outcomes.count("committed")

    def run(self):
        n = 0
        while not self.stop.is_set():
            try:
                self.p.begin_transaction()
                for i in range(PARTITIONS):
                    self.p.produce(self.topic, value=f"w-{n}-{i}".encode(), partition=i)
            except KafkaException as e:  # the producer failed under the previous call
                outcome = end_transaction(self.p, commit=False) \
                    if e.args[0].txn_requires_abort() else "unknown"
            else:
                outcome = end_transaction(self.p, commit=n % ABORT_EVERY != ABORT_EVERY - 1)
            self.outcomes.append(outcome)
            if outcome == "unknown":
                self.replace()
            n += 1


class Feeder:
    """An idempotent acks=all producer writing "in-k" round-robin from its own thread; what was
    acknowledged."""

    def __init__(self, bootstrap: str, topic: str):
        self.topic = topic
        self.p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                           "acks": "all", "linger.ms": 5, "message.timeout.ms": 300000})
        self.acked: list[bytes] = []
        self.errors: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _delivered(self, err, msg):
        if err is not None:
            self.errors.append(str(err))
        else:
            self.acked.append(msg.value())

    def _run(self):
        k = 0
        while not self.stop.is_set():
            self.p.produce(self.topic, b"in-%d" % k, partition=k % PARTITIONS,
                           on_delivery=self._delivered)
            k += 1
            self.p.poll(0.005)
        self.p.flush(300)


class Copier(Client):
    """Copies the input topic to the output exactly once, a poll's records per transaction."""

    def __init__(self, bootstrap: str, source: str, sink: str):
        super().__init__(bootstrap, COPIER_ID)
        self.source, self.sink = source, sink
        self.copied = 0  # records of committed transactions
        self.failed_commits = 0
        self.stuck_calls = 0
        self.c = Consumer({"bootstrap.servers": bootstrap, "group.id": "nemesis-copier",
                           "isolation.level": "read_committed", "enable.auto.commit": False,
                           "auto.offset.reset": "earliest", "session.timeout.ms": 45000})

    def run(self):
        self.c.subscribe([self.source])
        try:
            while not self.stop.is_set():
                msgs = [m for m in self.c.consume(100, 0.5) if m.error() is None]
                if msgs:
                    self._copy(msgs)
        finally:
            self.c.close()

    def _copy(self, msgs) -> None:
        try:
            self.p.begin_transaction()
            for m in msgs:
                self.p.produce(self.sink, key=m.key(), value=m.value(), partition=m.partition())
            positions = self.c.position(self.c.assignment())
            metadata = self.c.consumer_group_metadata()
            p = self.p
            call_within(lambda: p.send_offsets_to_transaction(positions, metadata, 30), 45)
            outcome = end_transaction(self.p, commit=True)
        except StuckCall:
            self.stuck_calls += 1
            outcome = "unknown"
        except KafkaException as e:
            outcome = end_transaction(self.p, commit=False) if e.args[0].txn_requires_abort() \
                else "unknown"
        if outcome == "committed":
            self.copied += len(msgs)
            return
        self.failed_commits += 1
        if outcome == "unknown":
            self.replace()
        self._rewind()

    def _rewind(self) -> None:
        """Back to the group's committed offsets: what the failed transaction read is read
        again (and, had it committed after all, its offsets say so)."""
        deadline = time.time() + CALL_WITHIN
        while True:
            try:
                for tp in self.c.committed(self.c.assignment(), 30):
                    self.c.seek(TopicPartition(tp.topic, tp.partition,
                                               tp.offset if tp.offset >= 0 else OFFSET_BEGINNING))
                return
            except KafkaException:
                if time.time() > deadline:
                    raise


def read_committed_values(bootstrap: str, topic: str) -> dict[int, list[bytes]]:
    """Each partition's values at read_committed, read to its last stable offset."""
    tps = [(topic, p) for p in range(PARTITIONS)]
    got = read(bootstrap, tps, "read_committed", list_offsets(bootstrap, tps, committed=True),
               timeout=120)
    return {p: [v.encode() for _, v in got[(topic, p)]] for p in range(PARTITIONS)}


def check_writer(w: Writer, read: dict[int, list[bytes]]) -> None:
    counts = Counter(v for vs in read.values() for v in vs)
    duplicated = [v for v, c in counts.items() if c > 1]
    assert duplicated == [], duplicated[:5]
    for n, outcome in enumerate(w.outcomes):
        present = [f"w-{n}-{i}".encode() in counts for i in range(PARTITIONS)]
        if outcome == "committed":
            assert all(present), f"committed transaction {n} lost records: {present}"
        elif outcome == "aborted":
            assert not any(present), f"aborted transaction {n} read: {present}"
        else:
            assert all(present) or not any(present), f"transaction {n} partly read: {present}"
    known = {f"w-{n}-{i}".encode() for n in range(len(w.outcomes)) for i in range(PARTITIONS)}
    assert set(counts) <= known, sorted(set(counts) - known)[:5]
    for p, vs in read.items():  # commit order per partition
        ns = [int(v.split(b"-")[1]) for v in vs]
        assert ns == sorted(ns) and all(v.endswith(b"-%d" % p) for v in vs), (p, vs[:20])


def test_transactions_hold_through_broker_kills(tmp_path, broker_factory):
    etcd, cluster = start_cluster(tmp_path, broker_factory, extra=CLUSTER_CONFIG)
    by_node = {int(b.config["node.id"]): b for b in cluster}
    out, source, sink = (kit.unique_topic(t) for t in ("txn-out", "txn-in", "txn-copy"))
    try:
        for t in (out, source, sink):
            create_rf3(cluster[0], t, PARTITIONS)
        bootstrap = ",".join(b.bootstrap for b in cluster)
        feeder = Feeder(bootstrap, source)
        def full(topic):
            return lambda: all(i == [1, 2, 3] for i in isr(live(cluster), topic).values())
        topics = [out, source, sink, "__transaction_state"]
        writer = Writer(bootstrap, out)
        copier = Copier(bootstrap, source, sink)
        for t in topics + ["__consumer_offsets"]:
            wait_until(full(t), JOIN_WITHIN, f"{t}: every ISR full",
                       lambda: isr(live(cluster), t))
        feeder.thread.start()
        writer.thread.start()
        copier.thread.start()
        try:
            wait_until(lambda: writer.committed() >= 5, CALL_WITHIN, "the writer under way",
                       lambda: (writer.outcomes, writer.errors))
            for round_ in range(ROUNDS):
                assert not writer.errors and not copier.errors, (writer.errors, copier.errors)
                if round_ % 2 == 0:
                    what = f"leader of {out}-{round_ % PARTITIONS}"
                    victim = leaders(live(cluster), out)[round_ % PARTITIONS][0]
                else:
                    what = f"transaction coordinator of {WRITER_ID}"
                    code, victim = txn_coordinator(live(cluster), WRITER_ID)
                    assert code == 0, f"FindCoordinator: error {code}"
                b = by_node[victim]
                before = writer.committed()
                b.kill9()
                others = [o for o in cluster if o is not b]
                wait_until(lambda: all(leader not in (-1, victim)
                                       for leader, _ in leaders(others[0], out).values()),
                           OFFLINE_WITHIN, f"round {round_}: broker {victim}'s leaderships moved",
                           lambda: leaders(others[0], out))
                wait_until(lambda: writer.committed() >= before + 3, CALL_WITHIN,
                           f"round {round_}: commits with broker {victim} down",
                           lambda: (writer.outcomes[-10:], writer.errors))
                b.start()
                for t in topics:
                    wait_until(full(t), JOIN_WITHIN + CALL_WITHIN,
                               f"round {round_}: broker {victim} back in {t}'s ISRs",
                               lambda: isr(live(cluster), t))
                print(f"round {round_}: SIGKILLed broker {victim} ({what}); "
                      f"{writer.committed()} committed, {copier.copied} copied")
            feeder.stop.set()
            feeder.thread.join(3 * CALL_WITHIN)
            wait_until(lambda: copier.copied >= len(feeder.acked) or copier.errors,
                       3 * CALL_WITHIN, "the copier done",
                       lambda: (copier.copied, len(feeder.acked), copier.errors))
        finally:
            feeder.stop.set()
            writer.stop.set()
            copier.stop.set()
            writer.thread.join(3 * CALL_WITHIN)
            copier.thread.join(3 * CALL_WITHIN)
        assert not writer.thread.is_alive() and not copier.thread.is_alive(), "clients stuck"
        assert writer.errors == [] and copier.errors == [], (writer.errors, copier.errors)
        assert not feeder.thread.is_alive() and feeder.errors == [], feeder.errors[:3]

        tally = Counter(writer.outcomes)
        print(f"txn nemesis: {ROUNDS} kills; writer {dict(tally)}, replaced "
              f"{writer.replaced}; copier {copier.copied} of {len(feeder.acked)} copied, "
              f"{copier.failed_commits} failed commits, replaced {copier.replaced} "
              f"({copier.stuck_calls} after a stuck send_offsets_to_transaction)")
        # No transaction hangs: every last stable offset reaches its high watermark.
        tps = [(t, p) for t in (out, sink) for p in range(PARTITIONS)]
        wait_until(lambda: list_offsets(bootstrap, tps, committed=True) ==
                   list_offsets(bootstrap, tps, committed=False), CALL_WITHIN,
                   "last stable offsets at the high watermarks",
                   lambda: (list_offsets(bootstrap, tps, committed=True),
                            list_offsets(bootstrap, tps, committed=False)))
        check_writer(writer, read_committed_values(bootstrap, out))
        copied = Counter(v for vs in read_committed_values(bootstrap, sink).values() for v in vs)
        fed = Counter(feeder.acked)
        assert copied == fed, (f"extra {list((copied - fed).items())[:5]}, "
                               f"missing {list(fed - copied)[:5]}")
        for t in (out, sink):
            wait_identical(cluster, t, PARTITIONS)
    finally:
        for b in cluster:
            b.stop()
        etcd.stop_all()


def live(cluster):
    return next(b for b in cluster if b.running)
