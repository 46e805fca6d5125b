"""Replication on three brokers sharing one real etcd: RF=3 topics with min.insync.replicas=2.

What is checked: followers fetch from the leader and join the ISR; with acks=all every
acknowledged record is on every in-sync replica, and the replicas' logs are byte-identical; a
SIGKILLed leader is replaced by an in-sync follower that serves every acknowledged record,
and the killed broker, restarted, catches up and rejoins the ISR; followers stalled with SIGSTOP
leave the ISR within replica.lag.time.max.ms (or their lease TTL), acks=all then gets
NOT_ENOUGH_REPLICAS while acks=1 goes on, and after SIGCONT they rejoin with identical logs.
"""
from __future__ import annotations

import os
import signal

import pytest
from confluent_kafka.admin import NewTopic

import kit
import rawkafka
from kit import wait_until
from test_cluster import cluster  # noqa: F401 (the 3-broker fixture)
from test_cluster import OFFLINE_WITHIN, TTL_MS, leaders, metadata, start_cluster

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's cluster mode")

# Followers join within a few fetch rounds (replica.fetch.wait.max.ms 500) and one pass of
# the ISR thread (every 500 ms); a broker start adds its registration and first fetches.
JOIN_WITHIN = 20


def isr(b, topic: str) -> dict[int, list[int]]:
    md = metadata(b, topic).topics[topic]
    return {p: sorted(pm.isrs) for p, pm in md.partitions.items()}


def create_rf3(b, topic: str, partitions: int, assignment: list[list[int]] | None = None) -> None:
    a = kit.admin(b.bootstrap)
    config = {"min.insync.replicas": "2"}
    new = (NewTopic(topic, len(assignment), replica_assignment=assignment, config=config)
           if assignment else NewTopic(topic, partitions, 3, config=config))
    a.create_topics([new])[topic].result(timeout=30)


def produce_raw(b, topic: str, acks: int) -> int:
    """One record by Produce v8 straight to `b` -> the partition's error code."""
    batch = rawkafka.record_batch([(None, b"raw", [])], kit.BASE_TS)
    with rawkafka.Conn(b.bootstrap) as c:
        c.send(rawkafka.request(0, 8, 7, rawkafka.produce_body(8, topic, 0, batch, acks=acks)))
        _, body = c.recv_frame()
    [(_, _, code, _)] = rawkafka.parse_produce_response(8, body)
    return code


def log_bytes(b, topic: str, p: int) -> bytes:
    """The partition's records on broker `b`: its segment files in offset order (segment
    boundaries may differ between replicas; the bytes may not)."""
    d = b.partition_dir(topic, p)
    return b"".join(f.read_bytes() for f in sorted(d.glob("*.log")))


def wait_identical(brokers, topic: str, partitions: int) -> None:
    def same():
        return all(len({log_bytes(b, topic, p) for b in brokers}) == 1 for p in range(partitions))
    wait_until(same, JOIN_WITHIN, "every replica's log identical to the leader's",
               lambda: {p: [len(log_bytes(b, topic, p)) for b in brokers]
                        for p in range(partitions)})


def test_followers_replicate_join_the_isr_and_hold_identical_logs(cluster):
    b1 = cluster[0]
    topic = kit.unique_topic("rf3")
    create_rf3(b1, topic, 3)
    wait_until(lambda: all(i == [1, 2, 3] for i in isr(b1, topic).values()), JOIN_WITHIN,
               "every partition's ISR full", lambda: isr(b1, topic))
    recs = kit.make_records(600, 3, seed=51, tag="rf3")
    kit.produce_confluent(b1.bootstrap, topic, recs, extra={"acks": "all"})
    kit.assert_same_records(recs, kit.consume_confluent(cluster[1].bootstrap, topic, 3))
    wait_identical(cluster, topic, 3)
    assert all(i == [1, 2, 3] for i in isr(cluster[2], topic).values()), isr(cluster[2], topic)


def test_a_killed_leader_fails_over_to_an_in_sync_replica_losing_nothing(cluster):
    b1 = cluster[0]
    topic = kit.unique_topic("failover")
    create_rf3(b1, topic, 2)
    wait_until(lambda: all(i == [1, 2, 3] for i in isr(b1, topic).values()), JOIN_WITHIN,
               "every partition's ISR full", lambda: isr(b1, topic))
    before = kit.make_records(400, 2, seed=52, tag="before")
    kit.produce_confluent(b1.bootstrap, topic, before, extra={"acks": "all"})

    old_leader = leaders(b1, topic)[0][0]
    victim = cluster[old_leader - 1]
    survivors = [b for b in cluster if b is not victim]
    victim.kill9()
    wait_until(lambda: leaders(survivors[0], topic)[0][0] not in (-1, old_leader),
               OFFLINE_WITHIN, "a new leader from the ISR", lambda: leaders(survivors[0], topic))

    after = kit.make_records(400, 2, seed=53, tag="after")
    kit.retry(lambda: kit.produce_confluent(survivors[0].bootstrap, topic, after,
                                            extra={"acks": "all"}),
              timeout=30, what="producing after the failover")
    got = kit.consume_confluent(survivors[1].bootstrap, topic, 2)
    kit.assert_same_records(before + after, got)

    victim.start()
    wait_until(lambda: all(i == [1, 2, 3] for i in isr(survivors[0], topic).values()),
               JOIN_WITHIN, "the restarted broker back in every ISR",
               lambda: isr(survivors[0], topic))
    wait_identical(cluster, topic, 2)


LAG_MS = 2000  # replica.lag.time.max.ms of the stall test (the lease TTL is 3 s)


def test_stalled_followers_leave_the_isr_and_min_insync_replicas_guards_acks_all(
        tmp_path, broker_factory):
    etcd, brokers = start_cluster(tmp_path, broker_factory,
                                  extra={"replica.lag.time.max.ms": str(LAG_MS)})
    b1, b2, b3 = brokers
    topic = kit.unique_topic("stall")
    create_rf3(b1, topic, 1, assignment=[[1, 2, 3]])
    wait_until(lambda: isr(b1, topic)[0] == [1, 2, 3], JOIN_WITHIN, "the ISR full",
               lambda: isr(b1, topic))
    # A stalled follower is out within the lag time (or its lease TTL), whichever first.
    out_within = min(LAG_MS, TTL_MS) / 1000 + 5
    stopped = []
    try:
        os.kill(b3.proc.pid, signal.SIGSTOP)
        stopped.append(b3)
        wait_until(lambda: isr(b1, topic)[0] == [1, 2], out_within, "broker 3 out of the ISR",
                   lambda: isr(b1, topic))
        assert produce_raw(b1, topic, -1) == 0  # two in sync: acks=all still works
        os.kill(b2.proc.pid, signal.SIGSTOP)
        stopped.append(b2)
        wait_until(lambda: isr(b1, topic)[0] == [1], out_within, "broker 2 out of the ISR",
                   lambda: isr(b1, topic))
        assert produce_raw(b1, topic, -1) == 19  # NOT_ENOUGH_REPLICAS
        assert produce_raw(b1, topic, 1) == 0    # acks=1 goes on
    finally:
        for b in stopped:
            os.kill(b.proc.pid, signal.SIGCONT)
    wait_until(lambda: isr(b1, topic)[0] == [1, 2, 3], JOIN_WITHIN, "both back in the ISR",
               lambda: isr(b1, topic))
    assert produce_raw(b1, topic, -1) == 0
    wait_identical(brokers, topic, 1)
    for b in brokers:
        b.stop()
    etcd.stop_all()
