"""A replica that is not contiguous with remote storage never leads, whoever asks.

Three brokers on one etcd with the default shared file:// remote store (test_cluster's
`start_cluster`). A replica is made non-contiguous deterministically: its broker comes back with
a wiped disk, so it rebuilds a tiered partition from the leader's active segment, and the
leaders' uploads all fail (the test-only fault seam `strata.remote.fault.put.fail.ratio=1`), so
remote storage never reaches its log start and the flag stays. The partition record (read
from etcd) lists it in `non_contiguous` before every election attempt.

What is checked:
- `kafka-leader-election --election-type UNCLEAN` with the leader and every ISR member dead
  and only the non-contiguous replica live: refused with ELIGIBLE_LEADERS_NOT_AVAILABLE, the
  partition stays offline (same leader epoch), and once an ISR member returns it leads with
  every acknowledged record;
- the non-contiguous replica is the preferred one: `kafka-leader-election --election-type
  PREFERRED` is refused with PREFERRED_LEADER_NOT_AVAILABLE and the automatic preferred-leader
  rebalance (leader.imbalance.check.interval.seconds=1) leaves the partition to its leader for
  several checks, while in the same checks it gives a partition of a topic without remote
  storage back to the same broker; every acknowledged record is read back;
- the dangerous case: the preferred replica is SIGKILLed while it is the last ISR member (the
  other replica left it by a clean shutdown, so it is an eligible leader replica and the high
  watermark stopped), its disk is wiped and it is restarted at once, while another broker is
  the controller, checking the leader imbalance every second, and preferred elections are asked
  for without pause (raw ElectLeaders) throughout the restart. From its restart on it is never
  elected and never takes a write as leader; the controller marks it non-contiguous while it stays the ISR's last
  member; neither the imbalance check nor a PREFERRED election (it is preferred, live and in the
  ISR: only the contiguity rule stands in the way) nor an UNCLEAN one elects it, and the
  partition stays offline until the eligible replica returns and leads. Once the wiped replica
  has rebuilt from the active segment, joined up with remote storage and rejoined the ISR, every
  acknowledged record is served, the imbalance check gives it its leadership back (so
  kafka-leader-election PREFERRED finds the election not needed), and it serves every record,
  the history from remote storage; the record that elected the other replica did not make the
  wiped one an eligible leader replica.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import time

import pytest
from confluent_kafka.admin import NewTopic

import kit
import rawkafka
from kit import wait_until
from test_cluster import OFFLINE_WITHIN, PREFIX, leaders, metadata, prometheus, start_cluster
from test_replication import JOIN_WITHIN, produce_raw
from test_fast_migration import partition_state
from test_tiered_cluster import local_logs

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's cluster mode")

SEGMENT = 64 << 10  # segment.bytes of the tiered topics: a few hundred KiB make several segments
# The autobalancer and its self-healing (on by default) move replicas by reassignment: here
# only the controller's elections may change a leader.
NO_BALANCER = {"strata.balancer.enable": "false", "strata.balancer.self.healing.enable": "false"}
# Every remote Put fails on every broker (the fault seam): the remote log stays empty, so a
# replica whose log starts above offset 0 has a gap to remote storage that never closes.
NO_UPLOADS = {**NO_BALANCER, "strata.remote.fault.put.fail.ratio": "1"}
BALANCE_INTERVAL_S = 1  # leader.imbalance.check.interval.seconds of the rebalance test
REMOTE_TASK_MS = 500  # remote.log.manager.task.interval.ms (start_cluster's): one upload pass
# A replica rebuilt from the leader's active segment joins up with remote storage once the
# leader has uploaded up to its log start: the segments it rolled, a pass or a few each, and
# then joins the ISR like any follower.
REBUILT_WITHIN = JOIN_WITHIN + 20 * REMOTE_TASK_MS / 1000

# ElectLeaders refusals as Kafka 4.1's LeaderElectionCommand prints them.
PREFERRED_NOT_AVAILABLE = "PreferredLeaderNotAvailableException"
ELIGIBLE_NOT_AVAILABLE = "EligibleLeadersNotAvailableException"


def tiered_config(**more: str) -> dict[str, str]:
    # retention.ms -1: the records carry old CreateTimes (kit.BASE_TS).
    return {"remote.storage.enable": "true", "segment.bytes": str(SEGMENT), "retention.ms": "-1",
            "min.insync.replicas": "1", **more}


def produce(b, topic: str, recs: list[kit.Rec]) -> None:
    """acks=all, in batches well below segment.bytes (a batch larger than a segment is refused)."""
    kit.produce_confluent(b.bootstrap, topic, recs, extra={"batch.size": SEGMENT // 4})


_topic_ids: dict[str, str] = {}


def record(etcd, topic: str) -> dict:
    """Partition 0's record as the controller wrote it in etcd (empty lists filled in)."""
    if topic not in _topic_ids:
        key = f"{PREFIX}/topics/{topic}"
        _topic_ids[topic] = json.loads(etcd.get_prefix(key)[key]["value"])["id"]
    key = f"{PREFIX}/partitions/{_topic_ids[topic]}/0"
    rec = json.loads(etcd.get_prefix(key)[key]["value"])
    for ids in ("isr", "elr", "last_known_elr", "non_contiguous", "adding", "removing"):
        rec.setdefault(ids, [])
    rec["isr"] = sorted(rec["isr"])
    return rec


