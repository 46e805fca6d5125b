"""Kafka Streams exactly-once (processing.guarantee=exactly_once_v2) on three brokers while
brokers, and the Streams JVM itself, are SIGKILLed and restarted.

`java/.../StreamsWordCount.java` (kafka-streams 4.1.1, two stream threads) counts an input
topic's records per key with groupByKey().count() into a changelog-backed store and writes each
count update to an output topic, with no record cache, so every input record gives exactly one
update. The cluster is test_cluster.py's `start_cluster` with test_nemesis_txn.py's
CLUSTER_CONFIG: __transaction_state and __consumer_offsets with 3 replicas, the input, output
and changelog topics with 3 replicas and min.insync.replicas=2.

An idempotent acks=all confluent-kafka producer writes words (50 keys, spread over the
input's partitions) at a steady rate while, in turn, each of these is SIGKILLed, the
processing is seen to go on without it (committed updates keep arriving), and it is
restarted and, for a broker, back in every ISR: the leader of an input partition, the leader
of an output partition, the transaction coordinator of a stream thread's transactional id
(`strata txn list` names the ids the Streams producers use), the group coordinator of the
application.id (which takes the transactions' offset commits), and the Streams JVM
(restarted with the same application.id and state directory, so its producers keep their
transactional ids and fence their predecessors, whose open transactions are aborted).

Then, reading at read_committed once Streams has closed cleanly: for every word the output
holds the updates "1", "2", ..., "n" in this order, each once, where n is the number of
times the producer had that word acknowledged (nothing counted twice after a failure, nothing
lost); no other key; the last value per key in the changelog is n too; what a read_committed
consumer saw live throughout is exactly what is read at the end (nothing it was shown was
taken back); the group's (application.id) committed offsets are the input's end offsets, and
the input holds exactly the acknowledged records.
"""
from __future__ import annotations

import json
import random
import struct
import subprocess
import threading
import time
from collections import Counter

import pytest
from confluent_kafka import (OFFSET_BEGINNING, ConsumerGroupTopicPartitions, KafkaError,
                             Producer, TopicPartition)

import kit
import rawkafka
from conftest import STRATA_BIN
from kit import wait_until
from test_cluster import OFFLINE_WITHIN, leaders, metadata, start_cluster
from test_nemesis_txn import CALL_WITHIN, CLUSTER_CONFIG
from test_replication import JOIN_WITHIN, create_rf3, isr
from test_transactions import list_offsets
from test_transactions_cluster import txn_coordinator

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's cluster mode")

PARTITIONS = 4
WORDS = [f"word{i:02d}" for i in range(50)]  # word i goes to input partition i % PARTITIONS
RATE = 200  # input records a second
PROGRESS = 150  # committed output updates that show processing goes on
STREAMS_WITHIN = 90  # a Streams JVM's start, rebalance and restore


