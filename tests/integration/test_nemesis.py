"""Nemesis: an idempotent acks=all producer writes to an RF=3 topic (min.insync.replicas=2) on
three brokers while brokers are SIGKILLed or SIGTERMed and restarted, one at a time, round after
round (the victim chosen by a seeded random generator: the leader of some partition, or any
broker). Afterwards every record the producer saw acknowledged is read back exactly once, each
partition in the order it was produced, there was no delivery error, and every replica's log is
byte-identical.

STRATA_NEMESIS_ROUNDS sets the number of rounds (10 here; scripts/soak.sh runs 100) and
STRATA_NEMESIS_SEED the generator's seed.
"""
from __future__ import annotations

import os
import random
import threading
import time

import pytest
from confluent_kafka import Producer

import kit
from kit import wait_until
from test_cluster import OFFLINE_WITHIN, leaders, start_cluster
from test_replication import JOIN_WITHIN, create_rf3, isr, wait_identical

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's cluster mode")

ROUNDS = int(os.environ.get("STRATA_NEMESIS_ROUNDS", "10"))
SEED = int(os.environ.get("STRATA_NEMESIS_SEED", "7"))
PARTITIONS = 3


class AckedProducer:
    """An idempotent acks=all producer writing numbered values round-robin over the
    partitions from its own thread, and what was acknowledged, in order, per partition."""

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
            partition = i % PARTITIONS
            value = b"n%07d" % i
            self.p.produce(self.topic, value, partition=partition, on_delivery=self._delivered)
            self.sent[partition].append(value)
            i += 1
            self.p.poll(0.002)
        self.p.flush(120)

    def acked_count(self) -> int:
        return sum(len(v) for v in self.acked.values())


def test_kills_and_restarts_lose_no_acknowledged_record(tmp_path, broker_factory):
    etcd, cluster = start_cluster(tmp_path, broker_factory)
    rng = random.Random(SEED)
    try:
        topic = kit.unique_topic("nemesis")
        create_rf3(cluster[0], topic, PARTITIONS)
        wait_until(lambda: all(i == [1, 2, 3] for i in isr(cluster[0], topic).values()),
                   JOIN_WITHIN, "every ISR full", lambda: isr(cluster[0], topic))
        producer = AckedProducer(",".join(b.bootstrap for b in cluster), topic)
        producer.thread.start()
        failovers: list[float] = []
        try:
            wait_until(lambda: producer.acked_count() >= 300, 30, "the producer under way",
                       producer.acked_count)
            for round_ in range(ROUNDS):
                led = leaders(cluster[0] if cluster[0].running else cluster[1], topic)
                if rng.random() < 0.7:  # a leader, most of the time
                    victim = cluster[led[rng.randrange(PARTITIONS)][0] - 1]
                else:
                    victim = rng.choice(cluster)
                others = [b for b in cluster if b is not victim]
                n = cluster.index(victim) + 1
                kill = rng.random() < 0.5
                acked_before = producer.acked_count()
                t0 = time.monotonic()
                if kill:
                    victim.kill9()
                else:
                    assert victim.stop() == 0, f"round {round_}: broker {n} after SIGTERM"
                wait_until(lambda: all(leader not in (-1, n)
                                       for leader, _ in leaders(others[0], topic).values()),
                           OFFLINE_WITHIN, f"round {round_}: broker {n}'s partitions led by others",
                           lambda: leaders(others[0], topic))
                failovers.append(time.monotonic() - t0)
                wait_until(lambda: producer.acked_count() > acked_before + 100, 30,
                           f"round {round_}: acknowledgements with broker {n} down",
                           lambda: (producer.acked_count(), producer.errors[:3]))
                victim.start()
                wait_until(lambda: all(i == [1, 2, 3] for i in isr(others[0], topic).values()),
                           JOIN_WITHIN, f"round {round_}: broker {n} back in every ISR",
                           lambda: isr(others[0], topic))
                print(f"round {round_}: broker {n} {'SIGKILL' if kill else 'SIGTERM'}, "
                      f"led by others after {failovers[-1]:.2f}s, "
                      f"{producer.acked_count()} acknowledged")
        finally:
            producer.stop.set()
            producer.thread.join(180)
        assert producer.errors == [], producer.errors[:5]
        got = kit.consume_confluent(cluster[0].bootstrap, topic, PARTITIONS)
        for p in range(PARTITIONS):
            values = [m.value() for m in got[p]]
            # Idempotence: no duplicate; every acknowledged value, in the order produced.
            assert len(values) == len(set(values)), f"partition {p}: duplicates"
            assert values == producer.acked[p], (
                f"partition {p}: {len(values)} read, {len(producer.acked[p])} acknowledged; "
                f"missing {sorted(set(producer.acked[p]) - set(values))[:5]}")
            assert values == producer.sent[p][:len(values)]
        wait_identical(cluster, topic, PARTITIONS)
        print(f"nemesis: {ROUNDS} rounds, {producer.acked_count()} records, failover "
              f"max {max(failovers):.2f}s, median {sorted(failovers)[len(failovers) // 2]:.2f}s")
    finally:
        for b in cluster:
            b.stop()
        etcd.stop_all()
