"""Replication on three brokers sharing one real etcd: RF=3 topics with min.insync.replicas=2.

What is checked: followers fetch from the leader and join the ISR; with acks=all every
acknowledged record is on every in-sync replica, and the replicas' logs are byte-identical; a
SIGKILLed leader is replaced by an in-sync follower that serves every acknowledged record,
and the killed broker, restarted, catches up and rejoins the ISR; followers stalled with SIGSTOP
leave the ISR within replica.lag.time.max.ms (or their lease TTL), acks=all then gets
NOT_ENOUGH_REPLICAS while acks=1 goes on, and after SIGCONT they rejoin with identical logs; a
leader SIGTERMed under load hands its leadership over first (controlled shutdown) with no
producer error and no pause; unclean election happens only where the topic allows it or an
operator asks for it, and the old leader truncates its unreplicated tail when it returns; a
restarted broker gets its preferred leaderships back (auto.leader.rebalance.enable); a broker
back with an empty disk is never elected for data it lost, not even from the ELR (but the only
replica of a topic without remote storage leads again, empty, as in Kafka); an offset
commit is acknowledged only once its __consumer_offsets ISR has it; a follower whose log is wholly
below the leader's log start starts again there.
"""
from __future__ import annotations

import os
import re
import signal
import time

import pytest
from confluent_kafka.admin import NewTopic

import kit
import rawkafka
from kit import wait_until
from test_cluster import cluster  # noqa: F401 (the 3-broker fixture)
from test_cluster import OFFLINE_WITHIN, TTL_MS, leaders, metadata, prometheus, start_cluster

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's cluster mode")

# Followers join within a few fetch rounds (replica.fetch.wait.max.ms 500) and one pass of
# the ISR thread (every 500 ms); a broker start adds its registration and first fetches.
JOIN_WITHIN = 20


def isr(b, topic: str) -> dict[int, list[int]]:
    md = metadata(b, topic).topics[topic]
    return {p: sorted(pm.isrs) for p, pm in md.partitions.items()}


def create_rf3(b, topic: str, partitions: int, assignment: list[list[int]] | None = None,
               extra: dict | None = None) -> None:
    a = kit.admin(b.bootstrap)
    config = {"min.insync.replicas": "2", **(extra or {})}
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
    # What leaders sent their followers covers what followers appended; every follower of a
    # partition its leader reports is caught up (well within replica.lag.time.max.ms, 30 s).
    metrics = [prometheus(b) for b in cluster]
    sent = sum(m["strata_replication_bytes_out_total"] for m in metrics)
    appended = sum(m["strata_replica_fetched_bytes_total"] for m in metrics)
    assert sent >= appended >= 2 * sum(len(log_bytes(cluster[0], topic, p)) for p in range(3))
    lags = {k: v for m in metrics for k, v in m.items()
            if k.startswith("strata_follower_lag_seconds{") and f'topic="{topic}"' in k}
    assert len(lags) == 3 * 2 and all(v < 30 for v in lags.values()), lags


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
    # /metrics, once every broker has applied the last ISR change: each lists a lag for
    # exactly the partitions it follows, 0 at rest, and nothing under-replicated.
    led = leaders(b1, topic)

    def at_rest():
        seen = {}
        for n, b in enumerate(cluster, start=1):
            m = prometheus(b)
            lags = {k: v for k, v in m.items()
                    if k.startswith("strata_replica_fetcher_lag{") and f'topic="{topic}"' in k}
            seen[n] = (sorted(lags.values()), m["strata_under_replicated_partitions"])
        return seen
    follows = {n: sum(1 for leader, _ in led.values() if leader != n) for n in (1, 2, 3)}
    wait_until(lambda: all(lags == [0.0] * follows[n] and under == 0
                           for n, (lags, under) in at_rest().items()),
               10, "/metrics at rest on every broker", at_rest)


LAG_MS = 2000  # replica.lag.time.max.ms of the stall test (the lease TTL is 3 s)
# A stalled follower is out within the lag time (or its lease TTL), whichever first.
OUT_WITHIN = min(LAG_MS, TTL_MS) / 1000 + 5


def lagging_cluster(tmp_path, broker_factory, name: str):
    """Three brokers with replica.lag.time.max.ms=LAG_MS and an RF=3 topic on [1, 2, 3]
    with its ISR full -> (etcd, brokers, topic)."""
    etcd, brokers = start_cluster(tmp_path, broker_factory,
                                  extra={"replica.lag.time.max.ms": str(LAG_MS)})
    topic = kit.unique_topic(name)
    create_rf3(brokers[0], topic, 1, assignment=[[1, 2, 3]])
    wait_until(lambda: isr(brokers[0], topic)[0] == [1, 2, 3], JOIN_WITHIN, "the ISR full",
               lambda: isr(brokers[0], topic))
    return etcd, brokers, topic


