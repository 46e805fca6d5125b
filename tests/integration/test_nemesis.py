"""Nemesis: two idempotent acks=all producers, confluent-kafka and Kafka's Java client, write
unique values to an RF=3 topic of 6 partitions (min.insync.replicas=2, unclean election off) on
three brokers while the leader of the busiest partition is SIGKILLed and restarted, round after
round. Afterwards: no delivery error, every acknowledged value read back exactly once and in send
order per producer and partition, nothing read that was not sent, every restarted broker back in
every ISR, and every replica's log byte-identical. The counts (sent, acknowledged, read, lost,
duplicated) are printed.

STRATA_NEMESIS_ROUNDS sets the number of rounds: 10 here, 100 in scripts/soak.sh.
"""
from __future__ import annotations

import os
import subprocess
import threading
import time
from collections import Counter

import pytest
from confluent_kafka import Producer

import kit
from kit import wait_until
from test_cluster import OFFLINE_WITHIN, leaders, start_cluster
from test_replication import JOIN_WITHIN, create_rf3, isr, wait_identical

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's cluster mode")

ROUNDS = int(os.environ.get("STRATA_NEMESIS_ROUNDS", "10"))
PARTITIONS = 6


class ConfluentProducer:
    """An idempotent acks=all confluent-kafka producer writing "py-n" round-robin over the
    partitions from its own thread; what it sent and what was acknowledged, per partition,
    in order."""

    def __init__(self, bootstrap: str, topic: str):
        self.topic = topic
        self.p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                           "acks": "all", "linger.ms": 5, "message.timeout.ms": 120000})
        self.sent: dict[int, list[bytes]] = {p: [] for p in range(PARTITIONS)}
        self.acked: dict[int, list[bytes]] = {p: [] for p in range(PARTITIONS)}
        self.errors: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run)

    def _delivered(self, err, msg):
        if err is not None:
            self.errors.append(str(err))
        else:
            self.acked[msg.partition()].append(msg.value())

    def _run(self):
        i = 0
        while not self.stop.is_set():
            value = b"py-%d" % i
            self.p.produce(self.topic, value, partition=i % PARTITIONS,
                           on_delivery=self._delivered)
            self.sent[i % PARTITIONS].append(value)
            i += 1
            self.p.poll(0.003)
        self.p.flush(120)

    def acked_count(self) -> int:
        return sum(len(v) for v in self.acked.values())


