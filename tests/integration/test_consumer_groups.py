"""Consumer groups (classic rebalance protocol) against the broker, with real clients.

Consumers run as separate processes (this file re-runs itself as a small confluent-kafka
consumer: `python3 test_consumer_groups.py consume ...`) so they can be SIGKILLed. Each one
reports on stdout which partitions it owns after every rebalance ("OWNED 0,1,2") and every
record it consumed ("M <partition> <offset>"); it commits synchronously what it consumed
(periodically, before partitions are revoked, and when it closes on SIGTERM).

Covered: three members sharing a 12-partition topic while a producer writes (no record
lost, committed offsets == consumed positions, via Consumer.committed and
AdminClient.list_consumer_group_offsets); SIGKILL of a member (its partitions move within
the session timeout) and a clean leave (they move at once); 50 groups rebalancing at the
same time; broker restart (committed offsets kept, running members carry on, a new member
resumes from the commits); replay after the log cleaner compacted __consumer_offsets;
AdminClient list/describe/alter offsets/delete; the time a 4-member group takes to form and
to absorb a 4th member. Java members and kafka-consumer-groups: test_consumer_groups_java.py.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import kit
from kit import wait_until

PARTITIONS = 12
# group.initial.rebalance.delay.ms=0 and a low minimum session timeout keep rebalances fast.
GROUP_CONFIG = {"group.initial.rebalance.delay.ms": 0, "group.min.session.timeout.ms": 1000}
THIS_FILE = Path(__file__).resolve()


# ---- the consumer process ------------------------------------------------------------

def consumer_main(argv: list[str]) -> None:
    """Runs one group member until SIGTERM (clean close) or SIGKILL."""
    import argparse

    from confluent_kafka import Consumer, KafkaError, KafkaException

    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--group", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--session-ms", type=int, default=6000)
    ap.add_argument("--heartbeat-ms", type=int, default=300)
    ap.add_argument("--strategy", default="range")
    ap.add_argument("--instance-id", default=None)
    ap.add_argument("--protocol", default="classic")  # "consumer": KIP-848
    args = ap.parse_args(argv)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    import faulthandler
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # the test's dump of a hung member
    owned: set[int] = set()
    out = sys.stdout

    def emit(line: str) -> None:
        out.write(line + "\n")
        out.flush()

    conf = {"bootstrap.servers": args.bootstrap, "group.id": args.group,
            "enable.auto.commit": False, "auto.offset.reset": "earliest",
            "enable.partition.eof": False}
    if args.protocol == "classic":
        conf.update({"session.timeout.ms": args.session_ms, "heartbeat.interval.ms": args.heartbeat_ms,
                     "partition.assignment.strategy": args.strategy})
    else:  # the broker assigns, revoking incrementally, and times the session out
        conf["group.protocol"] = args.protocol
    if args.instance_id:
        conf["group.instance.id"] = args.instance_id
    if os.environ.get("STRATA_TEST_RDKAFKA_DEBUG"):
        conf["debug"] = os.environ["STRATA_TEST_RDKAFKA_DEBUG"]
    c = Consumer(conf)
    cooperative = args.strategy == "cooperative-sticky" or args.protocol == "consumer"

    def commit() -> None:
        try:
            c.commit(asynchronous=False)
        except KafkaException as e:
            code = e.args[0].code()
            # Nothing consumed yet, or close() already tore the handle down.
            if code in (KafkaError._NO_OFFSET, KafkaError._DESTROY):
                return
            # Refused because a rebalance is under way: the next owner resumes from the
            # last successful commit (at-least-once), as with Kafka.
            # (STALE_MEMBER_EPOCH: KIP-848's, a commit sent just before the member's epoch moved.)
            if code in (KafkaError.REBALANCE_IN_PROGRESS, KafkaError.ILLEGAL_GENERATION,
                        KafkaError.UNKNOWN_MEMBER_ID, KafkaError.STALE_MEMBER_EPOCH):
                emit(f"NOTE commit refused: {e.args[0]}")
                return
            emit(f"COMMIT-ERROR {e.args[0]}")

    def on_assign(consumer, partitions):
        owned.update(tp.partition for tp in partitions)
        emit("OWNED " + ",".join(map(str, sorted(owned))))

    def on_revoke(consumer, partitions):
        # Once SIGTERM came, offsets were committed before unsubscribe() and the drain loop
        # commits what it reads; a synchronous commit from a revocation that close() raises
        # can wait forever in librdkafka 2.x (the group is already left), whatever the broker.
        if not stop.is_set():
            commit()
        if cooperative:
            owned.difference_update(tp.partition for tp in partitions)
        else:
            owned.clear()
        emit("OWNED " + ",".join(map(str, sorted(owned))))

    def on_lost(consumer, partitions):
        owned.difference_update(tp.partition for tp in partitions)
        emit("OWNED " + ",".join(map(str, sorted(owned))))

    c.subscribe([args.topic], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)
    last_commit = time.time()
    while not stop.is_set():
        msgs = c.consume(num_messages=500, timeout=0.2)
        lines = [f"M {m.partition()} {m.offset()}" for m in msgs if m.error() is None]
        if lines:
            out.write("\n".join(lines) + "\n")
            out.flush()
        if time.time() - last_commit > 0.3:
            commit()
            last_commit = time.time()
    commit()
    # Leave through unsubscribe() and serve the callbacks it raises before close(): a close()
    # that meets a revocation already handed to the application (a rebalance that started
    # just as SIGTERM came) can wait forever in librdkafka 2.x, with every broker.
    c.unsubscribe()
    deadline = time.time() + 10
    while (owned or c.assignment()) and time.time() < deadline:
        msgs = c.consume(num_messages=500, timeout=0.1)
        lines = [f"M {m.partition()} {m.offset()}" for m in msgs if m.error() is None]
        if lines:
            out.write("\n".join(lines) + "\n")
            out.flush()
            commit()
    c.close()
    emit("CLOSED")


class Member:
    """A consumer process of the test and what it reported."""

    def __init__(self, bootstrap: str, group: str, topic: str, **opts):
        cmd = [sys.executable, str(THIS_FILE), "consume", "--bootstrap", bootstrap,
               "--group", group, "--topic", topic]
        for k, v in opts.items():
            cmd += [f"--{k.replace('_', '-')}", str(v)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, cwd=THIS_FILE.parent)
        self.lock = threading.Lock()
        self.consumed: set[tuple[int, int]] = set()
        self.consumed_by_topic: set[tuple[str, int, int]] = set()
        self.owned: set[int] = set()
        self.owned_history: list[tuple[float, frozenset]] = []
        self.errors: list[str] = []
        self.closed = False
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.stderr = ""
        self.err_reader = threading.Thread(target=self._read_err, daemon=True)
        self.err_reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            parts = line.split()
            if not parts:
                continue
            with self.lock:
                if parts[0] == "M":
                    self.consumed.add((int(parts[1]), int(parts[2])))
                elif parts[0] == "MT":  # a pattern subscription's record: topic, partition, offset
                    self.consumed_by_topic.add((parts[1], int(parts[2]), int(parts[3])))
                elif parts[0] == "OWNED":
                    self.owned = {int(p) for p in parts[1].split(",")} if len(parts) > 1 else set()
                    self.owned_history.append((time.time(), frozenset(self.owned)))
                elif parts[0] == "CLOSED":
                    self.closed = True
                elif parts[0] != "NOTE":
                    self.errors.append(line.strip())

    def _read_err(self) -> None:
        for line in self.proc.stderr:
            self.stderr += line

    def snapshot(self) -> tuple[set[int], set[tuple[int, int]]]:
        with self.lock:
            return set(self.owned), set(self.consumed)

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self, timeout: float = 30) -> None:
        """SIGTERM: commit, LeaveGroup, exit."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.send_signal(signal.SIGUSR1)  # faulthandler: where every thread is
                try:
                    wait_until(lambda: "most recent call first" in self.stderr, 5,
                               "the member's stack dump")
                except AssertionError:
                    pass  # kill it anyway; the stderr below says what it did print
                self.proc.kill()
                self.proc.wait(10)
                self.err_reader.join(5)  # everything the client printed
                raise AssertionError(
                    f"consumer still running {timeout:.0f}s after SIGTERM (closed={self.closed}); "
                    f"its stderr (STRATA_TEST_RDKAFKA_DEBUG=cgrp,protocol adds librdkafka's "
                    f"debug log): {self.stderr[-4000:]}") from None
        self.reader.join(5)
        assert self.closed, f"consumer did not close cleanly: {self.stderr[-3000:]}"
        assert not self.errors, self.errors[:5]