class StreamsApp:
    """The StreamsWordCount JVM: started, SIGKILLed and restarted with the same arguments
    (application.id, state directory); its stdout lines are kept, its stderr appended to a
    file in the test's directory."""

    def __init__(self, workdir, bootstrap: str, app_id: str, source: str, sink: str):
        self.cmd = ["java", "-Xmx512m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                    "-cp", kit.JAVA_CLASSPATH, "io.strata.it.StreamsWordCount",
                    "--bootstrap", bootstrap, "--application-id", app_id,
                    "--input", source, "--output", sink,
                    "--state-dir", str(workdir / "streams-state"), "--threads", "2"]
        self.log_path = workdir / "streams.stderr.log"
        self.lines: list[str] = []  # every start's, in order
        self.started_at = 0  # index in lines where the current process's begin
        self.starts = 0
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.starts += 1
        self.started_at = len(self.lines)
        with open(self.log_path, "a") as log:
            log.write(f"==== start {self.starts} at {time.strftime('%H:%M:%S')}\n")
            log.flush()
            self.proc = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=log, text=True)
        threading.Thread(target=self._read, args=(self.proc,), daemon=True).start()

    def _read(self, proc) -> None:
        for line in proc.stdout:
            self.lines.append(line.strip())

    def mine(self) -> list[str]:
        return self.lines[self.started_at:]

    def wait_running(self) -> None:
        def running():
            assert self.proc.poll() is None, f"Streams exited with {self.proc.returncode}: {self.seen()}"
            assert "STATE ERROR" not in self.mine(), f"Streams failed: {self.seen()}"
            return "STATE RUNNING" in self.mine()
        wait_until(running, STREAMS_WITHIN, f"Streams start {self.starts} RUNNING", self.seen)

    def kill9(self) -> None:
        assert self.proc.poll() is None, f"Streams had exited: {self.seen()}"
        self.proc.kill()
        self.proc.wait()

    def close(self) -> int:
        """Closes stdin (streams.close()) and waits for the exit code."""
        self.proc.stdin.close()
        try:
            return self.proc.wait(90)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return -9

    def uncaught(self) -> list[str]:
        return [line for line in self.lines if line.startswith("UNCAUGHT")]

    def seen(self) -> str:
        err = self.log_path.read_text(errors="replace")[-6000:] if self.log_path.exists() else ""
        return f"stdout {self.lines[-20:]}\nstderr tail:\n{err}"


class Feeder:
    """An idempotent acks=all producer writing word keys at about RATE records a second from
    its own thread (value: the record's sequence number); the acknowledged keys."""

    def __init__(self, bootstrap: str, topic: str):
        self.topic = topic
        self.p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                           "acks": "all", "linger.ms": 5, "message.timeout.ms": 300000})
        self.acked: list[str] = []
        self.errors: list[str] = []
        self.sent = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _delivered(self, err, msg):
        if err is not None:
            self.errors.append(f"{msg.key()}: {err}")
        else:
            self.acked.append(msg.key().decode())

    def _run(self):
        rnd = random.Random(20240607)
        next_at = time.monotonic()
        while not self.stop.is_set():
            i = rnd.randrange(len(WORDS))
            self.p.produce(self.topic, key=WORDS[i], value=str(self.sent),
                           partition=i % PARTITIONS, on_delivery=self._delivered)
            self.sent += 1
            self.p.poll(0)
            next_at += 1 / RATE
            self.stop.wait(max(0.0, next_at - time.monotonic()))
        self.p.flush(300)


class LiveReader:
    """A read_committed assign() consumer of the output, polling from offset 0 throughout the
    kills: every (offset, key, value) it was shown, per partition."""

    def __init__(self, bootstrap: str, topic: str):
        self.c = kit.consumer_confluent(bootstrap, {"isolation.level": "read_committed",
                                                    "auto.offset.reset": "error"})
        self.c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
        self.got: dict[int, list[tuple[int, str, str]]] = {p: [] for p in range(PARTITIONS)}
        self.count = 0
        self.errors: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        try:
            while not self.stop.is_set():
                for m in self.c.consume(500, 0.2):
                    if m.error() is not None:
                        # Connection errors while a broker is down are librdkafka's news only.
                        if m.error().fatal() or m.error().code() == KafkaError._AUTO_OFFSET_RESET:
                            self.errors.append(str(m.error()))
                        continue
                    self.got[m.partition()].append(
                        (m.offset(), m.key().decode(), m.value().decode()))
                    self.count += 1
        finally:
            self.c.close()


