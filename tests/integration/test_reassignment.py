"""Partition reassignment on three brokers with Kafka 4.1's kafka-reassign-partitions.

What is checked: --execute moves a partition off its leader's broker and another onto a new
set; --verify reports both completed; the records' replicas, ISR and leaders match the target,
the removed replicas' data is deleted from their brokers, and every acknowledged record is there
(read through another broker), with produce going on afterwards; --list shows a reassignment
while its new replica cannot catch up (its broker SIGSTOPped) with Kafka's adding replicas, and
--cancel puts the original replicas back.
"""
from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest

import kit
from kit import wait_until
from test_cluster import cluster, leaders, metadata, start_cluster  # noqa: F401 (3 brokers)
from test_replication import JOIN_WITHIN, isr

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's cluster mode")

REASSIGN = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"


def reassign_tool(b, *args: str, ok: bool = True) -> str:
    r = subprocess.run(["java", "-Xmx512m", "-cp", f"{kit.KAFKA_LIB}/*", REASSIGN,
                        "--bootstrap-server", b.bootstrap, *args],
                       capture_output=True, text=True, timeout=120, errors="replace")
    out = r.stdout + r.stderr
    if ok:
        assert r.returncode == 0, f"kafka-reassign-partitions {' '.join(args)}:\n{out[-4000:]}"
    return out


def reassignments(b) -> list[dict]:
    """Broker `b`'s admin API: the copies of reassignments of partitions it leads."""
    import urllib.request
    url = f"http://{b.config['strata.admin.listener']}/v1/reassignments"
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)


def plan(tmp_path, topic: str, moves: dict[int, list[int]]) -> str:
    f = tmp_path / f"reassign-{len(list(tmp_path.iterdir()))}.json"
    f.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": topic, "partition": p, "replicas": r, "log_dirs": ["any"] * len(r)}
        for p, r in moves.items()]}))
    return str(f)


def test_kafka_reassign_partitions_moves_replicas_and_keeps_every_record(cluster, tmp_path):
    b1, b2, b3 = cluster
    topic = kit.unique_topic("reassign")
    a = kit.admin(b1.bootstrap)
    from confluent_kafka.admin import NewTopic
    a.create_topics([NewTopic(topic, 2, replica_assignment=[[1, 2], [2, 3]],
                              config={"min.insync.replicas": "1"})])[topic].result(timeout=30)
    wait_until(lambda: isr(b1, topic) == {0: [1, 2], 1: [2, 3]}, JOIN_WITHIN, "ISRs full",
               lambda: isr(b1, topic))
    before = kit.make_records(300, 2, seed=61, tag="before")
    kit.produce_confluent(b1.bootstrap, topic, before, extra={"acks": "all"})

    moves = {0: [2, 3], 1: [3, 1]}  # 0 leaves its leader's broker 1; 1 moves to 3 and 1
    out = reassign_tool(b2, "--reassignment-json-file", plan(tmp_path, topic, moves), "--execute")
    assert "Successfully started partition reassignment" in out, out

    def verify() -> str:
        return reassign_tool(b3, "--reassignment-json-file", plan(tmp_path, topic, moves),
                             "--verify")
    wait_until(lambda: verify().count("is completed") == 2, JOIN_WITHIN,
               "both reassignments completed", verify)
    placed = leaders(b3, topic)
    assert {p: sorted(r) for p, (_, r) in placed.items()} == {0: [2, 3], 1: [1, 3]}, placed
    assert placed[0][1] == [2, 3] and placed[1][1] == [3, 1], placed
    assert placed[0][0] in (2, 3), placed  # the leader moved off broker 1
    wait_until(lambda: isr(b1, topic) == {0: [2, 3], 1: [1, 3]}, JOIN_WITHIN,
               "the ISRs of the targets", lambda: isr(b1, topic))
    # Removed replicas' data goes from their brokers; the new ones hold the log.
    wait_until(lambda: not b1.partition_dir(topic, 0).exists()
               and not b2.partition_dir(topic, 1).exists(), 15, "removed replicas deleted")
    assert b3.partition_dir(topic, 0).exists() and b1.partition_dir(topic, 1).exists()
    kit.assert_same_records(before, kit.consume_confluent(b1.bootstrap, topic, 2))
    after = kit.make_records(100, 2, seed=62, tag="after")
    kit.produce_confluent(b2.bootstrap, topic, after, extra={"acks": "all"})
    kit.assert_same_records(before + after, kit.consume_confluent(b3.bootstrap, topic, 2))
    assert "No partition reassignments found" in reassign_tool(b1, "--list"), \
        reassign_tool(b1, "--list")