@pytest.fixture
def members():
    made: list[Member] = []
    yield made
    for m in made:
        if m.proc.poll() is None:
            m.proc.kill()
            m.proc.wait()


def start_members(made: list, n: int, bootstrap: str, group: str, topic: str, **opts) -> list[Member]:
    new = [Member(bootstrap, group, topic, **opts) for _ in range(n)]
    made.extend(new)
    return new


def balanced(group_members: list[Member], partitions: int = PARTITIONS) -> bool:
    """Every partition owned by exactly one of the members, each owning its fair share."""
    owned = [m.snapshot()[0] for m in group_members]
    union = set().union(*owned)
    share = partitions // len(group_members)
    return (sum(map(len, owned)) == partitions and union == set(range(partitions))
            and all(share <= len(o) <= share + 1 for o in owned))


class BackgroundProducer:
    """Produces `per_partition`-record rounds to every partition until stopped; remembers
    every acknowledged (partition, offset)."""

    def __init__(self, bootstrap: str, topic: str, partitions: int = PARTITIONS, rate_sleep: float = 0.01):
        from confluent_kafka import Producer
        self.p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all"})
        self.topic = topic
        self.partitions = partitions
        self.acked: set[tuple[int, int]] = set()
        self.errors: list = []
        self.stop_flag = threading.Event()
        self.rate_sleep = rate_sleep
        self.undelivered = -1
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _cb(self, err, msg):
        if err is not None:
            self.errors.append(err)
        else:
            self.acked.add((msg.partition(), msg.offset()))

    def _run(self):
        i = 0
        while not self.stop_flag.is_set():
            for p in range(self.partitions):
                self.p.produce(self.topic, value=f"v{i}".encode(), key=f"k{i}".encode(), partition=p,
                               on_delivery=self._cb)
                i += 1
            self.p.poll(0)
            time.sleep(self.rate_sleep)
        # Every record answered before stop() returns: one acknowledged later would be
        # missing from `acked` but present in the log (generous: a loaded 2-core machine
        # running sanitizer builds can take tens of seconds).
        self.undelivered = self.p.flush(120)

    def start(self):
        self.thread.start()
        return self

    def stop(self) -> set[tuple[int, int]]:
        self.stop_flag.set()
        self.thread.join(150)
        assert not self.thread.is_alive() and self.undelivered == 0, (
            f"{self.undelivered} records still unanswered after the producer's flush")
        assert not self.errors, self.errors[:3]
        return set(self.acked)