def test_stalled_followers_leave_the_isr_and_min_insync_replicas_guards_acks_all(
        tmp_path, broker_factory):
    etcd, brokers, topic = lagging_cluster(tmp_path, broker_factory, "stall")
    b1, b2, b3 = brokers
    stopped = []
    try:
        os.kill(b3.proc.pid, signal.SIGSTOP)
        stopped.append(b3)
        wait_until(lambda: isr(b1, topic)[0] == [1, 2], OUT_WITHIN, "broker 3 out of the ISR",
                   lambda: isr(b1, topic))
        assert produce_raw(b1, topic, -1) == 0  # two in sync: acks=all still works
        # Kafka's tool (the Java AdminClient) lists it as under-replicated, with the true ISR.
        out = describe_tool(b1, topic, "--under-replicated-partitions")
        assert re.search(r"Partition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2\b", out), out
        os.kill(b2.proc.pid, signal.SIGSTOP)
        stopped.append(b2)
        wait_until(lambda: isr(b1, topic)[0] == [1], OUT_WITHIN, "broker 2 out of the ISR",
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


def test_an_acks_all_produce_waiting_on_a_follower_that_stalls_completes_when_the_isr_shrinks(
        tmp_path, broker_factory):
    """An acks=all produce waits for the ISR. When its follower stalls, the ISR shrinks to the
    leader alone (min.insync.replicas=1), and the high watermark, now the leader's own log end,
    passes the record: the produce is answered then, as Kafka completes delayed produces after
    an ISR change, not at its timeout (nothing else fetches or produces here to move the mark)."""
    etcd, brokers = start_cluster(tmp_path, broker_factory,
                                  extra={"replica.lag.time.max.ms": str(LAG_MS)})
    b1, b2, b3 = brokers
    stopped = False
    try:
        topic = kit.unique_topic("shrink-wait")
        a = kit.admin(b1.bootstrap)
        a.create_topics([NewTopic(topic, 1, replica_assignment=[[1, 2]],
                                  config={"min.insync.replicas": "1"})])[topic].result(timeout=30)
        wait_until(lambda: isr(b1, topic) == {0: [1, 2]}, JOIN_WITHIN, "ISR [1, 2]",
                   lambda: isr(b1, topic))
        timeout_ms = 60_000
        batch = rawkafka.record_batch([(None, b"waits for the ISR", [])], kit.BASE_TS)
        os.kill(b2.proc.pid, signal.SIGSTOP)
        stopped = True
        with rawkafka.Conn(b1.bootstrap, timeout=timeout_ms / 1000 + 10) as c:
            c.send(rawkafka.request(0, 8, 7, rawkafka.produce_body(
                8, topic, 0, batch, acks=-1, timeout_ms=timeout_ms)))
            sent = time.monotonic()
            _, body = c.recv_frame()
            answered = time.monotonic() - sent
        [(_, _, code, base)] = rawkafka.parse_produce_response(8, body)
        assert isr(b1, topic) == {0: [1]}
        assert (code, base) == (0, 0), (code, base, f"answered after {answered:.1f} s")
        # At the shrink (replica.lag.time.max.ms or the lease), far from the request's timeout.
        assert answered < timeout_ms / 2000, f"answered after {answered:.1f} s"
    finally:
        if stopped:
            os.kill(b2.proc.pid, signal.SIGCONT)
        for b in brokers:
            b.stop()
        etcd.stop_all()


def describe_tool(b, topic: str, *flags: str) -> str:
    """kafka-topics --describe of `topic` (with `flags`, e.g. --under-replicated-partitions)."""
    import subprocess
    r = subprocess.run(
        ["java", "-Xmx512m", "-cp", f"{kit.KAFKA_LIB}/*", "org.apache.kafka.tools.TopicCommand",
         "--bootstrap-server", b.bootstrap, "--describe", "--topic", topic, *flags],
        capture_output=True, text=True, timeout=120)
    return r.stdout + r.stderr


def elr(b, topic: str) -> str | None:
    """Partition 0's "Elr:" column as kafka-topics --describe prints it (DescribeTopicPartitions)."""
    m = re.search(r"Partition: 0\t.*\tElr: ([0-9,]*|N/A)", describe_tool(b, topic))
    return m.group(1) if m else None


def test_eligible_leader_replicas_let_a_replica_out_of_the_isr_lead_cleanly(
        tmp_path, broker_factory):
    """KIP-966: broker 2 leaves an ISR already below min.insync.replicas, so the high
    watermark stops and it keeps every committed record; it is an eligible leader replica
    (kafka-topics shows "Elr: 2"). When the last ISR member (the leader) is killed, broker 2
    is elected cleanly, with unclean election off, and serves every acknowledged record."""
    etcd, brokers, topic = lagging_cluster(tmp_path, broker_factory, "elr")
    b1, b2, b3 = brokers
    os.kill(b3.proc.pid, signal.SIGSTOP)
    stopped = [b3]
    try:
        wait_until(lambda: isr(b1, topic)[0] == [1, 2], OUT_WITHIN, "broker 3 out of the ISR",
                   lambda: isr(b1, topic))
        recs = kit.make_records(300, 1, seed=66, tag="elr")
        kit.produce_confluent(b1.bootstrap, topic, recs)
        assert elr(b1, topic) == "", describe_tool(b1, topic)  # at min ISR: no ELR
        os.kill(b2.proc.pid, signal.SIGSTOP)
        stopped.append(b2)
        wait_until(lambda: isr(b1, topic)[0] == [1], OUT_WITHIN, "broker 2 out of the ISR",
                   lambda: isr(b1, topic))
        assert produce_raw(b1, topic, -1) == 19  # NOT_ENOUGH_REPLICAS: nothing more committed
        wait_until(lambda: elr(b1, topic) == "2", JOIN_WITHIN, "broker 2 an eligible leader",
                   lambda: describe_tool(b1, topic))
        b1.kill9()
        os.kill(b2.proc.pid, signal.SIGCONT)
        stopped.remove(b2)
        wait_until(lambda: leaders(b2, topic)[0][0] == 2, OFFLINE_WITHIN + JOIN_WITHIN,
                   "broker 2 elected from the ELR", lambda: describe_tool(b2, topic))
        assert isr(b2, topic)[0] == [2]
        got = kit.consume_confluent(b2.bootstrap, topic, 1, timeout=60)
        kit.assert_same_records(recs, got)
    finally:
        for b in stopped:
            os.kill(b.proc.pid, signal.SIGCONT)
    b1.start()
    wait_until(lambda: isr(b2, topic)[0] == [1, 2, 3], JOIN_WITHIN, "all back in the ISR",
               lambda: isr(b2, topic))
    for b in brokers:
        b.stop()
    etcd.stop_all()


def test_a_broker_back_with_an_empty_disk_is_never_elected_for_data_it_lost(
        tmp_path, broker_factory):
    """Broker 2 is an eligible leader replica (KIP-966) when its disk is wiped; it comes back
    while the ISR's last member (broker 1) is down. Eligible or not, its log is empty: the
    controller takes it out of the ELR and marks it (non_contiguous), and the partition stays
    offline rather than lose what it acknowledged, until broker 1 returns and serves every
    record; broker 2 then rebuilds its replica and rejoins the ISR."""
    import shutil
    from test_fast_migration import partition_state
    etcd, brokers, topic = lagging_cluster(tmp_path, broker_factory, "wiped")
    b1, b2, b3 = brokers
    os.kill(b3.proc.pid, signal.SIGSTOP)
    stopped = [b3]
    try:
        wait_until(lambda: isr(b1, topic)[0] == [1, 2], OUT_WITHIN, "broker 3 out of the ISR",
                   lambda: isr(b1, topic))
        recs = kit.make_records(300, 1, seed=67, tag="wiped")
        kit.produce_confluent(b1.bootstrap, topic, recs)
        os.kill(b2.proc.pid, signal.SIGSTOP)
        stopped.append(b2)
        wait_until(lambda: partition_state(b1, topic)["elr"] == [2], OUT_WITHIN + JOIN_WITHIN,
                   "broker 2 out of the ISR and an eligible leader",
                   lambda: partition_state(b1, topic))
        b2.kill9()
        stopped.remove(b2)
        shutil.rmtree(b2.data_dir)
        b1.kill9()
        b2.start()
        wait_until(lambda: partition_state(b2, topic).get("non_contiguous") == [2],
                   OFFLINE_WITHIN + JOIN_WITHIN, "broker 2 marked as holding nothing",
                   lambda: partition_state(b2, topic))
        # The same write that marked it elected nobody: it left the ELR, and nobody else
        # may lead.
        state = partition_state(b2, topic)
        assert state["elr"] == [] and state["leader"] == -1 and state["isr"] == [1], state
        assert "came back with an empty log directory" in (b2.log_text() + b3.log_text()), \
            "the controller's log line"
        os.kill(b3.proc.pid, signal.SIGCONT)  # back, but never eligible: still offline
        stopped.remove(b3)
        wait_until(lambda: 3 in metadata(b2).brokers, OFFLINE_WITHIN, "broker 3 live")
        deadline = time.time() + 2  # a few controller passes (each on a broker change)
        while time.time() < deadline:
            assert leaders(b2, topic)[0][0] == -1, describe_tool(b2, topic)
            time.sleep(0.2)

        b1.start()  # the last in-sync replica: it leads, with every acknowledged record
        wait_until(lambda: leaders(b2, topic)[0][0] == 1, OFFLINE_WITHIN + JOIN_WITHIN,
                   "broker 1 leading again", lambda: describe_tool(b2, topic))
        got = kit.consume_confluent(b1.bootstrap, topic, 1, timeout=60)
        kit.assert_same_records(recs, got)
        wait_until(lambda: isr(b1, topic)[0] == [1, 2, 3], JOIN_WITHIN,
                   "broker 2 rebuilt, and all back in the ISR", lambda: partition_state(b1, topic))
        assert partition_state(b1, topic)["non_contiguous"] == []
        wait_identical(brokers, topic, 1)
        assert not (b2.data_dir / ".strata_new_log_dir").exists()
    finally:
        for b in stopped:
            os.kill(b.proc.pid, signal.SIGCONT)
        for b in brokers:
            b.stop()
        etcd.stop_all()


def test_the_only_replica_back_with_an_empty_disk_leads_again_empty(tmp_path, broker_factory):
    """RF=1 without remote storage: nothing else could ever hold the records, so, as in Kafka,
    the wiped broker leads its partition again (empty) instead of keeping it offline for good;
    new writes are served from offset 0."""
    import shutil
    etcd, brokers = start_cluster(tmp_path, broker_factory)
    try:
        b1, b2, _ = brokers
        topic = kit.unique_topic("sole")
        a = kit.admin(b1.bootstrap)
        a.create_topics([NewTopic(topic, 1, replica_assignment=[[2]])])[topic].result(timeout=30)
        kit.produce_confluent(b1.bootstrap, topic, kit.make_records(50, 1, seed=68, tag="old"))
        b2.stop()
        shutil.rmtree(b2.data_dir)
        b2.start()
        wait_until(lambda: leaders(b1, topic)[0][0] == 2, OFFLINE_WITHIN + JOIN_WITHIN,
                   "broker 2 leading again", lambda: leaders(b1, topic))
        recs = kit.make_records(20, 1, seed=69, tag="new")
        kit.produce_confluent(b1.bootstrap, topic, recs)
        got = kit.consume_confluent(b1.bootstrap, topic, 1, timeout=60)
        kit.assert_same_records(recs, got)
        assert got[0][0].offset() == 0, got[0][0].offset()
        wait_until(lambda: not (b2.data_dir / ".strata_new_log_dir").exists(), JOIN_WITHIN,
                   "broker 2's new-directory marker gone")
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()


# The longest gap between two acknowledgements that a controlled shutdown may cause: the
# leadership move is one etcd write and a watch, the client's retry one metadata refresh.
MAX_ACK_GAP_S = 1.5


def test_sigterm_of_a_leader_under_load_moves_leadership_first(cluster):
    """Controlled shutdown: the leader's registration goes to "controlled_shutdown", the
    controller moves its leadership and ISR membership away while it still serves, and an
    idempotent acks=all producer sees no error and no pause over MAX_ACK_GAP_S; every record
    comes back exactly once and in order."""
    import threading

    from confluent_kafka import Producer

    b1 = cluster[0]
    topic = kit.unique_topic("sigterm")
    create_rf3(b1, topic, 1, assignment=[[1, 2, 3]])
    wait_until(lambda: isr(b1, topic)[0] == [1, 2, 3], JOIN_WITHIN, "the ISR full",
               lambda: isr(b1, topic))
    victim = cluster[leaders(b1, topic)[0][0] - 1]
    others = [b for b in cluster if b is not victim]

    acks: list[tuple[float, bytes]] = []
    errors: list[str] = []

    def delivered(err, msg):
        if err is not None:
            errors.append(str(err))
        else:
            acks.append((time.monotonic(), msg.value()))

    p = Producer({"bootstrap.servers": ",".join(b.bootstrap for b in others),
                  "enable.idempotence": True, "acks": "all", "linger.ms": 5,
                  "message.timeout.ms": 30000})
    stop = threading.Event()
    sent: list[bytes] = []

    def produce():
        i = 0
        while not stop.is_set():
            v = b"v%06d" % i
            p.produce(topic, v, partition=0, on_delivery=delivered)
            sent.append(v)
            i += 1
            p.poll(0.004)  # ~250 records a second
        p.flush(30)

    t = threading.Thread(target=produce)
    t.start()
    try:
        wait_until(lambda: len(acks) >= 200, 30, "the producer under way", lambda: len(acks))
        stopped_at = time.monotonic()
        assert victim.stop() == 0
        stop_s = time.monotonic() - stopped_at
        acked_at_stop = len(acks)
        wait_until(lambda: len(acks) >= acked_at_stop + 500, 30, "acknowledgements after the stop",
                   lambda: (len(acks), len(sent), errors[:3]))
    finally:
        stop.set()
        t.join(60)
    assert errors == [], errors[:5]
    assert len(acks) == len(sent), (len(acks), len(sent))
    times = [at for at, _ in acks]
    gaps = [b - a for a, b in zip(times, times[1:])]
    print(f"controlled shutdown: broker stopped in {stop_s:.2f}s, {len(acks)} acks, "
          f"longest gap between acks {max(gaps):.3f}s")
    assert max(gaps) < MAX_ACK_GAP_S, max(gaps)
    log = victim.log_text(since_start=True)
    assert "controlled shutdown: done in" in log, log[-3000:]
    new_leader = leaders(others[0], topic)[0][0]
    assert new_leader in [cluster.index(o) + 1 for o in others], new_leader

    got = kit.consume_confluent(others[0].bootstrap, topic, 1)
    assert [r.value() for r in got[0]] == sent

    victim.start()
    wait_until(lambda: isr(others[0], topic)[0] == [1, 2, 3], JOIN_WITHIN,
               "the restarted broker back in the ISR", lambda: isr(others[0], topic))
    wait_identical(cluster, topic, 1)


def leader_election_tool(b, election_type: str, topic: str, partition: int) -> str:
    import subprocess
    r = subprocess.run(
        ["java", "-Xmx512m", "-cp", f"{kit.KAFKA_LIB}/*",
         "org.apache.kafka.tools.LeaderElectionCommand", "--bootstrap-server", b.bootstrap,
         "--election-type", election_type, "--topic", topic, "--partition", str(partition)],
        capture_output=True, text=True, timeout=120)
    return r.stdout + r.stderr


def leaderless(b) -> int:
    """Partitions of every topic (internal ones included) with no leader, as `b` says."""
    return sum(1 for t in metadata(b).topics.values() for p in t.partitions.values()
               if p.leader == -1)


def test_unclean_election_only_where_allowed_or_asked_for(cluster):
    """With its only in-sync replica dead, a partition stays offline unless its topic sets
    unclean.leader.election.enable (the controller then elects a live out-of-sync replica,
    losing what it lacks) or an operator runs kafka-leader-election --election-type UNCLEAN.
    The old leader, back, truncates its unreplicated tail and rejoins with an identical log."""
    b1, b2, b3 = cluster
    clean, dirty = kit.unique_topic("clean"), kit.unique_topic("dirty")
    a = kit.admin(b1.bootstrap)
    for t, extra in ((clean, {}), (dirty, {"unclean.leader.election.enable": "true"})):
        a.create_topics([NewTopic(t, 1, replica_assignment=[[1, 2, 3]],
                                  config={"min.insync.replicas": "1", **extra})])[t].result(30)
        wait_until(lambda t=t: isr(b1, t)[0] == [1, 2, 3], JOIN_WITHIN, "the ISR full",
                   lambda t=t: isr(b1, t))
    shared = kit.make_records(100, 1, seed=61, tag="shared")
    for t in (clean, dirty):
        kit.produce_confluent(b1.bootstrap, t, shared, extra={"acks": "all"})
    b2.kill9()
    b3.kill9()
    for t in (clean, dirty):
        wait_until(lambda t=t: isr(b1, t)[0] == [1], OFFLINE_WITHIN, "only broker 1 in sync",
                   lambda t=t: isr(b1, t))
    only_on_1 = kit.make_records(50, 1, seed=62, tag="only-on-1")
    for t in (clean, dirty):
        kit.produce_confluent(b1.bootstrap, t, only_on_1, extra={"acks": "all"})
    b1.kill9()
    b2.start()
    wait_until(lambda: leaders(b2, dirty)[0][0] == 2, OFFLINE_WITHIN,
               "the unclean-allowed topic led by broker 2", lambda: leaders(b2, dirty))
    assert isr(b2, dirty)[0] == [2]
    # Decided in the same controller pass: the other topic stays offline, and the
    # controller (broker 2, the only one running) counts it.
    assert leaders(b2, clean)[0][0] == -1, leaders(b2, clean)
    assert prometheus(b2)["strata_active_controller"] == 1
    # The count is the cluster's: the balancer's internal topics (replicas on brokers 1 and 3
    # too) may be offline as well, so it is checked against Metadata's leaderless partitions.
    assert prometheus(b2)["strata_offline_partitions"] == leaderless(b2) >= 1
    out = leader_election_tool(b2, "UNCLEAN", clean, 0)
    assert "Successfully completed leader election (UNCLEAN)" in out, out
    wait_until(lambda: leaders(b2, clean)[0][0] == 2, 10, "the asked-for election",
               lambda: leaders(b2, clean))
    wait_until(lambda: prometheus(b2)["strata_offline_partitions"] == leaderless(b2), 10,
               "the offline count down by the elected partition",
               lambda: (prometheus(b2)["strata_offline_partitions"], leaderless(b2)))

    after = kit.make_records(30, 1, seed=63, tag="after")
    for t in (clean, dirty):
        kit.retry(lambda t=t: kit.produce_confluent(b2.bootstrap, t, after, extra={"acks": "all"}),
                  timeout=30, what=f"producing to {t} after the unclean election")
        # What broker 2 lacked is gone; the rest is there, in order, at new offsets.
        got = kit.consume_confluent(b2.bootstrap, t, 1)[0]
        assert [m.value() for m in got] == [r.value for r in shared + after], t

    b1.start()
    b3.start()
    for t in (clean, dirty):
        wait_until(lambda t=t: isr(b2, t)[0] == [1, 2, 3], JOIN_WITHIN,
                   "brokers 1 and 3 back in the ISR", lambda t=t: isr(b2, t))
        wait_identical(cluster, t, 1)


BALANCE_INTERVAL_S = 1  # leader.imbalance.check.interval.seconds of the rebalance test


def test_a_restarted_broker_gets_its_preferred_leaderships_back(tmp_path, broker_factory):
    """auto.leader.rebalance.enable: a SIGKILLed broker's leaderships move to the others; once
    it is back in the ISRs, the controller's imbalance check (every BALANCE_INTERVAL_S) gives
    each partition back to its preferred (first) replica, and every acknowledged record is
    still there, on identical replicas."""
    etcd, cluster = start_cluster(tmp_path, broker_factory, extra={
        "leader.imbalance.check.interval.seconds": str(BALANCE_INTERVAL_S)})
    try:
        b1 = cluster[0]
        topic = kit.unique_topic("balance")
        create_rf3(b1, topic, 6)
        wait_until(lambda: all(i == [1, 2, 3] for i in isr(b1, topic).values()), JOIN_WITHIN,
                   "every partition's ISR full", lambda: isr(b1, topic))

        def preferred_lead():
            return all(leader == replicas[0] for leader, replicas in leaders(b1, topic).values())
        wait_until(preferred_lead, JOIN_WITHIN, "every partition led by its preferred replica",
                   lambda: leaders(b1, topic))
        recs = kit.make_records(300, 6, seed=64, tag="before")
        kit.produce_confluent(b1.bootstrap, topic, recs, extra={"acks": "all"})

        victim = cluster[1]  # broker 2: preferred for some partitions, never all
        mine = [p for p, (_, replicas) in leaders(b1, topic).items() if replicas[0] == 2]
        assert mine and len(mine) < 6, leaders(b1, topic)
        victim.kill9()
        wait_until(lambda: all(leaders(b1, topic)[p][0] in (1, 3) for p in mine), OFFLINE_WITHIN,
                   "broker 2's partitions led by the others", lambda: leaders(b1, topic))
        more = kit.make_records(300, 6, seed=65, tag="during")
        kit.retry(lambda: kit.produce_confluent(b1.bootstrap, topic, more, extra={"acks": "all"}),
                  timeout=30, what="producing while broker 2 is down")

        victim.start()
        wait_until(lambda: all(i == [1, 2, 3] for i in isr(b1, topic).values()), JOIN_WITHIN,
                   "broker 2 back in every ISR", lambda: isr(b1, topic))
        wait_until(preferred_lead, JOIN_WITHIN + 2 * BALANCE_INTERVAL_S,
                   "broker 2 leading its preferred partitions again", lambda: leaders(b1, topic))
        controller_logs = "".join(b.log_text() for b in cluster)
        assert "preferred elections for" in controller_logs
        kit.assert_same_records(recs + more, kit.consume_confluent(b1.bootstrap, topic, 6))
        wait_identical(cluster, topic, 6)
    finally:
        for b in cluster:
            b.stop()
        etcd.stop_all()


COMMIT_TIMEOUT_MS = 1500  # offsets.commit.timeout.ms of the commit test (lease TTL: 3 s)


def offset_commit_raw(b, group: str, topic: str, offset: int) -> int:
    """OffsetCommit v2 of one offset for partition 0 (a simple commit: generation -1, no
    member) straight to broker `b` -> the partition's error code."""
    w = rawkafka.Writer().string(group).i32(-1).string("").i64(-1)
    w.array([topic], lambda w, t: w.string(t).array(
        [0], lambda w, p: w.i32(p).i64(offset).string("")))
    with rawkafka.Conn(b.bootstrap) as c:
        c.send(rawkafka.request(8, 2, 11, bytes(w.buf)))
        _, body = c.recv_frame()
    r = rawkafka.Reader(body)
    assert r.array_len() == 1 and r.string() == topic
    assert r.array_len() == 1 and r.i32() == 0
    return r.i16()


def commit_evidence(coordinator, followers) -> str:
    """The followers' process states (T: stopped) and the coordinator's view of the
    __consumer_offsets partitions it leads: for a commit answered while it should wait."""
    import json
    import urllib.request
    states = {}
    for f in followers:
        with open(f"/proc/{f.proc.pid}/stat") as st:
            states[f.config["node.id"]] = st.read().rsplit(")", 1)[1].split()[0]
    url = f"http://{coordinator.config['strata.admin.listener']}/v1/topics"
    topics = json.loads(urllib.request.urlopen(url, timeout=10).read())
    offsets = next((t for t in topics if t["name"] == "__consumer_offsets"), {"partitions": []})
    led = [{k: p.get(k) for k in ("partition", "leader", "isr", "high_watermark", "log_end_offset")}
           for p in offsets["partitions"] if p.get("leader") == int(coordinator.config["node.id"])]
    return f"follower process states {states}; coordinator's partitions {led}"


def test_offset_commits_are_acknowledged_once_replicated_and_survive_the_coordinator(
        tmp_path, broker_factory):
    """With offsets.topic.replication.factor=3 a commit is answered only once the ISR of its
    __consumer_offsets partition has it: with both followers stopped it gets
    COORDINATOR_NOT_AVAILABLE after offsets.commit.timeout.ms; once acknowledged, it is
    served by the next coordinator after the coordinator's SIGKILL."""
    from confluent_kafka import Consumer, TopicPartition

    etcd, cluster = start_cluster(tmp_path, broker_factory, extra={
        "offsets.topic.replication.factor": "3",
        "offsets.commit.timeout.ms": str(COMMIT_TIMEOUT_MS)})
    try:
        b1 = cluster[0]
        topic, group = kit.unique_topic("commits"), kit.unique_topic("grp-commits")
        create_rf3(b1, topic, 1)
        kit.produce_confluent(b1.bootstrap, topic, kit.make_records(100, 1, seed=66, tag="c"),
                              extra={"acks": "all"})

        def commit_via(b, offset: int) -> None:
            c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": group})
            try:
                c.commit(offsets=[TopicPartition(topic, 0, offset)], asynchronous=False)
            finally:
                c.close()
        kit.retry(lambda: commit_via(b1, 10), timeout=30, what="the first commit")
        offsets = "__consumer_offsets"
        wait_until(lambda: len(isr(b1, offsets)) == 6  # offsets.topic.num.partitions
                   and all(i == [1, 2, 3] for i in isr(b1, offsets).values()), JOIN_WITHIN,
                   "every __consumer_offsets ISR full", lambda: isr(b1, offsets))
        a = kit.admin(b1.bootstrap)
        desc = a.describe_consumer_groups([group])[group].result(30)
        coordinator = cluster[desc.coordinator.id - 1]
        followers = [b for b in cluster if b is not coordinator]
        # The coordinator's own replicas agree (the metadata answers come from the view).
        wait_until(lambda: prometheus(coordinator)["strata_under_replicated_partitions"] == 0,
                   JOIN_WITHIN, "the coordinator's partitions fully in sync",
                   lambda: prometheus(coordinator)["strata_under_replicated_partitions"])

        for f in followers:
            os.kill(f.proc.pid, signal.SIGSTOP)
        try:
            t0 = time.monotonic()
            code = offset_commit_raw(coordinator, group, topic, 50)
            waited = time.monotonic() - t0
            # What the coordinator saw, taken while the followers are still stopped.
            seen = "" if code == 15 else commit_evidence(coordinator, followers)
        finally:
            for f in followers:
                os.kill(f.proc.pid, signal.SIGCONT)
        # COORDINATOR_NOT_AVAILABLE: the ISR never confirmed it.
        assert code == 15, f"code {code} after {waited:.3f} s; {seen}"
        assert waited >= COMMIT_TIMEOUT_MS / 1000 * 0.9, waited

        wait_until(lambda: offset_commit_raw(coordinator, group, topic, 60) == 0, JOIN_WITHIN,
                   "a commit acknowledged once the followers run again")
        coordinator.kill9()

        seen = []

        def committed_via(b):
            c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": group})
            try:
                seen.append(c.committed([TopicPartition(topic, 0)], timeout=10)[0].offset)
            except Exception as e:  # the next coordinator may not be known yet
                seen.append(str(e))
            finally:
                c.close()
            return seen[-1] == 60
        wait_until(lambda: committed_via(followers[0]), OFFLINE_WITHIN + 10,
                   "the acknowledged commit served by the next coordinator", lambda: seen[-3:])
    finally:
        for b in cluster:
            b.stop()
        etcd.stop_all()


def batches_from(b, topic: str, p: int, start: int) -> bytes:
    """The partition's batches on broker `b` whose base offset is >= `start`, as stored."""
    import struct
    out = b""
    for f in sorted(b.partition_dir(topic, p).glob("*.log")):
        data = f.read_bytes()
        pos = 0
        while pos + 12 <= len(data):
            base, length = struct.unpack(">qi", data[pos:pos + 12])
            if base >= start:
                out += data[pos:pos + 12 + length]
            pos += 12 + length
    return out


def test_a_follower_below_the_leaders_log_start_starts_again_there(cluster):
    """A follower away while the leader's log start passed its whole log (DeleteRecords here,
    retention alike) gets OFFSET_OUT_OF_RANGE, empties its log to start at the leader's log
    start, catches up, rejoins the ISR and holds the leader's batches from there, byte for
    byte."""
    from confluent_kafka import TopicPartition

    b1, b2, b3 = cluster
    topic = kit.unique_topic("behind")
    a = kit.admin(b1.bootstrap)
    a.create_topics([NewTopic(topic, 1, replica_assignment=[[1, 2, 3]],
                              config={"min.insync.replicas": "2",
                                      "segment.bytes": "65536"})])[topic].result(30)
    wait_until(lambda: isr(b1, topic)[0] == [1, 2, 3], JOIN_WITHIN, "the ISR full",
               lambda: isr(b1, topic))
    small = {"acks": "all", "batch.size": 16384}  # batches well below segment.bytes
    kit.produce_confluent(b1.bootstrap, topic, kit.make_records(200, 1, seed=67, tag="old"),
                          extra=small)
    b3.kill9()
    kit.retry(lambda: kit.produce_confluent(b1.bootstrap, topic,
                                            kit.make_records(300, 1, seed=68, tag="away"),
                                            extra=small),
              timeout=30, what="producing with broker 3 away")
    c = kit.consumer_confluent(b1.bootstrap)
    try:
        end = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1]
    finally:
        c.close()
    assert end > 200, end
    deleted = a.delete_records([TopicPartition(topic, 0, end)])
    for f in deleted.values():
        f.result(30)
    newer = kit.make_records(100, 1, seed=69, tag="new")
    kit.produce_confluent(b1.bootstrap, topic, newer, extra=small)

    b3.start()
    wait_until(lambda: isr(b1, topic)[0] == [1, 2, 3], JOIN_WITHIN, "broker 3 back in the ISR",
               lambda: isr(b1, topic))
    assert "below the leader's log start" in b3.log_text(since_start=True)
    wait_until(lambda: batches_from(b3, topic, 0, end) == batches_from(b1, topic, 0, end),
               JOIN_WITHIN, "broker 3 holding the leader's batches from its log start",
               lambda: (len(batches_from(b3, topic, 0, end)), len(batches_from(b1, topic, 0, end))))
    assert batches_from(b3, topic, 0, 0) == batches_from(b3, topic, 0, end)  # nothing older
    got = kit.consume_confluent(b3.bootstrap, topic, 1, start={0: end})
    assert [m.value() for m in got[0]] == [r.value for r in newer]