def read_all(bootstrap: str, topic: str, ends: dict, isolation: str = "read_committed"
             ) -> dict[int, list[tuple[int, bytes, bytes]]]:
    """Every record of `topic` that a consumer with `isolation` reads from offset 0 until
    each position reaches its end in `ends`."""
    c = kit.consumer_confluent(bootstrap, {"isolation.level": isolation})
    try:
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
        got: dict[int, list] = {p: [] for p in range(PARTITIONS)}

        def behind():
            return [tp.partition for tp in c.position(
                [TopicPartition(topic, p) for p in range(PARTITIONS)])
                if tp.offset < ends[(topic, tp.partition)]]
        deadline = time.time() + 60
        while behind():
            assert time.time() < deadline, f"{topic} {isolation} stuck: behind {behind()}, {ends}"
            for m in c.consume(1000, 0.5):
                assert m.error() is None, m.error()
                got[m.partition()].append((m.offset(), m.key(), m.value()))
        return got
    finally:
        c.close()


def group_offsets(bootstrap: str, group: str, topic: str) -> dict[int, int]:
    a = kit.admin(bootstrap)
    req = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, p) for p in range(PARTITIONS)])
    res = a.list_consumer_group_offsets([req])[group].result(30)
    return {tp.partition: tp.offset for tp in res.topic_partitions}


def group_coordinator(b, group: str) -> int:
    """FindCoordinator v1 for a group, sent to broker `b` -> its node id (-1 on an error)."""
    with rawkafka.Conn(b.bootstrap) as c:
        c.send(rawkafka.request(10, 1, 13, bytes(rawkafka.Writer().string(group).i8(0).buf)))
        _, resp = c.recv_frame()
    r = rawkafka.Reader(resp)
    r.i32()  # throttle_time_ms
    code = r.i16()
    r.string()  # error_message
    node = r.i32()
    return node if code == 0 else -1


