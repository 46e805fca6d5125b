"""KIP-848 consumer groups (group.protocol=consumer): the broker assigns partitions with its
server-side assignors and members reconcile incrementally, revoking before anything is given
to another member. Real clients: kafka-clients 4.1 (java/src/.../GroupConsume.java with
--protocol consumer) and confluent-kafka's librdkafka, with Kafka's kafka-consumer-groups.

Each test checks what a consumer group promises: every acknowledged record consumed, the
final committed offsets equal to the log ends, and partitions that members keep are never
taken away from them by a rebalance (the point of the protocol). Timeouts derive from the
broker settings below: a killed member's partitions move once group.consumer.session.timeout.ms
has passed.
"""
from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

import kit
from ports import free_port
from test_consumer_groups import (GROUP_CONFIG, PARTITIONS, BackgroundProducer, admin_committed,
                                  balanced, consumer_committed, end_offsets, new_topic,
                                  start_members, wait_all_consumed, wait_until)
from test_consumer_groups_java import JavaMember, group_tool, java_classes, rows, tools_jars  # noqa: F401
from test_tiered_remote import metric_sum

SESSION_MS = 6000
KIP848_CONFIG = {**GROUP_CONFIG,
                 "group.consumer.min.session.timeout.ms": 3000,
                 "group.consumer.session.timeout.ms": SESSION_MS,
                 "group.consumer.min.heartbeat.interval.ms": 200,
                 "group.consumer.heartbeat.interval.ms": 300}


@pytest.fixture
def kbroker(broker_factory):
    b = broker_factory(config={**KIP848_CONFIG, "strata.admin.listener": f"127.0.0.1:{free_port()}"})
    b.admin_port = int(b.config["strata.admin.listener"].rsplit(":", 1)[1])
    return b


def assert_spoke_the_consumer_protocol(broker) -> None:
    """The members heartbeat with ConsumerGroupHeartbeat and never sent JoinGroup."""
    if kit.against_kafka():
        return
    requests = lambda api: metric_sum(broker.admin_port, f'strata_requests_total{{api="{api}"}}')
    assert requests("ConsumerGroupHeartbeat") > 0 and requests("JoinGroup") == 0, (
        requests("ConsumerGroupHeartbeat"), requests("JoinGroup"))


@pytest.fixture
def members():
    made: list = []
    yield made
    for m in made:
        if m.proc.poll() is None:
            m.proc.kill()
            m.proc.wait()