def all_consumed(group_members: list[Member], wanted: set[tuple[int, int]]) -> bool:
    seen = set()
    for m in group_members:
        seen |= m.snapshot()[1]
    return wanted <= seen


def wait_all_consumed(group_members: list[Member], wanted: set[tuple[int, int]], timeout: float = 60) -> None:
    try:
        wait_until(lambda: all_consumed(group_members, wanted), timeout, "every acknowledged record consumed")
    except AssertionError:
        seen = set().union(*(m.snapshot()[1] for m in group_members))
        missing = sorted(wanted - seen)
        by_p: dict[int, list[int]] = {}
        for p, o in missing:
            by_p.setdefault(p, []).append(o)
        state = [(sorted(m.snapshot()[0]), m.proc.poll(), m.errors[:3], m.stderr[-2000:]) for m in group_members]
        raise AssertionError(f"{len(missing)} records never consumed: "
                             f"{ {p: (min(o), max(o), len(o)) for p, o in by_p.items()} }; members: {state}")


def end_offsets(bootstrap: str, topic: str, partitions: int = PARTITIONS) -> dict[int, int]:
    from confluent_kafka import TopicPartition
    c = kit.consumer_confluent(bootstrap)
    try:
        return {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(partitions)}
    finally:
        c.close()


def admin_committed(bootstrap: str, group: str, topic: str, partitions: int = PARTITIONS) -> dict[int, int]:
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    a = kit.admin(bootstrap)
    req = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, p) for p in range(partitions)])
    res = a.list_consumer_group_offsets([req])[group].result(30)
    return {tp.partition: tp.offset for tp in res.topic_partitions}