# Long enough for a SIGSTOPped broker to stay registered through three runs of the Java tool
# (its DescribeCluster must still list it); a lapsed registration is "Unknown broker id".
STOPPED_LEASE_MS = 90_000


@pytest.fixture
def long_lease_cluster(tmp_path, broker_factory):
    etcd, brokers = start_cluster(tmp_path, broker_factory,
                                  extra={"strata.etcd.lease.ttl.ms": str(STOPPED_LEASE_MS)})
    yield brokers
    for b in brokers:
        b.stop()
    etcd.stop_all()


def test_a_reassignment_that_cannot_finish_is_listed_and_cancelled(long_lease_cluster, tmp_path):
    cluster = long_lease_cluster
    by_node = {int(b.config["node.id"]): b for b in cluster}
    controller = metadata(cluster[0]).controller_id
    keep, new = [n for n in (1, 2, 3) if n != controller]
    ctl, stay, stopped = by_node[controller], by_node[keep], by_node[new]
    topic = kit.unique_topic("cancel")
    from confluent_kafka.admin import NewTopic
    a = kit.admin(ctl.bootstrap)  # kept: the futures need their client
    a.create_topics([NewTopic(topic, 1, replica_assignment=[[controller, keep]])])[topic].result(
        timeout=30)
    wait_until(lambda: isr(stay, topic) == {0: sorted([controller, keep])}, JOIN_WITHIN,
               "ISR full", lambda: isr(stay, topic))
    recs = kit.make_records(100, 1, seed=63, tag="cancel")
    kit.produce_confluent(stay.bootstrap, topic, recs, extra={"acks": "all"})
    moves = {0: [controller, keep, new]}
    stopped.proc.send_signal(signal.SIGSTOP)  # the new replica's broker cannot catch up
    try:
        out = reassign_tool(stay, "--reassignment-json-file", plan(tmp_path, topic, moves),
                            "--execute")
        assert "Successfully started partition reassignment" in out, out
        listed = reassign_tool(ctl, "--list")
        assert f"{topic}-0: replicas: {controller},{keep},{new}. adding: {new}." in listed, listed
        # --preserve-throttles: clearing them would address the stopped broker itself.
        out = reassign_tool(stay, "--reassignment-json-file", plan(tmp_path, topic, moves),
                            "--cancel", "--preserve-throttles")
        assert "Successfully cancelled" in out, out
        placed = leaders(stay, topic)
        assert placed[0][1] == [controller, keep], placed
    finally:
        stopped.proc.send_signal(signal.SIGCONT)
    assert "No partition reassignments found" in reassign_tool(stay, "--list")
    kit.assert_same_records(recs, kit.consume_confluent(ctl.bootstrap, topic, 1))