def txn_rows(b, app_id: str, *flags: str) -> list[dict]:
    """`strata txn list` rows of the application's stream threads' transactional ids ([] if
    it fails, e.g. while a broker is down)."""
    r = subprocess.run([STRATA_BIN, "txn", "list", "-b", b.bootstrap, "--format", "json",
                        *flags], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return []
    return [row for row in json.loads(r.stdout)
            if row["transactional_id"].startswith(app_id + "-")]


def streams_txns(b, app_id: str) -> dict[str, int]:
    """transactional id -> producer epoch of the application's stream threads."""
    return {row["transactional_id"]: row["producer_epoch"] for row in txn_rows(b, app_id)}


def test_streams_exactly_once_v2_word_count_through_broker_kills(tmp_path, broker_factory):
    etcd, cluster = start_cluster(tmp_path, broker_factory, extra=CLUSTER_CONFIG)
    by_node = {int(b.config["node.id"]): b for b in cluster}
    bootstrap = ",".join(b.bootstrap for b in cluster)
    app_id = kit.unique_topic("wordcount")
    source, sink = kit.unique_topic("words"), kit.unique_topic("counts")
    changelog = f"{app_id}-counts-changelog"
    app = StreamsApp(tmp_path, bootstrap, app_id, source, sink)
    feeder = Feeder(bootstrap, source)
    reader = None

    def live():
        return next(b for b in cluster if b.running)

    partitions = {"__transaction_state": 3, "__consumer_offsets": 3}  # CLUSTER_CONFIG's

    def full(topic):
        """Every partition of `topic` has all three brokers in its ISR, as a live broker
        describes it (one just restarted may not describe the topic yet: not full)."""
        def check():
            now = isr(live(), topic)
            return len(now) == partitions.get(topic, PARTITIONS) and all(
                i == [1, 2, 3] for i in now.values())
        return check

    def progress(sent: int, what: str) -> None:
        """Waits until more updates are committed than there were input records when `what`
        happened (`sent`): Streams has read and committed since."""
        wait_until(lambda: reader.count >= sent + PROGRESS or reader.errors, CALL_WITHIN,
                   f"{what}: committed updates go on",
                   lambda: (reader.count, sent, reader.errors, app.seen()))
        assert not reader.errors, reader.errors
        assert app.proc.poll() is None and "STATE ERROR" not in app.mine(), app.seen()

    started = time.monotonic()
    try:
        for t in (source, sink):
            create_rf3(cluster[0], t, PARTITIONS)
        for t in (source, sink):
            wait_until(full(t), JOIN_WITHIN, f"{t}: every ISR full", lambda: isr(live(), t))
        feeder.thread.start()
        app.start()
        app.wait_running()
        reader = LiveReader(bootstrap, sink)
        reader.thread.start()
        progress(feeder.sent, "Streams started")
        topics = [source, sink, changelog, "__transaction_state", "__consumer_offsets"]
        for t in topics:
            wait_until(full(t), JOIN_WITHIN, f"{t}: every ISR full", lambda: isr(live(), t))
        described = metadata(live(), changelog).topics[changelog].partitions
        assert sorted((p, len(pm.replicas)) for p, pm in described.items()) == [
            (p, 3) for p in range(PARTITIONS)], f"{changelog}: {described}"
        txns = wait_until(lambda: streams_txns(live(), app_id), CALL_WITHIN,
                          "the stream threads' transactional ids listed",
                          lambda: subprocess.run([STRATA_BIN, "txn", "list", "-b",
                                                  live().bootstrap], capture_output=True,
                                                 text=True).stdout)
        txn_ids = sorted(txns)
        print(f"Streams transactional ids (producer epochs): {txns}")

        rounds = [
            (f"leader of {source}-0", lambda: leaders(live(), source)[0][0]),
            (f"leader of {sink}-1", lambda: leaders(live(), sink)[1][0]),
            (f"transaction coordinator of {txn_ids[0]}",
             lambda: txn_coordinator(live(), txn_ids[0])[1]),
            (f"group coordinator of {app_id}", lambda: group_coordinator(live(), app_id)),
        ]
        for what, find in rounds:
            victim = find()
            assert victim in by_node, f"{what}: no such broker {victim}"
            b = by_node[victim]
            sent = feeder.sent
            kill_at = time.monotonic()
            b.kill9()
            others = [o for o in cluster if o is not b]
            for t in topics:
                wait_until(lambda: all(leader not in (-1, victim)
                                       for leader, _ in leaders(others[0], t).values()),
                           OFFLINE_WITHIN, f"{what}: broker {victim}'s leaderships of {t} moved",
                           lambda: leaders(others[0], t))
            progress(sent, f"{what} (broker {victim}) down")
            down_for = time.monotonic() - kill_at
            b.start()
            for t in topics:
                wait_until(full(t), JOIN_WITHIN + CALL_WITHIN,
                           f"{what}: broker {victim} back in {t}'s ISRs", lambda: isr(live(), t))
            print(f"SIGKILLed broker {victim} ({what}): processing went on after "
                  f"{down_for:.1f}s; {feeder.sent} sent, {reader.count} updates read")

        # Killed while a transaction of its has records in the output (a commit may still beat
        # the kill: transactions last about commit.interval.ms).
        def writing():
            return [row for row in txn_rows(live(), app_id, "--state", "Ongoing")
                    if any(q["topic"] == sink for q in row["partitions"])]
        open_txn = wait_until(writing, CALL_WITHIN, "a Streams transaction writing the output",
                              lambda: txn_rows(live(), app_id))
        sent = feeder.sent
        app.kill9()
        print("SIGKILLed the Streams JVM while " + ", ".join(
            f"{row['transactional_id']} (epoch {row['producer_epoch']}) had "
            f"{len(row['partitions'])} partitions in a transaction" for row in open_txn))
        app.start()
        app.wait_running()
        progress(sent, "Streams JVM SIGKILLed and restarted")
        print(f"SIGKILLed and restarted the Streams JVM; {feeder.sent} sent, "
              f"{reader.count} updates read; transactional ids (producer epochs) now "
              f"{streams_txns(live(), app_id)}")

        feeder.stop.set()
        feeder.thread.join(CALL_WITHIN)
        assert not feeder.thread.is_alive(), "the producer did not finish"
        assert feeder.errors == [], feeder.errors[:5]
        assert len(feeder.acked) == feeder.sent, (len(feeder.acked), feeder.sent)
        expected = Counter(feeder.acked)
        ends = list_offsets(bootstrap, [(source, p) for p in range(PARTITIONS)], committed=False)
        assert sum(ends.values()) == len(feeder.acked), (ends, len(feeder.acked))
        want_offsets = {p: ends[(source, p)] for p in range(PARTITIONS)}
        wait_until(lambda: group_offsets(bootstrap, app_id, source) == want_offsets,
                   CALL_WITHIN, f"group {app_id}'s committed offsets at the input's ends",
                   lambda: (group_offsets(bootstrap, app_id, source), want_offsets, app.seen()))
        rc = app.close()
        # The state listener's last line (NOT_RUNNING) may come after CLOSED.
        assert rc == 0 and "CLOSED" in app.lines, f"Streams close: exit {rc}, {app.seen()}"

        # No transaction left open, then everything committed, read from the start.
        tps = [(t, p) for t in (sink, changelog) for p in range(PARTITIONS)]
        wait_until(lambda: list_offsets(bootstrap, tps, committed=True) ==
                   list_offsets(bootstrap, tps, committed=False), CALL_WITHIN,
                   "last stable offsets at the high watermarks",
                   lambda: (list_offsets(bootstrap, tps, committed=True),
                            list_offsets(bootstrap, tps, committed=False)))
        lso = list_offsets(bootstrap, tps, committed=True)
        out = read_all(bootstrap, sink, lso)
        updates: dict[str, list[int]] = {}
        for p, recs in out.items():
            for _, k, v in recs:
                updates.setdefault(k.decode(), []).append(int(v))
        assert set(updates) == set(expected), (sorted(set(updates) ^ set(expected)))
        wrong = {w: (us[:10], len(us), expected[w]) for w, us in updates.items()
                 if us != list(range(1, expected[w] + 1))}
        assert not wrong, f"{len(wrong)} words whose updates are not 1..n once each: {wrong}"

        final = {k.decode(): struct.unpack(">q", v[-8:])[0]
                 for recs in read_all(bootstrap, changelog, lso).values() for _, k, v in recs}
        assert final == dict(expected), {w: (final.get(w), n) for w, n in expected.items()
                                         if final.get(w) != n}

        total = sum(len(recs) for recs in out.values())
        wait_until(lambda: reader.count >= total or reader.errors, CALL_WITHIN,
                   "the live reader caught up", lambda: (reader.count, total, reader.errors))
        reader.stop.set()
        reader.thread.join(30)
        assert not reader.errors, reader.errors
        for p, recs in out.items():
            final_p = [(o, k.decode(), v.decode()) for o, k, v in recs]
            differ = next((i for i, (a, b) in enumerate(zip(reader.got[p], final_p)) if a != b),
                          None)
            assert reader.got[p] == final_p, (
                f"partition {p}: the live reader saw {len(reader.got[p])} updates, the final read "
                f"{len(final_p)}; first difference at #{differ}: "
                f"{differ is not None and (reader.got[p][differ], final_p[differ])}")

        hw = list_offsets(bootstrap, tps, committed=False)
        uncommitted = sum(len(recs) for recs in read_all(bootstrap, sink, hw,
                                                         "read_uncommitted").values())
        print(f"Streams EOS: {len(feeder.acked)} records of {len(expected)} words counted "
              f"exactly; {total} committed updates and {uncommitted - total} aborted ones "
              f"(read_uncommitted only) in {sum(hw[(sink, p)] for p in range(PARTITIONS))} "
              f"output offsets; {app.starts} JVM starts, uncaught {app.uncaught()}; "
              f"{time.monotonic() - started:.0f}s")
    finally:
        feeder.stop.set()
        if reader is not None:
            reader.stop.set()
        if app.proc is not None and app.proc.poll() is None:
            app.proc.kill()
            app.proc.wait()
        for b in cluster:
            b.stop()
        etcd.stop_all()