def consumer_committed(bootstrap: str, group: str, topic: str, partitions: int = PARTITIONS) -> dict[int, int]:
    """Consumer.committed(), retried while the coordinator is (re)loading after a restart
    (Kafka answers NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS for a while)."""
    from confluent_kafka import KafkaError, KafkaException, TopicPartition
    loading = {KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
               KafkaError.COORDINATOR_NOT_AVAILABLE}
    deadline = time.time() + 60
    c = kit.consumer_confluent(bootstrap, {"group.id": group})
    try:
        while True:
            try:
                got = c.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=30)
                return {tp.partition: tp.offset for tp in got}
            except KafkaException as e:
                if e.args[0].code() not in loading or time.time() > deadline:
                    raise
                time.sleep(0.5)
    finally:
        c.close()


def new_topic(broker, prefix: str, partitions: int = PARTITIONS) -> str:
    topic = kit.unique_topic(prefix)
    kit.create_topic(broker.bootstrap, topic, partitions)
    return topic


@pytest.fixture
def gbroker(broker_factory):
    return broker_factory(config=GROUP_CONFIG)


# ---- tests --------------------------------------------------------------------------

def test_three_members_share_partitions_and_commit_consumed_positions(gbroker, members):
    bs = gbroker.bootstrap
    topic = new_topic(gbroker, "cg-three")
    group = kit.unique_topic("grp-three")
    producer = BackgroundProducer(bs, topic).start()
    trio = start_members(members, 3, bs, group, topic)
    wait_until(lambda: balanced(trio), 60, "3 members with 4 partitions each")
    time.sleep(1.0)  # keep producing while the group is stable
    acked = producer.stop()
    assert len(acked) >= PARTITIONS * 10
    wait_all_consumed(trio, acked)
    # Range over 12 partitions / 3 members: 4 contiguous partitions each, no overlap.
    owned = sorted(sorted(m.snapshot()[0]) for m in trio)
    assert owned == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]], owned
    for m in trio:
        m.stop()
    ends = end_offsets(bs, topic)
    assert ends == {p: max(o for (pp, o) in acked if pp == p) + 1 for p in range(PARTITIONS)}
    assert admin_committed(bs, group, topic) == ends
    assert consumer_committed(bs, group, topic) == ends


def test_sigkilled_member_partitions_move_within_session_timeout(gbroker, members):
    bs = gbroker.bootstrap
    topic = new_topic(gbroker, "cg-kill")
    group = kit.unique_topic("grp-kill")
    session_ms = 3000
    trio = start_members(members, 3, bs, group, topic, session_ms=session_ms)
    wait_until(lambda: balanced(trio), 60, "3 balanced members")
    producer = BackgroundProducer(bs, topic).start()
    victim, survivors = trio[0], trio[1:]
    killed_at = time.time()
    victim.kill9()
    wait_until(lambda: balanced(survivors), 30, "2 survivors owning all 12 partitions")
    moved_after = time.time() - killed_at
    # The coordinator notices within the session timeout, the survivors within a heartbeat.
    assert moved_after < session_ms / 1000 + 3.0, f"partitions moved after {moved_after:.1f}s"
    assert moved_after > session_ms / 1000 * 0.8, f"moved after {moved_after:.1f}s: before the session expired?"
    time.sleep(0.5)
    acked = producer.stop()
    # Nothing acknowledged after the kill is lost (records the victim consumed before
    # dying may be consumed again: at-least-once).
    wait_all_consumed(survivors + [victim], acked)
    for m in survivors:
        m.stop()
    assert admin_committed(bs, group, topic) == end_offsets(bs, topic)