def test_a_throttled_reassignment_copies_at_the_throttle_rate(cluster, tmp_path):
    """--throttle sets Kafka's replication quotas (the brokers' leader/follower
    .replication.throttled.rate, the topic's throttled replicas): a new replica copies the log
    at about that rate, not faster; --verify at the end removes the throttles."""
    b1, b2, b3 = cluster
    topic = kit.unique_topic("throttle")
    from confluent_kafka.admin import NewTopic
    a = kit.admin(b1.bootstrap)
    a.create_topics([NewTopic(topic, 1, replica_assignment=[[1]])])[topic].result(timeout=30)
    recs = kit.make_records(8000, 1, seed=64, tag="throttle", value_size=2000)  # about 8 MB
    kit.produce_confluent(b1.bootstrap, topic, recs)
    total = sum(f.stat().st_size for f in b1.partition_dir(topic, 0).glob("*.log"))
    assert total > 7_000_000, total
    rate = 1_000_000  # bytes/s

    # --generate proposes a placement on the brokers given; here it adds broker 2.
    topics_file = tmp_path / "topics-to-move.json"
    topics_file.write_text(json.dumps({"version": 1, "topics": [{"topic": topic}]}))
    generated = reassign_tool(b3, "--topics-to-move-json-file", str(topics_file),
                              "--broker-list", "2", "--generate")
    current, proposed = [json.loads(line) for line in generated.splitlines()
                         if line.startswith("{")]
    assert current["partitions"][0]["replicas"] == [1], generated
    assert proposed["partitions"][0]["replicas"] == [2], generated
    moves = {0: [1, 2]}
    out = reassign_tool(b3, "--reassignment-json-file", plan(tmp_path, topic, moves),
                        "--execute", "--throttle", str(rate))
    assert "Successfully started partition reassignment" in out, out
    seen: list[tuple[float, int]] = []
    progress: list[dict] = []

    def copied() -> int:
        n = sum(f.stat().st_size for f in b2.partition_dir(topic, 0).glob("*.log")) \
            if b2.partition_dir(topic, 0).exists() else 0
        seen.append((time.monotonic(), n))
        progress.extend(reassignments(b1))  # the leader's view of the copy
        return n
    # The whole copy at the throttle takes total / rate seconds, plus a second of burst.
    wait_until(lambda: copied() >= total, total / rate * 3 + JOIN_WITHIN, "the copy done",
               lambda: seen[-1], interval=0.2)
    started = next(t for t, n in seen if n > 0)
    took = seen[-1][0] - started
    measured = total / max(took, 1e-3)
    # One second's worth may go at once; after that the rate holds.
    print(f"throttled copy: {total} bytes in {took:.2f}s = {measured:.0f} B/s at {rate} B/s")
    assert measured <= rate * 1.5, f"copied {total} bytes in {took:.2f}s ({measured:.0f} B/s)"
    assert took >= (total - rate) / rate * 0.8, f"{took:.2f}s for {total} bytes"

    # The leader showed the copy going on: bytes to copy, copied, a rate and a time left.
    running = [c for c in progress if 0 < c["bytes_copied"] < c["bytes_total"]]
    assert running, progress[-3:]
    last = running[-1]
    assert (last["topic"], last["partition"], last["replica"]) == (topic, 0, 2), last
    assert last["target_replicas"] == [1, 2] and not last["in_isr"], last
    assert abs(last["bytes_total"] - total) < total * 0.1, (last, total)
    assert any(c["eta_seconds"] > 0 and c["bytes_per_second"] > 0 for c in running), running[-3:]
    assert f"{topic}-0: reassignment to [1,2]: replica 2 copied" in b1.log_text()
    outs: list[str] = []

    def verify() -> str:
        outs.append(reassign_tool(b3, "--reassignment-json-file", plan(tmp_path, topic, moves),
                                  "--verify"))
        return outs[-1]
    wait_until(lambda: "is completed" in verify(), JOIN_WITHIN, "the reassignment completed",
               lambda: outs[-1:])
    assert "Clearing broker-level throttles on brokers" in outs[-1], outs[-1]
    assert "Clearing topic-level throttles" in outs[-1], outs[-1]
    kit.assert_same_records(recs, kit.consume_confluent(b2.bootstrap, topic, 1))


# Configs of the moved-produce test: broker 2's lease (while it lives, broker 2 stays in the
# ISR though SIGSTOPped), replica.lag.time.max.ms (the other way broker 2 would leave the ISR:
# no fetch for that long) and the produce's own timeout.
MOVED_LEASE_MS = 20_000
MOVED_LAG_MS = 30_000
MOVED_PRODUCE_TIMEOUT_MS = 60_000