def election_tool(b, election_type: str, topic: str) -> tuple[int, str]:
    """kafka-leader-election for partition 0 of `topic` through broker `b` -> (exit code,
    output)."""
    r = subprocess.run(
        ["java", "-Xmx512m", "-cp", f"{kit.KAFKA_LIB}/*",
         "org.apache.kafka.tools.LeaderElectionCommand", "--bootstrap-server", b.bootstrap,
         "--election-type", election_type, "--topic", topic, "--partition", "0"],
        capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout + r.stderr


def assert_refused(election: tuple[int, str], election_type: str, topic: str,
                   exception: str) -> None:
    rc, out = election
    print(f"kafka-leader-election {election_type} (exit {rc}): {out.strip()}")
    assert rc != 0, f"kafka-leader-election {election_type} exited 0:\n{out}"
    assert re.search(rf"Error completing leader election \({election_type}\) for partition: "
                     rf"{re.escape(topic)}-0: \S*{exception}", out), out


def wipe_and_restart(b) -> None:
    """A clean stop (controlled shutdown: the broker's leaderships and ISR memberships move
    first), the disk wiped, the same node id started again."""
    assert b.stop() == 0
    shutil.rmtree(b.data_dir)
    b.start()


def steady(what: str, seconds: float, check) -> None:
    """`check()` (it asserts) holds at every look over `seconds`: an observation window
    spanning several of the controller's periodic decisions, not a wait for a condition."""
    deadline = time.monotonic() + seconds
    looks = 0
    while True:
        check()
        looks += 1
        if time.monotonic() >= deadline:
            break
        time.sleep(0.2)
    print(f"{what}: held over {seconds:.1f}s ({looks} looks)")


def test_an_unclean_election_asked_for_never_picks_a_non_contiguous_replica(
        tmp_path, broker_factory):
    """Broker 3 comes back with a wiped disk and rebuilds its replica from the leader's active
    segment; with no uploads its log never joins up with remote storage. The leader and the
    other in-sync replica are SIGKILLed: broker 3 is the only live replica, and the operator's
    UNCLEAN election (the topic does not allow unclean election) is refused: electing it would
    lose everything below its log start. Broker 2, in the ISR, comes back and leads with every
    acknowledged record."""
    etcd, brokers = start_cluster(tmp_path, broker_factory, extra=NO_UPLOADS)
    try:
        b1, b2, b3 = brokers
        topic = kit.unique_topic("unclean-gap")
        a = kit.admin(b1.bootstrap)
        a.create_topics([NewTopic(topic, 1, replica_assignment=[[1, 2, 3]],
                                  config=tiered_config())])[topic].result(timeout=30)
        wait_until(lambda: record(etcd, topic)["isr"] == [1, 2, 3], JOIN_WITHIN, "the ISR full",
                   lambda: record(etcd, topic))
        before = kit.make_records(1500, 1, seed=281, tag="before")  # several segments
        produce(b1, topic, before)

        wipe_and_restart(b3)
        wait_until(lambda: record(etcd, topic)["non_contiguous"] == [3], JOIN_WITHIN,
                   "broker 3 marked not contiguous with remote storage",
                   lambda: (record(etcd, topic), local_logs(b3, topic)
                            if b3.partition_dir(topic, 0).exists() else None))
        assert local_logs(b3, topic)[0] > 0, local_logs(b3, topic)  # the gap: it holds no history
        # Acknowledged by brokers 1 and 2 only: broker 3 is out of the ISR.
        after = kit.make_records(300, 1, seed=282, tag="after")
        produce(b1, topic, after)
        assert record(etcd, topic)["isr"] == [1, 2], record(etcd, topic)

        b1.kill9()
        b2.kill9()
        wait_until(lambda: record(etcd, topic)["leader"] == -1, OFFLINE_WITHIN,
                   "the partition offline", lambda: record(etcd, topic))
        wait_until(lambda: "not contiguous with remote storage" in b3.log_text(), OFFLINE_WITHIN,
                   "the controller (broker 3) saying why the partition stays offline")
        offline = record(etcd, topic)
        # Broker 2 may have led for a moment between the two kills (ISR [2]); either way the
        # ISR holds only dead brokers with every acknowledged record.
        assert offline["non_contiguous"] == [3] and offline["isr"] in ([1, 2], [2]), offline

        assert_refused(election_tool(b3, "UNCLEAN", topic), "UNCLEAN", topic,
                       ELIGIBLE_NOT_AVAILABLE)
        now = record(etcd, topic)
        assert (now["leader"], now["leader_epoch"]) == (-1, offline["leader_epoch"]), now
        assert leaders(b3, topic)[0][0] == -1, leaders(b3, topic)

        b2.start()  # an in-sync replica with every acknowledged record
        wait_until(lambda: record(etcd, topic)["leader"] == 2, OFFLINE_WITHIN + JOIN_WITHIN,
                   "broker 2 leading", lambda: record(etcd, topic))
        got = kit.consume_confluent(b2.bootstrap, topic, 1, timeout=120)
        kit.assert_same_records(before + after, got)
        assert record(etcd, topic)["non_contiguous"] == [3], record(etcd, topic)
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()


def test_preferred_elections_asked_for_or_automatic_never_pick_a_non_contiguous_replica(
        tmp_path, broker_factory):
    """Broker 3 is the preferred (first) replica of a tiered partition and of a partition
    without remote storage. It comes back with a wiped disk: the plain partition is copied
    whole, rejoins the ISR and the imbalance check gives it back to broker 3; the tiered one is
    rebuilt from the active segment and, with no uploads, stays non-contiguous. Broker 3 stays
    imbalanced (its tiered partition led by broker 1), yet check after check the rebalance
    leaves it to broker 1, and the operator's PREFERRED election is refused."""
    etcd, brokers = start_cluster(tmp_path, broker_factory, extra={
        **NO_UPLOADS, "leader.imbalance.check.interval.seconds": str(BALANCE_INTERVAL_S),
        # Imbalanced as soon as one preferred partition is led by another, whatever the number
        # of internal partitions that prefer the same broker.
        "leader.imbalance.per.broker.percentage": "0"})
    try:
        b1, b2, b3 = brokers
        tiered, plain = kit.unique_topic("preferred-gap"), kit.unique_topic("preferred-plain")
        a = kit.admin(b1.bootstrap)
        fs = a.create_topics([
            NewTopic(tiered, 1, replica_assignment=[[3, 1, 2]], config=tiered_config()),
            NewTopic(plain, 1, replica_assignment=[[3, 1, 2]],
                     config={"min.insync.replicas": "1"})])
        for f in fs.values():
            f.result(timeout=30)
        for t in (tiered, plain):
            wait_until(lambda t=t: (lambda r: r["leader"] == 3 and r["isr"] == [1, 2, 3])(
                record(etcd, t)), JOIN_WITHIN, f"{t}: broker 3 leading, the ISR full",
                lambda t=t: record(etcd, t))
        recs = {t: kit.make_records(1500, 1, seed=283 + i, tag=t)
                for i, t in enumerate((tiered, plain))}
        for t in (tiered, plain):
            produce(b1, t, recs[t])

        wipe_and_restart(b3)
        wait_until(lambda: record(etcd, tiered)["non_contiguous"] == [3], JOIN_WITHIN,
                   "broker 3 marked not contiguous with remote storage",
                   lambda: record(etcd, tiered))
        # The rebalance runs: the plain partition, copied whole and back in the ISR, is given
        # back to broker 3 by an imbalance check.
        wait_until(lambda: record(etcd, plain)["leader"] == 3,
                   JOIN_WITHIN + 2 * BALANCE_INTERVAL_S,
                   "the plain partition given back to broker 3 by the rebalance",
                   lambda: (record(etcd, plain), record(etcd, tiered)))
        flagged = record(etcd, tiered)
        assert flagged["leader"] == 1 and flagged["isr"] == [1, 2], flagged
        assert "preferred elections for" in "".join(b.log_text() for b in brokers)

        def tiered_stays_with_broker_1():
            r = record(etcd, tiered)
            assert (r["leader"], r["leader_epoch"], r["isr"], r["non_contiguous"]) == (
                1, flagged["leader_epoch"], [1, 2], [3]), r
        # Broker 3 live and imbalanced (one of its two preferred partitions led by another),
        # its tiered replica flagged: several checks, none elects it.
        steady("the automatic rebalance leaving the tiered partition to broker 1",
               4 * BALANCE_INTERVAL_S + 1, tiered_stays_with_broker_1)

        assert record(etcd, tiered)["non_contiguous"] == [3]
        assert_refused(election_tool(b2, "PREFERRED", tiered), "PREFERRED", tiered,
                       PREFERRED_NOT_AVAILABLE)
        tiered_stays_with_broker_1()
        assert leaders(b2, tiered)[0][0] == 1, leaders(b2, tiered)

        kit.assert_same_records(recs[tiered], kit.consume_confluent(b1.bootstrap, tiered, 1))
        kit.assert_same_records(recs[plain], kit.consume_confluent(b3.bootstrap, plain, 1))
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()


def produce_answers_until(b, topic: str, done, timeout: float) -> tuple[list, bool]:
    """Produce (acks=1, one record) straight to broker `b` again and again until `done()`,
    `timeout` seconds or a write taken (answer 0): (the answers, error codes or the connection
    error; whether done)."""
    answers: list = []
    deadline = time.monotonic() + timeout
    while True:
        try:
            answers.append(produce_raw(b, topic, 1))
        except OSError as e:
            answers.append(repr(e))
        if done():
            return answers, True
        if answers[-1] == 0 or time.monotonic() > deadline:
            return answers, False


class PreferredElections:
    """Asks broker `b` (the controller) for a preferred election of partition 0 of `topic` over
    and over (raw ElectLeaders v1, as fast as it answers) while running: what an impatient
    operator's script would do while a broker restarts. `codes` holds every answer's error code
    for the partition (0: elected)."""

    def __init__(self, b, topic: str):
        import threading
        self.b, self.topic = b, topic
        self.codes: list = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def body(self) -> bytes:
        w = rawkafka.Writer().i8(0)  # PREFERRED
        w.array([self.topic], lambda w, t: w.string(t).array([0], lambda w, p: w.i32(p)))
        return bytes(w.i32(5000).buf)

    def run(self):
        corr = 0
        while not self.stop.is_set():
            try:
                with rawkafka.Conn(self.b.bootstrap) as c:
                    while not self.stop.is_set():
                        corr += 1
                        c.send(rawkafka.request(43, 1, corr, self.body()))
                        _, resp = c.recv_frame()
                        r = rawkafka.Reader(resp)
                        r.i32()  # throttle
                        top = r.i16()
                        codes = []
                        for _ in range(r.array_len()):
                            r.string()
                            for _ in range(r.array_len()):
                                r.i32()
                                codes.append(r.i16())
                                r.string()
                        self.codes.append(top or codes[0])
                        if self.codes[-1] == 0:
                            return  # elected: the test fails on it
            except (OSError, ValueError) as e:
                self.codes.append(repr(e))

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(30)


def controller(brokers):
    """The running broker that is the active controller now, or None."""
    live = [b for b in brokers if b.running]
    active = [b for b in live if prometheus(b).get("strata_active_controller") == 1]
    return active[0] if len(active) == 1 else None


def make_controller(brokers, node: int) -> None:
    """Broker `node` the active controller. Which broker wins a campaign is a race the same
    broker may win every time, so the controllers are stopped (a clean stop hands the role
    over) until `node` has the role, at the latest when it is the only broker left running;
    then the others are started again."""
    stopped = []
    try:
        for _ in range(len(brokers)):
            c = wait_until(lambda: controller(brokers), OFFLINE_WITHIN, "an active controller")
            if int(c.config["node.id"]) == node:
                return
            assert c.stop() == 0
            stopped.append(c)
        raise AssertionError(f"broker {node} never became the controller; stopped "
                             f"{[b.config['node.id'] for b in stopped]}")
    finally:
        for b in stopped:
            b.start()
        wait_until(lambda: len(metadata(brokers[0]).brokers) == len(brokers), OFFLINE_WITHIN,
                   f"{len(brokers)} registered brokers", lambda: metadata(brokers[0]).brokers)


# Imbalance checks of the dangerous-case test: every second, and a broker counts as imbalanced
# as soon as one of its preferred partitions is led by another (or by nobody).
IMBALANCE_CHECKS = {"leader.imbalance.check.interval.seconds": str(BALANCE_INTERVAL_S),
                    "leader.imbalance.per.broker.percentage": "0",
                    "auto.leader.rebalance.enable": "true"}


def test_a_last_in_sync_replica_killed_and_wiped_is_not_elected_for_data_it_lost(
        tmp_path, broker_factory):
    """The dangerous case. Broker 1 (preferred) and broker 2 hold a tiered partition with
    min.insync.replicas=2. Broker 2 stops cleanly: it leaves the ISR, which is then below
    min.insync.replicas, so the high watermark stops and broker 2 is an eligible leader replica
    (KIP-966) with every acknowledged record. Broker 1, the ISR's last member, is SIGKILLed, its
    disk wiped, and it is restarted at once. It may not lead for the records it lost: not on the
    record it finds at start-up, not by the controller (which keeps it the ISR's last member
    but marks it non-contiguous), not by the imbalance check (every second, any preferred
    partition led by another counts), not by a PREFERRED election (it is preferred, live and in
    the ISR: only its gap refuses it, in both; raw ElectLeaders are sent to the controller
    without pause from before the kill until it is marked, and kafka-leader-election after),
    not by an UNCLEAN one. The partition stays
    offline until broker 2 returns and leads; every acknowledged record is served once broker 1
    has rebuilt from the active segment, joined up with remote storage and rejoined the ISR.
    Then the imbalance check elects broker 1 (kafka-leader-election PREFERRED finds nothing to
    do), and it serves every record, the history from remote storage."""
    etcd, brokers = start_cluster(tmp_path, broker_factory, extra={**NO_BALANCER,
                                                                   **IMBALANCE_CHECKS})
    try:
        b1, b2, b3 = brokers
        # The controller is neither replica's broker: it is running when broker 1 comes back
        # (not elected in the same moment), with its imbalance checks due every second.
        make_controller(brokers, 3)
        topic = kit.unique_topic("wiped-last-isr")
        a = kit.admin(b1.bootstrap)
        a.create_topics([NewTopic(topic, 1, replica_assignment=[[1, 2]], config=tiered_config(
            **{"min.insync.replicas": "2"}))])[topic].result(timeout=30)
        wait_until(lambda: (lambda r: r["leader"] == 1 and r["isr"] == [1, 2])(
            record(etcd, topic)), JOIN_WITHIN, "broker 1 leading, ISR [1, 2]",
            lambda: record(etcd, topic))
        recs = kit.make_records(2000, 1, seed=285, tag="acked")
        produce(b1, topic, recs)

        assert b2.stop() == 0
        wait_until(lambda: (lambda r: r["isr"] == [1] and r["elr"] == [2])(record(etcd, topic)),
                   JOIN_WITHIN, "broker 2 out of the ISR and an eligible leader replica",
                   lambda: record(etcd, topic))
        assert produce_raw(b1, topic, -1) == 19  # NOT_ENOUGH_REPLICAS: nothing more acknowledged

        def marked() -> bool:
            r = record(etcd, topic)
            return r["non_contiguous"] == [1] and r["leader"] != 1
        # Preferred elections asked for all along, the imbalance check every second: none may
        # elect broker 1 in the moment it registers again, before the controller has seen
        # that its log directory is new.
        with PreferredElections(b3, topic) as asked:
            b1.kill9()  # the ISR's last member
            killed = record(etcd, topic)
            shutil.rmtree(b1.data_dir)
            b1.start()
            # From its first answer on, broker 1 never takes a write as the partition's leader,
            # and the controller marks it within a lease TTL (its old registration expiring)
            # and a pass.
            answers, done = produce_answers_until(b1, topic, marked, OFFLINE_WITHIN + JOIN_WITHIN)
        seen = (f"{len(answers)} produce answers, {answers.count(0)} of them 0 (written), the "
                f"first {answers[:5]}; {len(asked.codes)} preferred elections asked for, "
                f"{asked.codes.count(0)} of them elected broker 1, the last {asked.codes[-3:]}")
        print(f"from broker 1's restart until marked: {seen}")
        what = ("was elected" if 0 in answers + asked.codes else "was never marked")
        assert 0 not in answers + asked.codes and done, (
            f"broker 1, back with an empty disk, {what}: {seen}; record at its kill {killed}, "
            f"now {record(etcd, topic)}")
        state = record(etcd, topic)
        # The ISR is never empty: broker 1 stays its last member, marked, and nobody leads.
        assert (state["leader"], state["isr"], state["elr"], state["non_contiguous"]) == (
            -1, [1], [2], [1]), state
        assert state["leader_epoch"] > killed["leader_epoch"], (killed, state)
        assert "came back with an empty log directory" in "".join(b.log_text() for b in brokers)

        def still_offline():
            r = record(etcd, topic)
            assert (r["leader"], r["leader_epoch"], r["isr"], r["non_contiguous"]) == (
                -1, state["leader_epoch"], [1], [1]), r
        # Broker 1 is imbalanced (its one preferred partition led by nobody) and is the preferred
        # replica, live and in the ISR: several imbalance checks, none elects it.
        steady("the imbalance check leaving the partition offline", 4 * BALANCE_INTERVAL_S + 1,
               still_offline)
        assert_refused(election_tool(b3, "PREFERRED", topic), "PREFERRED", topic,
                       PREFERRED_NOT_AVAILABLE)
        assert_refused(election_tool(b3, "UNCLEAN", topic), "UNCLEAN", topic,
                       ELIGIBLE_NOT_AVAILABLE)
        still_offline()
        assert leaders(b3, topic)[0][0] == -1, leaders(b3, topic)
        answers, _ = produce_answers_until(b1, topic, lambda: True, 0)
        assert 0 not in answers, answers

        b2.start()  # the eligible leader replica, with every acknowledged record
        wait_until(lambda: record(etcd, topic)["leader"] == 2, OFFLINE_WITHIN + JOIN_WITHIN,
                   "broker 2 elected from the ELR", lambda: record(etcd, topic))
        elected = record(etcd, topic)
        print(f"broker 2 elected: {elected}")
        # Its ISR ([2]) is below min.insync.replicas, so its high watermark stays where it last
        # heard it as a follower (KIP-966: it advances only with min.insync.replicas in sync):
        # what is readable now is a prefix of what was acknowledged, identical.
        got = kit.consume_confluent(b2.bootstrap, topic, 1, timeout=120)
        print(f"readable through broker 2 before broker 1 rejoins: {len(got[0])} of {len(recs)}")
        assert got[0], "nothing readable through broker 2"
        kit.assert_same_records(recs[:len(got[0])], got)

        # Broker 1 rebuilds from broker 2's active segment: once uploads reach its log start
        # the flag goes and it joins the ISR (min.insync.replicas in sync again, so the high
        # watermark passes every acknowledged record); its log holds none of the history.
        wait_until(lambda: (lambda r: r["isr"] == [1, 2] and r["non_contiguous"] == [])(
            record(etcd, topic)), REBUILT_WITHIN,
            "broker 1 contiguous and in the ISR, so that every acknowledged record is served",
            lambda: {"record": record(etcd, topic), "leader (broker 2)": partition_state(b2, topic),
                     "broker 1": partition_state(b1, topic)})
        assert local_logs(b1, topic)[0] > 0, local_logs(b1, topic)
        # min.insync.replicas in sync again: every acknowledged record, through broker 2.
        kit.assert_same_records(recs, kit.consume_confluent(b2.bootstrap, topic, 1, timeout=120))

        # Contiguous and in the ISR, broker 1 is given its preferred leadership back.
        wait_until(lambda: record(etcd, topic)["leader"] == 1, JOIN_WITHIN + 2 * BALANCE_INTERVAL_S,
                   "broker 1 leading again (the imbalance check)", lambda: record(etcd, topic))
        rc, out = election_tool(b3, "PREFERRED", topic)
        assert f"Valid replica already elected for partitions {topic}-0" in out, out  # not needed
        # Every acknowledged record through broker 1, the history from remote storage.
        kit.assert_same_records(recs, kit.consume_confluent(b1.bootstrap, topic, 1, timeout=120))

        # The record that elected broker 2 (checked last, so that a failure above is reported
        # first): broker 1, known to hold nothing, is no eligible leader replica in it. Only its
        # flag kept it from being elected from the ELR; once the flag goes (uploads reaching its
        # log start) it would be elected while still short of the high watermark.
        assert 1 not in elected["elr"] and elected["non_contiguous"] == [1], (
            f"broker 1, back with an empty log directory, was made an eligible leader replica "
            f"when broker 2 was elected: {elected}")
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()