def test_clean_leave_moves_partitions_immediately(gbroker, members):
    bs = gbroker.bootstrap
    topic = new_topic(gbroker, "cg-leave")
    group = kit.unique_topic("grp-leave")
    trio = start_members(members, 3, bs, group, topic, session_ms=30000)
    wait_until(lambda: balanced(trio), 60, "3 balanced members")
    left_at = time.time()
    trio[2].stop()  # commit + LeaveGroup
    wait_until(lambda: balanced(trio[:2]), 20, "2 members owning all partitions")
    moved_after = time.time() - left_at
    assert moved_after < 5.0, f"partitions moved {moved_after:.1f}s after a LeaveGroup (session is 30s)"
    a = kit.admin(bs)  # keep the client alive until its futures complete
    d = a.describe_consumer_groups([group])[group].result(30)
    assert len(d.members) == 2
    assert str(d.state).endswith("STABLE"), d.state
    for m in trio[:2]:
        m.stop()


def test_fifty_groups_rebalance_concurrently(gbroker):
    """50 groups of 2 in-process members each form at the same time; then all leave."""
    from confluent_kafka import Consumer
    bs = gbroker.bootstrap
    topic = new_topic(gbroker, "cg-fifty", partitions=4)
    groups = [kit.unique_topic(f"grp50-{i}") for i in range(50)]
    assigned: dict[int, set] = {}
    lock = threading.Lock()
    stop = threading.Event()

    def run(idx: int, group: str):
        c = Consumer({"bootstrap.servers": bs, "group.id": group, "session.timeout.ms": 10000,
                      "heartbeat.interval.ms": 300, "enable.auto.commit": False,
                      "auto.offset.reset": "earliest"})

        def on_assign(consumer, parts):
            with lock:
                assigned[idx] = {tp.partition for tp in parts}

        def on_revoke(consumer, parts):
            with lock:
                assigned[idx] = set()

        c.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
        while not stop.is_set():
            c.poll(0.1)
        c.close()

    threads = [threading.Thread(target=run, args=(i, groups[i // 2]), daemon=True) for i in range(100)]
    t0 = time.time()
    for t in threads:
        t.start()

    def all_formed():
        with lock:
            return all(len(assigned.get(i, ())) == 2 and
                       assigned[i] | assigned.get(i ^ 1, set()) == {0, 1, 2, 3} for i in range(100))

    try:
        wait_until(all_formed, 90, "50 groups with 2 members owning 2 partitions each", interval=0.2)
        formed = time.time() - t0
        a = kit.admin(bs)  # keep the client alive until its futures complete
        desc = a.describe_consumer_groups(groups)
        for g in groups:
            d = desc[g].result(30)
            assert str(d.state).endswith("STABLE"), (g, d.state)
            assert len(d.members) == 2
            assert sorted(len(m.assignment.topic_partitions) for m in d.members) == [2, 2]
        print(f"\n50 groups x 2 members formed in {formed:.2f}s")
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    a = kit.admin(bs)
    listed = a.list_consumer_groups().result(30)
    states = {g.group_id: str(g.state) for g in listed.valid}
    for g in groups:
        assert states.get(g, "").endswith("EMPTY"), (g, states.get(g))


def test_broker_restart_keeps_offsets_and_members_carry_on(gbroker, members):
    bs = gbroker.bootstrap
    topic = new_topic(gbroker, "cg-restart")
    group = kit.unique_topic("grp-restart")
    pair = start_members(members, 2, bs, group, topic, session_ms=20000)
    wait_until(lambda: balanced(pair), 60, "2 balanced members")
    producer = BackgroundProducer(bs, topic).start()
    time.sleep(1.0)
    first = producer.stop()
    wait_all_consumed(pair, first)
    time.sleep(1.0)  # let the periodic commits land
    before = admin_committed(bs, group, topic)
    assert all(v > 0 for v in before.values()), before
    owned_before = [m.snapshot()[0] for m in pair]

    gbroker.restart()

    # (Consumer.committed first: it waits out a coordinator still loading, which Kafka may
    # answer with; librdkafka's admin client crashes on that error.)
    after = consumer_committed(bs, group, topic)
    assert all(after[p] >= before[p] for p in before), (before, after)  # members keep committing
    producer = BackgroundProducer(bs, topic).start()
    time.sleep(1.5)
    second = producer.stop()
    wait_all_consumed(pair, second)
    # The group was restored from __consumer_offsets as it was: no rebalance needed.
    assert [m.snapshot()[0] for m in pair] == owned_before
    for m in pair:
        m.stop()
    ends = end_offsets(bs, topic)
    assert admin_committed(bs, group, topic) == ends

    # Committed offsets survive a second restart with no member around, and a new member
    # resumes exactly from them.
    gbroker.restart()
    assert consumer_committed(bs, group, topic) == ends
    assert admin_committed(bs, group, topic) == ends
    producer = BackgroundProducer(bs, topic).start()
    time.sleep(0.5)
    third = producer.stop()
    (late,) = start_members(members, 1, bs, group, topic)
    wait_all_consumed([late], third)
    _, consumed = late.snapshot()
    assert min(o for (p, o) in consumed if p == 0) == ends[0]  # nothing older re-read
    late.stop()


def test_offsets_survive_compaction_of_consumer_offsets(broker_factory):
    """Thousands of commits to one __consumer_offsets partition, compacted by the log
    cleaner (small segments, eager cleaner), then a restart: the last commit of every
    partition is what the replay finds, and a deleted group stays deleted."""
    from confluent_kafka import TopicPartition
    if kit.against_kafka():
        pytest.skip("Kafka 4.1 does not bring up __consumer_offsets with 16 KiB segments")
    cfg = dict(GROUP_CONFIG)
    cfg.update({"offsets.topic.num.partitions": 1, "offsets.topic.segment.bytes": 16384,
                "log.cleaner.backoff.ms": 200, "log.cleaner.min.cleanable.ratio": 0.01})
    b = broker_factory(config=cfg)
    bs = b.bootstrap
    topic = new_topic(b, "cg-compact", partitions=4)
    c = kit.consumer_confluent(bs, {"group.id": "compacted-group"})
    doomed = kit.consumer_confluent(bs, {"group.id": "deleted-group"})
    try:
        for i in range(1, 601):
            c.commit(offsets=[TopicPartition(topic, p, i * 10 + p) for p in range(4)], asynchronous=False)
        doomed.commit(offsets=[TopicPartition(topic, 0, 5)], asynchronous=False)
    finally:
        c.close()
        doomed.close()
    a = kit.admin(bs)
    a.delete_consumer_groups(["deleted-group"])["deleted-group"].result(30)
    want = {p: 6000 + p for p in range(4)}
    assert admin_committed(bs, "compacted-group", topic, 4) == want
    log_dir = b.partition_dir("__consumer_offsets", 0)

    def size() -> int:
        return sum(f.stat().st_size for f in log_dir.glob("*.log"))

    # 2400+ commit records of ~90 bytes each were appended; once compacted only the
    # active segment (16 KiB) and a few live records remain.
    records = end_offsets(bs, "__consumer_offsets", 1)[0]
    assert records >= 2400, records
    wait_until(lambda: size() < records * 90 // 4, 60,
               f"__consumer_offsets-0 compacted ({records} records, {size()} bytes)", interval=0.5)
    b.restart()
    assert consumer_committed(bs, "compacted-group", topic, 4) == want
    assert admin_committed(bs, "deleted-group", topic, 4)[0] == -1001
    listed = {g.group_id for g in a.list_consumer_groups().result(30).valid}
    assert "compacted-group" in listed and "deleted-group" not in listed


def test_admin_list_describe_alter_delete(gbroker, members):
    from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException, TopicPartition
    bs = gbroker.bootstrap
    a = kit.admin(bs)
    topic = new_topic(gbroker, "cg-admin", partitions=4)
    group = kit.unique_topic("grp-admin")
    kit.produce_confluent(bs, topic, kit.make_records(400, 4, seed=3, tag="admin"))
    (m,) = start_members(members, 1, bs, group, topic)
    wait_until(lambda: m.snapshot()[0] == {0, 1, 2, 3}, 30, "member owning all partitions")

    listed = {g.group_id: g for g in a.list_consumer_groups().result(30).valid}
    assert group in listed and str(listed[group].state).endswith("STABLE")
    d = a.describe_consumer_groups([group], include_authorized_operations=True)[group].result(30)
    assert not d.is_simple_consumer_group and d.partition_assignor == "range"
    assert d.coordinator.id == 1 and d.coordinator.port == gbroker.port
    assert sorted(op.value for op in d.authorized_operations) == [3, 6, 8, 10, 11], d.authorized_operations
    # READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS: all a group supports (no authorizer)
    assert len(d.members) == 1 and d.members[0].host.endswith("127.0.0.1")
    assert sorted(tp.partition for tp in d.members[0].assignment.topic_partitions) == [0, 1, 2, 3]
    # Non-empty groups can neither be deleted nor have offsets altered by an admin.
    with pytest.raises(KafkaException) as e:
        a.delete_consumer_groups([group])[group].result(30)
    assert "NON_EMPTY_GROUP" in str(e.value) or "not empty" in str(e.value).lower(), e.value
    wait_until(lambda: len(m.snapshot()[1]) == 400, 30, "all 400 records consumed")
    m.stop()  # commits what it consumed

    assert admin_committed(bs, group, topic, 4) == {p: 100 for p in range(4)}
    req = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, p, 7 + p) for p in range(4)])
    a.alter_consumer_group_offsets([req])[group].result(30)
    assert admin_committed(bs, group, topic, 4) == {p: 7 + p for p in range(4)}
    empty = {g.group_id: g for g in a.list_consumer_groups(states={
        __import__("confluent_kafka").ConsumerGroupState.EMPTY}).result(30).valid}
    assert group in empty
    a.delete_consumer_groups([group])[group].result(30)
    assert admin_committed(bs, group, topic, 4) == {p: -1001 for p in range(4)}  # OFFSET_INVALID
    d = a.describe_consumer_groups([group])[group].result(30)
    assert str(d.state).endswith("DEAD")
    with pytest.raises(KafkaException) as e:
        a.delete_consumer_groups([group])[group].result(30)
    assert "GROUP_ID_NOT_FOUND" in str(e.value) or "does not exist" in str(e.value), e.value


def test_rebalance_time_of_four_members(gbroker, members, record_property):
    """Measures how long 4 members take to form a group from scratch, and to absorb a 4th
    member into a stable group of 3 (heartbeat.interval.ms=300), recorded as test properties.
    Each must happen within its wait's deadline; the figures themselves are not asserted (a
    wall-clock bound on process starts under ASan on shared cores fails on a busy machine)."""
    bs = gbroker.bootstrap
    topic = new_topic(gbroker, "cg-time")
    group = kit.unique_topic("grp-time")
    t0 = time.time()
    four = start_members(members, 4, bs, group, topic)
    wait_until(lambda: balanced(four), 60, "4 members with 3 partitions each", interval=0.01)
    form = time.time() - t0
    for m in four:
        m.stop()

    group2 = kit.unique_topic("grp-time2")
    trio = start_members(members, 3, bs, group2, topic)
    wait_until(lambda: balanced(trio), 60, "3 balanced members")
    t1 = time.time()
    trio += start_members(members, 1, bs, group2, topic)
    wait_until(lambda: balanced(trio), 60, "4 balanced members", interval=0.01)
    absorb = time.time() - t1
    for m in trio:
        m.stop()
    print(f"\n4-member group formed in {form:.2f}s (incl. process start); "
          f"4th member absorbed in {absorb:.2f}s")
    record_property("form_4_members_s", round(form, 3))
    record_property("absorb_4th_member_s", round(absorb, 3))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "consume":
        consumer_main(sys.argv[2:])
    else:
        sys.exit("usage: test_consumer_groups.py consume --bootstrap ... --group ... --topic ...")