class JavaProducer:
    """tests/integration/java/.../AckedProducer.java: the same with Kafka's Java client,
    values "java-n"; it prints every acknowledgement and stops when its stdin closes."""

    def __init__(self, bootstrap: str, topic: str):
        self.proc = subprocess.Popen(
            ["java", "-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
             "-cp", kit.JAVA_CLASSPATH, "io.strata.it.AckedProducer", "--bootstrap", bootstrap,
             "--topic", topic, "--partitions", str(PARTITIONS), "--prefix", "java",
             "--rate", "200"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.acked: dict[int, list[bytes]] = {p: [] for p in range(PARTITIONS)}
        self.errors: list[str] = []
        self.sent = -1
        self.lines = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.stderr = ""
        self.err_reader = threading.Thread(target=self._read_err, daemon=True)
        self.err_reader.start()

    def _read(self):
        for line in self.proc.stdout:
            parts = line.split()
            self.lines += 1
            if parts and parts[0] == "ACK":
                self.acked[int(parts[1])].append(parts[3].encode())
            elif parts and parts[0] == "ERR":
                self.errors.append(line.strip())
            elif parts and parts[0] == "DONE":
                self.sent = int(parts[1].split("=")[1])

    def _read_err(self):
        for line in self.proc.stderr:
            self.stderr += line

    def finish(self) -> None:
        self.proc.stdin.close()
        try:
            rc = self.proc.wait(180)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError(f"the Java producer did not finish: {self.stderr[-3000:]}")
        self.reader.join(30)
        assert rc == 0 and self.sent >= 0, f"Java producer exited {rc}: {self.stderr[-3000:]}"


def test_leader_kills_lose_no_acknowledged_record(tmp_path, broker_factory):
    etcd, cluster = start_cluster(tmp_path, broker_factory)
    try:
        topic = kit.unique_topic("nemesis")
        create_rf3(cluster[0], topic, PARTITIONS)
        wait_until(lambda: all(i == [1, 2, 3] for i in isr(cluster[0], topic).values()),
                   JOIN_WITHIN, "every ISR full", lambda: isr(cluster[0], topic))
        bootstrap = ",".join(b.bootstrap for b in cluster)
        py = ConfluentProducer(bootstrap, topic)
        py.thread.start()
        java = JavaProducer(bootstrap, topic)
        failovers: list[float] = []
        try:
            wait_until(lambda: py.acked_count() >= 300 and java.lines >= 300, 60,
                       "both producers under way", lambda: (py.acked_count(), java.lines,
                                                            java.stderr[-2000:]))
            for round_ in range(ROUNDS):
                busiest = max(range(PARTITIONS), key=lambda p: len(py.acked[p]))
                n = leaders(cluster[0] if cluster[0].running else cluster[1], topic)[busiest][0]
                victim = cluster[n - 1]
                others = [b for b in cluster if b is not victim]
                acked_before = py.acked_count()
                t0 = time.monotonic()
                victim.kill9()
                wait_until(lambda: all(leader not in (-1, n)
                                       for leader, _ in leaders(others[0], topic).values()),
                           OFFLINE_WITHIN, f"round {round_}: broker {n}'s partitions led by others",
                           lambda: leaders(others[0], topic))
                failovers.append(time.monotonic() - t0)
                wait_until(lambda: py.acked_count() > acked_before + 100, 30,
                           f"round {round_}: acknowledgements with broker {n} down",
                           lambda: (py.acked_count(), py.errors[:3]))
                victim.start()
                wait_until(lambda: all(i == [1, 2, 3] for i in isr(others[0], topic).values()),
                           JOIN_WITHIN, f"round {round_}: broker {n} back in every ISR",
                           lambda: isr(others[0], topic))
                print(f"round {round_}: broker {n} (leader of partition {busiest}) SIGKILLed, "
                      f"partitions led by others after {failovers[-1]:.2f}s")
        finally:
            py.stop.set()
            py.thread.join(180)
            java.finish()

        got = kit.consume_confluent(cluster[0].bootstrap, topic, PARTITIONS)
        read = {p: [m.value() for m in got[p]] for p in range(PARTITIONS)}
        everything = [v for p in range(PARTITIONS) for v in read[p]]
        counts = Counter(everything)
        acked = {(v, p) for src in (py.acked, java.acked) for p, vs in src.items() for v in vs}
        lost = [v for v, p in acked if v not in counts]
        duplicated = [v for v, c in counts.items() if c > 1]
        sent = sum(len(v) for v in py.sent.values()) + java.sent
        print(f"nemesis: {ROUNDS} leader kills; sent {sent}, acknowledged {len(acked)}, "
              f"read {len(everything)}, lost {len(lost)}, duplicated {len(duplicated)}; "
              f"failover max {max(failovers):.2f}s, "
              f"median {sorted(failovers)[len(failovers) // 2]:.2f}s")
        assert py.errors == [] and java.errors == [], (py.errors[:3], java.errors[:3])
        assert lost == [] and duplicated == [], (lost[:5], duplicated[:5])
        for p in range(PARTITIONS):
            # In send order per producer and partition, nothing unsent.
            assert [v for v in read[p] if v.startswith(b"py-")] == py.acked[p] == py.sent[p], p
            # Send order (value n is the n-th sent); the Java client may report the
            # acknowledgements of one partition out of that order after a retry.
            java_sent_order = sorted(java.acked[p], key=lambda v: int(v.split(b"-")[1]))
            assert [v for v in read[p] if v.startswith(b"java-")] == java_sent_order, p
            assert all(v.startswith((b"py-", b"java-")) for v in read[p]), p
        assert len(everything) == sent, (len(everything), sent)
        wait_identical(cluster, topic, PARTITIONS)
    finally:
        for b in cluster:
            b.stop()
        etcd.stop_all()