def test_records_deleted_on_the_leader_stay_deleted_after_it_fails(cluster):
    """DeleteRecords moves the leader's log start; its followers take it from their next
    fetch (Kafka's KIP-107), so after the leader is SIGKILLed the new leader's log start is
    the deleted offset: a consumer from the beginning gets the first record kept, never one
    deleted, and everything after it byte for byte."""
    from confluent_kafka import TopicPartition

    b1, b2, b3 = cluster
    topic = kit.unique_topic("deleted")
    create_rf3(b1, topic, 1, assignment=[[1, 2, 3]])
    wait_until(lambda: isr(b1, topic)[0] == [1, 2, 3], JOIN_WITHIN, "the ISR full",
               lambda: isr(b1, topic))
    records = kit.make_records(200, 1, seed=71, tag="kept")
    kit.produce_confluent(b1.bootstrap, topic, records, extra={"acks": "all"})
    tp = TopicPartition(topic, 0, 120)
    a = kit.admin(b1.bootstrap)
    assert a.delete_records([tp], operation_timeout=30)[tp].result(30).low_watermark == 120
    # Acknowledged by the whole ISR: each follower fetched after the delete, and so saw
    # the new log start in a fetch response.
    more = kit.make_records(10, 1, seed=72, tag="after")
    kit.produce_confluent(b1.bootstrap, topic, more, extra={"acks": "all"})
    b1.kill9()
    wait_until(lambda: leaders(b2, topic)[0][0] in (2, 3), OFFLINE_WITHIN + JOIN_WITHIN,
               "a new leader", lambda: leaders(b2, topic))
    c = kit.consumer_confluent(b2.bootstrap)
    try:
        def watermarks():
            return kit.retry(
                lambda: c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10),
                timeout=30, what="the new leader's watermarks")
        # The new leader's high watermark reaches 210 once the other follower fetches.
        wait_until(lambda: watermarks()[1] == 210, JOIN_WITHIN, "the high watermark at 210",
                   watermarks)
        assert watermarks() == (120, 210), watermarks()
    finally:
        c.close()
    got = kit.consume_confluent(b2.bootstrap, topic, 1)
    assert [m.offset() for m in got[0]] == list(range(120, 210))
    assert [m.value() for m in got[0]] == [r.value for r in (records + more)[120:]]