def test_an_acks_all_produce_waiting_on_a_replica_moved_away_is_answered_at_once(
        tmp_path, broker_factory):
    """A leader's acks=all produce waits for its ISR. When a reassignment moves the partition
    off that broker meanwhile, the request is answered NOT_LEADER_OR_FOLLOWER at once (the
    producer retries on the new leader), as Kafka completes a delayed produce on a leadership
    change; it does not hang until its timeout (holding up the producer's other partitions on
    that connection). Here the follower on broker 2 is SIGSTOPped (a 20 s lease keeps it in
    the ISR), so a produce to leader 1 waits while the partition moves to broker 3.

    "At once" is bounded by the configs: nothing but the move may answer it, so the answer
    must come before anything else could have: the produce's timeout, or broker 2 leaving the
    ISR (its lease expiring, or replica.lag.time.max.ms without a fetch), each counted from the
    SIGSTOP. An answer at the timeout, or one after broker 2 left the ISR, fails the test."""
    import rawkafka
    from confluent_kafka.admin import NewTopic
    from test_cluster import start_cluster
    etcd, brokers = start_cluster(tmp_path, broker_factory, extra={
        "strata.etcd.lease.ttl.ms": str(MOVED_LEASE_MS),
        "replica.lag.time.max.ms": str(MOVED_LAG_MS)})
    b1, b2, b3 = brokers
    # The first of the other ways the produce could be answered, after the SIGSTOP.
    bound_s = min(MOVED_PRODUCE_TIMEOUT_MS, MOVED_LEASE_MS, MOVED_LAG_MS) / 1000
    try:
        topic = kit.unique_topic("moved-wait")
        a = kit.admin(b1.bootstrap)
        a.create_topics([NewTopic(topic, 1, replica_assignment=[[1, 2]])])[topic].result(30)
        wait_until(lambda: isr(b1, topic) == {0: [1, 2]}, JOIN_WITHIN, "ISR [1, 2]",
                   lambda: isr(b1, topic))
        batch = rawkafka.record_batch([(None, b"waits for broker 2", [])], kit.BASE_TS)
        stopped = time.monotonic()
        b2.proc.send_signal(signal.SIGSTOP)
        with rawkafka.Conn(b1.bootstrap) as c:
            c.send(rawkafka.request(0, 8, 7, rawkafka.produce_body(
                8, topic, 0, batch, acks=-1, timeout_ms=MOVED_PRODUCE_TIMEOUT_MS)))
            sent = time.monotonic()
            reassign_tool(b3, "--reassignment-json-file", plan(tmp_path, topic, {0: [3]}),
                          "--execute")
            wait_until(lambda: leaders(b3, topic)[0] == (3, [3]), JOIN_WITHIN,
                       "the partition moved to broker 3", lambda: leaders(b3, topic))
            moved = time.monotonic()
            # Waits no longer than the bound: past it, something else could have answered.
            c.sock.settimeout(max(0.001, stopped + bound_s - moved))
            try:
                _, body = c.recv_frame()
            except TimeoutError:
                raise AssertionError(
                    f"no answer {time.monotonic() - moved:.1f}s after the move "
                    f"({time.monotonic() - stopped:.1f}s after the SIGSTOP, bound {bound_s}s)"
                ) from None
            answered = time.monotonic()
        [(_, _, code, _)] = rawkafka.parse_produce_response(8, body)
        timing = (f"answered {answered - moved:.2f}s after the move was seen, "
                  f"{answered - sent:.1f}s after sending, {answered - stopped:.1f}s after the "
                  f"SIGSTOP (bound {bound_s}s)")
        print(timing)
        # NOT_LEADER_OR_FOLLOWER; or, when broker 3 had joined the ISR with the record
        # before broker 2 left it in the move's ISR change, a success: then the record must
        # be on the new leader.
        assert code in (6, 0), (code, timing)
        assert answered - stopped < bound_s, timing
        assert isr(b3, topic) == {0: [3]}
        if code == 0:
            got = kit.consume_confluent(b3.bootstrap, topic, 1, timeout=60)
            assert [m.value() for m in got[0]] == [b"waits for broker 2"], (timing, got)
    finally:
        b2.proc.send_signal(signal.SIGCONT)
        for b in brokers:
            b.stop()
        etcd.stop_all()