def strata_json(*args: str):
    r = subprocess.run([os.environ["STRATA_BIN"], *args, "--format", "json"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, f"strata {' '.join(args)}: exit {r.returncode}: {r.stderr}"
    return json.loads(r.stdout)


def kept_partitions_never_revoked(member) -> bool:
    """Between consecutive OWNED reports a member only gains or only loses partitions:
    the protocol revokes what moves and keeps the rest (no stop-the-world revocation)."""
    history = [owned for _, owned in member.owned_history]
    for before, after in zip(history, history[1:]):
        if not (before <= after or after <= before):
            return False
    return True


def test_java_members_rebalance_incrementally_and_survive_a_kill(kbroker, members, java_classes):
    bs = kbroker.bootstrap
    topic = new_topic(kbroker, "k848-java")
    group = kit.unique_topic("grp-k848-java")
    producer = BackgroundProducer(bs, topic).start()
    j1 = ConsumerMember.java(members, java_classes, bs, group, topic)
    wait_until(lambda: j1.snapshot()[0] == set(range(PARTITIONS)), 60, "the first member owns all")
    j2 = ConsumerMember.java(members, java_classes, bs, group, topic)
    j3 = ConsumerMember.java(members, java_classes, bs, group, topic)
    wait_until(lambda: balanced([j1, j2, j3]), 60, "3 members with 4 partitions each")
    for m in (j1, j2, j3):
        assert kept_partitions_never_revoked(m), m.owned_history

    # A member SIGKILLed: its partitions move once its session has timed out.
    j3.kill9()
    killed_at = time.monotonic()
    wait_until(lambda: balanced([j1, j2]), SESSION_MS / 1000 + 30, "2 members after the kill")
    assert time.monotonic() - killed_at >= SESSION_MS / 1000 - 1.0
    # A clean leave moves partitions at once.
    j2.stop()
    wait_until(lambda: j1.snapshot()[0] == set(range(PARTITIONS)), 30, "j1 owns all after j2 left")
    assert kept_partitions_never_revoked(j1), j1.owned_history
    time.sleep(0.5)
    acked = producer.stop()
    wait_all_consumed([j1, j2, j3], acked)
    j1.stop()
    assert_spoke_the_consumer_protocol(kbroker)
    assert admin_committed(bs, group, topic) == end_offsets(bs, topic)


def test_librdkafka_members_with_the_consumer_protocol(kbroker, members):
    bs = kbroker.bootstrap
    topic = new_topic(kbroker, "k848-rdk")
    group = kit.unique_topic("grp-k848-rdk")
    producer = BackgroundProducer(bs, topic).start()
    pair = start_members(members, 2, bs, group, topic, protocol="consumer")
    wait_until(lambda: balanced(pair), 60, "2 librdkafka members with 6 partitions each")
    (third,) = start_members(members, 1, bs, group, topic, protocol="consumer")
    wait_until(lambda: balanced(pair + [third]), 60, "3 librdkafka members")
    for m in pair:
        assert kept_partitions_never_revoked(m), m.owned_history
    time.sleep(0.5)
    acked = producer.stop()
    wait_all_consumed(pair + [third], acked)
    for m in [third] + pair:
        m.stop()
    assert_spoke_the_consumer_protocol(kbroker)
    assert admin_committed(bs, group, topic) == end_offsets(bs, topic)


def test_the_group_survives_a_broker_restart_and_the_tool_describes_it(kbroker, members, java_classes,
                                                                        tools_jars):
    bs = kbroker.bootstrap
    topic = new_topic(kbroker, "k848-restart")
    group = kit.unique_topic("grp-k848-restart")
    pair = [ConsumerMember.java(members, java_classes, bs, group, topic) for _ in range(2)]
    wait_until(lambda: balanced(pair), 60, "2 balanced members")

    out = group_tool("--bootstrap-server", bs, "--describe", "--group", group, "--members")
    described = rows(out, "GROUP")
    assert len(described) == 2 and {r["#PARTITIONS"] for r in described} == {str(PARTITIONS // 2)}, out
    out = group_tool("--bootstrap-server", bs, "--describe", "--group", group, "--state")
    (state,) = rows(out, "GROUP")
    assert state["STATE"] == "Stable" and state["#MEMBERS"] == "2", out
    assert state["ASSIGNMENT-STRATEGY"] == "uniform", out
    assert group in group_tool("--bootstrap-server", bs, "--list").split()
    if not kit.against_kafka():  # Strata's own CLI shows the same
        described = strata_json("group", "describe", group, "-b", bs)
        assert (described["state"], described["members"], described["protocol"]) == ("Stable", 2, "uniform")
        owners = {p["member"] for p in described["partitions"] if p["topic"] == topic}
        assert len(owners) == 2 and "" not in owners, described

    producer = BackgroundProducer(bs, topic).start()
    time.sleep(1.0)
    first = producer.stop()
    wait_all_consumed(pair, first)
    owned_before = [m.snapshot()[0] for m in pair]
    kbroker.restart()
    # The group comes back from __consumer_offsets as it was: the members carry on with the
    # partitions they had, with no rebalance (the session outlives the restart).
    consumer_committed(bs, group, topic)  # waits out the coordinator's load
    producer = BackgroundProducer(bs, topic).start()
    time.sleep(1.5)
    second = producer.stop()
    wait_all_consumed(pair, second)
    assert [m.snapshot()[0] for m in pair] == owned_before
    for m in pair:
        m.stop()
    assert admin_committed(bs, group, topic) == end_offsets(bs, topic)


class ConsumerMember:
    """Builds members that speak the consumer protocol."""

    @staticmethod
    def java(members, classpath, bs, group, topic, **extra) -> JavaMember:
        m = JavaMember(classpath, bs, group, topic, "range", protocol="consumer", **extra)
        members.append(m)
        return m


def test_a_static_member_restarted_within_its_session_gets_its_partitions_back(
        kbroker, members, java_classes):
    """group.instance.id: a static member that closes steps out (epoch -2) keeping its
    partitions; the process that comes back under the same instance id, with a new member id,
    takes them over without a rebalance of the others."""
    bs = kbroker.bootstrap
    topic = new_topic(kbroker, "k848-static")
    group = kit.unique_topic("grp-k848-static")
    s1 = ConsumerMember.java(members, java_classes, bs, group, topic, instance_id="inst-1")
    s2 = ConsumerMember.java(members, java_classes, bs, group, topic, instance_id="inst-2")
    wait_until(lambda: balanced([s1, s2]), 60, "2 static members")
    before = s2.snapshot()[0]
    owned_by_s1 = s1.snapshot()[0]
    s2.stop()
    # While it is away nobody takes its partitions (they wait for it, not for a rebalance).
    time.sleep(SESSION_MS / 1000 / 3)
    assert s1.snapshot()[0] == owned_by_s1
    s2b = ConsumerMember.java(members, java_classes, bs, group, topic, instance_id="inst-2")
    wait_until(lambda: s2b.snapshot()[0] == before, SESSION_MS / 1000 + 20,
               "the restarted static member owns what it had")
    assert s1.snapshot()[0] == owned_by_s1 and kept_partitions_never_revoked(s1), s1.owned_history
    producer = BackgroundProducer(bs, topic).start()
    time.sleep(1.0)
    acked = producer.stop()
    wait_all_consumed([s1, s2b], acked)
    for m in (s1, s2b):
        m.stop()
    assert admin_committed(bs, group, topic) == end_offsets(bs, topic)


def test_a_regex_subscription_picks_up_a_topic_created_later(kbroker, members, java_classes):
    """SubscriptionPattern (RE2, matched by the broker): the member reads every matching topic,
    one made after it joined within the broker's 10 s refresh of its matches, and nothing of a
    topic that does not match."""
    bs = kbroker.bootstrap
    tag = kit.unique_topic("k848re")
    group = kit.unique_topic("grp-k848-re")
    kit.create_topic(bs, f"{tag}-a", 3)
    kit.create_topic(bs, f"other-{tag}", 3)
    for t in (f"{tag}-a", f"other-{tag}"):
        kit.produce_confluent(bs, t, kit.make_records(30, 3, seed=3, tag="re"))
    m = ConsumerMember.java(members, java_classes, bs, group, f"{tag}-a", pattern=f"{tag}-.*")

    def read(topic: str) -> int:
        with m.lock:
            return len({(p, o) for (t, p, o) in m.consumed_by_topic if t == topic})
    wait_until(lambda: read(f"{tag}-a") == 30, 60, "the matching topic read",
               lambda: (read(f"{tag}-a"), m.errors[:3], m.stderr[-3000:]))
    kit.create_topic(bs, f"{tag}-b", 2)
    kit.produce_confluent(bs, f"{tag}-b", kit.make_records(20, 2, seed=4, tag="re-b"))
    wait_until(lambda: read(f"{tag}-b") == 20, 10 + 60, "the topic made later read too",
               lambda: (read(f"{tag}-b"), m.snapshot()[0], m.errors[:3], m.stderr[-3000:],
                        kbroker.log_tail()))
    assert read(f"other-{tag}") == 0
    m.stop()
    assert_spoke_the_consumer_protocol(kbroker)


def test_the_group_converges_on_the_next_coordinator_after_a_sigkill(tmp_path, broker_factory, members,
                                                                     java_classes):
    """Three brokers, __consumer_offsets with three replicas: the group's coordinator is
    SIGKILLed while members consume and a producer writes. The next leader of the group's
    partition loads the group from the replicated log, the members carry on with the
    partitions they had (nothing is consumed twice: no partition moved), and every
    acknowledged record is consumed with the final commits exact."""
    from test_cluster import OFFLINE_WITHIN, start_cluster
    from test_cluster_clients import find_coordinator
    from test_replication import create_rf3, isr

    etcd, cluster = start_cluster(tmp_path, broker_factory, extra={
        **KIP848_CONFIG, "offsets.topic.replication.factor": "3"})
    try:
        b1 = cluster[0]
        bs = ",".join(b.bootstrap for b in cluster)
        topic, group = kit.unique_topic("k848-failover"), kit.unique_topic("grp-k848-failover")
        create_rf3(b1, topic, PARTITIONS)
        kit.wait_for_topic(kit.admin(b1.bootstrap), topic, PARTITIONS)
        trio = [ConsumerMember.java(members, java_classes, bs, group, topic) for _ in range(3)]
        wait_until(lambda: balanced(trio), 90, "3 balanced members")
        offsets = "__consumer_offsets"
        wait_until(lambda: all(i == [1, 2, 3] for i in isr(b1, offsets).values()), 30,
                   "every __consumer_offsets ISR full", lambda: isr(b1, offsets))
        code, node = find_coordinator(b1, group)
        assert code == 0, code
        coordinator = cluster[node - 1]
        survivors = [b for b in cluster if b is not coordinator]
        producer = BackgroundProducer(",".join(b.bootstrap for b in survivors), topic).start()
        time.sleep(1.0)
        owned_before = [m.snapshot()[0] for m in trio]
        coordinator.kill9()

        def moved() -> bool:
            code, now = find_coordinator(survivors[0], group)
            return code == 0 and now != node
        wait_until(moved, OFFLINE_WITHIN + 15, "a new coordinator for the group")
        time.sleep(SESSION_MS / 1000 + 1)  # past any session the old coordinator was timing
        acked = producer.stop()
        wait_all_consumed(trio, acked, timeout=90)
        assert [m.snapshot()[0] for m in trio] == owned_before, [m.owned_history for m in trio]
        for m in trio:
            m.stop()
        assert admin_committed(survivors[0].bootstrap, group, topic) == end_offsets(
            survivors[0].bootstrap, topic)
    finally:
        for b in cluster:
            if b.running:
                b.stop()
        etcd.stop_all()
