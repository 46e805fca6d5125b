"""Three brokers sharing one real etcd (Debian's etcd-server on free loopback ports).

What is checked: topics created through any broker are placed over all three, each
broker holds only its own replicas and every broker describes the same leaders; real
clients produce and consume through any bootstrap broker with exact offsets and bytes,
consumer groups included; a broker that does not lead a partition answers Produce with
NOT_LEADER_OR_FOLLOWER; a SIGKILLed broker's partitions go offline (leader -1, a higher
leader epoch) within the lease TTL and come back with every acknowledged record when it
restarts; a SIGKILLed controller is replaced and topic creation and deletion go on.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import time

import pytest
from confluent_kafka.admin import NewTopic

import kit
import rawkafka
from conftest import free_port
from etcdkit import Etcd
from kit import wait_until

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's cluster mode")

TTL_MS = 3000
PREFIX = "/strata-cluster"
# How long a dead broker's registration (and so its leadership) may outlive it: one
# lease TTL, plus the controller's reaction and the watch delivering it.
OFFLINE_WITHIN = TTL_MS / 1000 + 5


def start_cluster(tmp_path, broker_factory, etcd_members: int = 1, extra: dict | None = None,
                  nodes: tuple[int, ...] = (1, 2, 3), per_node: dict[int, dict] | None = None):
    """An etcd cluster and brokers `nodes` on it (all registered when it returns); `extra`
    configures every broker, `per_node[n]` broker n on top."""
    etcd = Etcd(tmp_path / "etcd", members=etcd_members)
    remote = tmp_path / "remote"  # one file:// remote store shared by every broker
    remote.mkdir(exist_ok=True)

    def start(node: int):
        return broker_factory(config={
            "node.id": str(node), "strata.metadata.backend": "etcd",
            "strata.etcd.endpoints": etcd.endpoints, "strata.etcd.prefix": PREFIX,
            "strata.etcd.lease.ttl.ms": str(TTL_MS), "strata.etcd.request.timeout.ms": "2000",
            "offsets.topic.num.partitions": "6", "group.initial.rebalance.delay.ms": "0",
            "remote.log.storage.system.enable": "true",
            "strata.remote.storage.uri": f"file://{remote}",
            "remote.log.manager.task.interval.ms": "500",
            "strata.admin.listener": f"127.0.0.1:{free_port()}", **(extra or {}),
            **(per_node or {}).get(node, {})})

    brokers = [start(n) for n in nodes]
    wait_until(lambda: len(metadata(brokers[0]).brokers) == len(nodes), 15,
               f"{len(nodes)} registered brokers", lambda: metadata(brokers[0]).brokers)
    return etcd, brokers


@pytest.fixture
def cluster(tmp_path, broker_factory):
    etcd, brokers = start_cluster(tmp_path, broker_factory)
    yield brokers
    for b in brokers:
        b.stop()
    etcd.stop_all()


def prometheus(b) -> dict[str, float]:
    """Broker `b`'s /metrics: 'name' or 'name{labels}' -> value."""
    import urllib.request
    url = f"http://{b.config['strata.admin.listener']}/metrics"
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
            for line in text.splitlines() if line and not line.startswith("#")}


def metadata(b, topic: str | None = None):
    return kit.admin(b.bootstrap).list_topics(topic, timeout=10)


def leaders(b, topic: str) -> dict[int, tuple[int, list[int]]]:
    """partition -> (leader, replicas) as broker `b` describes them."""
    md = metadata(b, topic).topics[topic]
    return {p: (pm.leader, list(pm.replicas)) for p, pm in md.partitions.items()}


def produce_to(b, topic: str, partition: int) -> int:
    """Produce v8 of one record straight to `b` (no client routing) -> error code."""
    batch = rawkafka.record_batch([(None, b"direct", [])], kit.BASE_TS)
    with rawkafka.Conn(b.bootstrap) as c:
        c.send(rawkafka.request(0, 8, 5, rawkafka.produce_body(8, topic, partition, batch,
                                                                acks=1)))
        _, body = c.recv_frame()
    [(_, _, code, _)] = rawkafka.parse_produce_response(8, body)
    return code


def cpu_seconds(pid: int) -> float:
    """utime + stime of process `pid` so far."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


IDLE_WINDOW_S = 3


def test_idle_brokers_stay_idle(cluster):
    """No background thread of an idle broker spins, controller or not: over a few seconds
    each uses a small fraction of what one busy thread would (a non-controller's
    deleted-topic cleaner once woke itself again and again and took a whole core)."""
    before = {int(b.config["node.id"]): cpu_seconds(b.proc.pid) for b in cluster}
    start = time.monotonic()
    deadline = start + IDLE_WINDOW_S
    while time.monotonic() < deadline:
        time.sleep(0.1)  # a measurement window, not a wait for a condition
    elapsed = time.monotonic() - start
    used = {int(b.config["node.id"]): cpu_seconds(b.proc.pid) - before[int(b.config["node.id"])]
            for b in cluster}
    assert all(u < 0.25 * elapsed for u in used.values()), f"CPU s over {elapsed:.1f} s: {used}"


def test_topics_spread_over_the_brokers_and_any_broker_serves_them(cluster):
    b1, b2, b3 = cluster
    topic = kit.unique_topic("spread")
    kit.create_topic(b2.bootstrap, topic, 6)  # through a broker that may not be the controller
    by_node = {b.config["node.id"]: b for b in cluster}
    wait_until(lambda: all(len(leaders(b, topic)) == 6 for b in cluster), 15,
               "every broker describes the topic")
    placed = leaders(b1, topic)
    assert all(leaders(b, topic) == placed for b in (b2, b3)), "brokers disagree"
    counts = {n: sum(1 for leader, _ in placed.values() if leader == n) for n in (1, 2, 3)}
    assert counts == {1: 2, 2: 2, 3: 2}, placed
    for p, (leader, replicas) in placed.items():
        assert replicas == [leader]
        for node, b in by_node.items():
            # Only the replica's broker holds its log.
            wait_until(lambda: b.partition_dir(topic, p).exists() == (int(node) == leader), 10,
                       f"{topic}-{p} on broker {node} only if placed there")
        others = [b for n, b in by_node.items() if int(n) != leader]
        assert produce_to(others[0], topic, p) == 6  # NOT_LEADER_OR_FOLLOWER
        assert produce_to(by_node[str(leader)], topic, p) == 0

    # After the one direct record at offset 0 of each partition.
    recs = kit.make_records(600, 6, seed=11, tag="spread")
    kit.produce_confluent(b3.bootstrap, topic, recs)
    start = {p: 1 for p in range(6)}
    kit.assert_same_records(recs, kit.consume_confluent(b1.bootstrap, topic, 6, start=start),
                            contiguous_from=1)
    consume_as_group(b2, topic, kit.unique_topic("group"), total=606)


def consume_as_group(b, topic: str, group: str, total: int) -> None:
    """A subscribed consumer (its coordinator found through `b`) reads `total` records and
    commits; the committed offsets are each partition's end."""
    from confluent_kafka import TopicPartition
    c = kit.consumer_confluent(b.bootstrap, {"group.id": group, "session.timeout.ms": "10000",
                                               "enable.auto.offset.store": True})
    try:
        c.subscribe([topic])
        seen: dict[int, int] = {}
        deadline = time.time() + 60
        while sum(seen.values()) < total:
            assert time.time() < deadline, f"group {group} read {seen} of {total}"
            for m in c.consume(num_messages=500, timeout=0.5):
                assert m.error() is None, m.error()
                seen[m.partition()] = seen.get(m.partition(), 0) + 1
        c.commit(asynchronous=False)
        committed = c.committed([TopicPartition(topic, p) for p in seen], timeout=10)
        assert {tp.partition: tp.offset for tp in committed} == seen
    finally:
        c.close()


def test_a_killed_broker_goes_offline_and_comes_back_with_every_record(cluster):
    b1, b2, b3 = cluster
    topic = kit.unique_topic("offline")
    kit.create_topic(b1.bootstrap, topic, 3)
    recs = kit.make_records(300, 3, seed=12, tag="before")
    kit.produce_confluent(b1.bootstrap, topic, recs, extra={"acks": "all"})
    mine = [p for p, (leader, _) in leaders(b1, topic).items() if leader == 2]
    assert len(mine) == 1, leaders(b1, topic)
    before = metadata(b1, topic).topics[topic].partitions[mine[0]]
    # A group whose coordinator is broker 2, with committed offsets.
    from confluent_kafka import TopicPartition

    def commit(group: str) -> None:
        c = kit.consumer_confluent(b1.bootstrap, {"group.id": group})
        try:
            c.commit(offsets=[TopicPartition(topic, p, 40 + p) for p in range(3)],
                     asynchronous=False)
        finally:
            c.close()
    commit(f"{topic}-first")  # __consumer_offsets is made at the first FindCoordinator
    offsets_leaders = leaders(b1, "__consumer_offsets")
    group = next(g for g in (f"{topic}-g{i}" for i in range(1000))
                 if offsets_leaders[group_partition(g, len(offsets_leaders))][0] == 2)
    commit(group)

    b2.kill9()
    killed_at = time.monotonic()
    wait_until(lambda: leaders(b1, topic)[mine[0]][0] == -1, OFFLINE_WITHIN,
               "the dead broker's partition offline", lambda: leaders(b1, topic))
    # Nobody fetches from an RF=1 leader, so only its lease tells: it expires at most one
    # TTL after the last renewal before the kill, and etcd checks expiries every 500 ms.
    offline_after = time.monotonic() - killed_at
    print(f"partition offline {offline_after:.2f}s after the SIGKILL (lease TTL {TTL_MS} ms)")
    assert offline_after <= TTL_MS / 1000 + 1.0, offline_after
    assert 2 not in [b.id for b in metadata(b1).brokers.values()]
    # Metadata v12 names the dead broker's replica offline (as `strata topic describe` shows).
    described = subprocess.run([os.environ["STRATA_BIN"], "topic", "describe", topic, "-b",
                                b3.bootstrap, "--format", "json"], capture_output=True, text=True,
                               timeout=60)
    assert described.returncode == 0, described.stderr
    offline = {p["partition"]: p["offline_replicas"]
               for p in json.loads(described.stdout)["partitions"]}
    assert offline == {p: ([2] if p == mine[0] else []) for p in range(3)}, offline
    # Still known, as fenced (DescribeCluster v2, KIP-1073), to Kafka's own tool.
    from test_kafka_tools import tool
    endpoints = tool("org.apache.kafka.tools.ClusterTool", "list-endpoints",
                     "--bootstrap-server", b3.bootstrap)
    fenced = tool("org.apache.kafka.tools.ClusterTool", "list-endpoints",
                  "--bootstrap-server", b3.bootstrap, "--include-fenced-brokers")
    print(endpoints, fenced)
    assert re.search(rf"^2\s.*{b2.port}\s.*fenced", fenced, re.M | re.I), fenced
    assert not re.search(r"^2\s", endpoints, re.M), endpoints
    # No live in-sync replica: not even an unclean election may elect one.
    unclean = subprocess.run(
        ["java", "-Xmx512m", "-cp", f"{kit.KAFKA_LIB}/*", "org.apache.kafka.tools.LeaderElectionCommand",
         "--bootstrap-server", b3.bootstrap, "--election-type", "UNCLEAN", "--topic", topic,
         "--partition", str(mine[0])], capture_output=True, text=True, timeout=120)
    assert "EligibleLeadersNotAvailableException" in unclean.stdout + unclean.stderr, \
        unclean.stdout + unclean.stderr
    # The others stay led by their brokers.
    assert sorted(leader for leader, _ in leaders(b3, topic).values()) == [-1, 1, 3]

    b2.start()
    wait_until(lambda: leaders(b1, topic)[mine[0]][0] == 2, 15, "leadership back",
               lambda: leaders(b1, topic))
    kit.assert_same_records(recs, kit.consume_confluent(b3.bootstrap, topic, 3))
    from confluent_kafka import TopicPartition
    c = kit.consumer_confluent(b1.bootstrap)
    try:
        tp = c.offsets_for_times([TopicPartition(topic, mine[0], 0)], timeout=10)[0]
        assert tp.offset == 0
        # The leader epoch grew twice: offline, then back.
        assert tp.leader_epoch >= 2, tp.leader_epoch
    finally:
        c.close()
    assert before.leader == 2
    # The restarted coordinator loaded its offsets partitions again.
    c = kit.consumer_confluent(b3.bootstrap, {"group.id": group})
    try:
        committed = c.committed([TopicPartition(topic, p) for p in range(3)], timeout=15)
        assert {tp.partition: tp.offset for tp in committed} == {0: 40, 1: 41, 2: 42}
    finally:
        c.close()


def group_partition(group: str, partitions: int) -> int:
    """The __consumer_offsets partition of a group: Kafka's Utils.abs(hashCode) % partitions
    (Math.abs, with Integer.MIN_VALUE -> 0; not hashCode & 0x7fffffff, which differs for a
    negative hashCode)."""
    h = 0
    for unit in group.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    h = h - (1 << 32) if h >= 1 << 31 else h
    return (0 if h == -(1 << 31) else abs(h)) % partitions


# The issue's bound for a new controller after the old one's SIGKILL (the lease TTL is 3 s).
CONTROLLER_WITHIN = 5


def test_a_killed_controller_is_replaced_and_admin_goes_on(cluster):
    by_node = {int(b.config["node.id"]): b for b in cluster}
    controller = metadata(cluster[0]).controller_id
    assert controller in by_node
    survivor = next(b for n, b in by_node.items() if n != controller)
    # Records written before the kill, on a topic with a replica on every broker.
    kept = kit.unique_topic("kept")
    a = kit.admin(survivor.bootstrap)
    a.create_topics([NewTopic(kept, 3, 3)])[kept].result(timeout=30)
    wait_until(lambda: all(sorted(pm.isrs) == [1, 2, 3]
                           for pm in metadata(survivor, kept).topics[kept].partitions.values()),
               20, "every ISR of the kept topic full", lambda: metadata(survivor, kept).topics)
    before = kit.make_records(300, 3, seed=14, tag="kept")
    kit.produce_confluent(survivor.bootstrap, kept, before, extra={"acks": "all"})

    by_node[controller].kill9()
    killed_at = time.monotonic()
    wait_until(lambda: metadata(survivor).controller_id not in (controller, -1), CONTROLLER_WITHIN,
               "a new controller", lambda: metadata(survivor).controller_id)
    print(f"new controller after {time.monotonic() - killed_at:.2f}s")

    topic = kit.unique_topic("after")
    # A new client: librdkafka's AdminClient keeps waiting for the controller it cached (the
    # killed one) for longer than the request timeout.
    a = kit.admin(survivor.bootstrap)
    for f in a.create_topics([NewTopic(topic, 4, 1)], request_timeout=20).values():
        f.result(timeout=30)
    placed = leaders(survivor, topic)
    assert len(placed) == 4 and all(leader in by_node and leader != controller
                                    for leader, _ in placed.values()), placed
    recs = kit.make_records(200, 4, seed=13, tag="after")
    kit.produce_confluent(survivor.bootstrap, topic, recs)
    kit.assert_same_records(recs, kit.consume_confluent(survivor.bootstrap, topic, 4))

    # Nothing written before the kill lost or doubled, read through another survivor.
    other = next(b for n, b in by_node.items() if n not in (controller,) and b is not survivor)
    kit.assert_same_records(before, kit.consume_confluent(other.bootstrap, kept, 3))

    for f in a.delete_topics([topic], request_timeout=20).values():
        f.result(timeout=30)
    live = [b for n, b in by_node.items() if n != controller]
    wait_until(lambda: not any(b.partition_dir(topic, p).exists() for b in live for p in range(4)),
               15, "every replica's data deleted")
    by_node[controller].start()  # leaves the cluster whole for the fixture's clean stop


def quorum_tool(b, mode: str) -> str:
    """kafka-metadata-quorum describe --status|--replication against broker `b`."""
    from test_kafka_tools import tool
    return tool("org.apache.kafka.tools.MetadataQuorumCommand", "--bootstrap-server", b.bootstrap,
                "describe", mode)


def create_retrying(bootstrap: str, topic: str, partitions: int) -> None:
    """Creates a topic as Kafka's AdminClient would, retrying REQUEST_TIMED_OUT: a write in
    flight when the etcd leader dies is dropped by etcd and times out (retriable), and a
    retry may find that the first attempt committed after all."""
    from confluent_kafka import KafkaError, KafkaException
    deadline = time.time() + 30
    attempts = 0
    while True:
        attempts += 1
        try:
            kit.create_topic(bootstrap, topic, partitions)
            return
        except KafkaException as e:
            code = e.args[0].code()
            if code == KafkaError.TOPIC_ALREADY_EXISTS and attempts > 1:
                kit.wait_for_topic(kit.admin(bootstrap), topic, partitions)
                return
            if code != KafkaError.REQUEST_TIMED_OUT or time.time() > deadline:
                raise


ETCD_OUTAGE_S = 30  # the length the issue asks for: ten lease TTLs


def test_brokers_serve_through_a_30s_etcd_outage_and_resume_metadata_changes(tmp_path,
                                                                             broker_factory):
    from confluent_kafka import KafkaError, KafkaException
    etcd, brokers = start_cluster(tmp_path, broker_factory)
    try:
        b1, b2, b3 = brokers
        topic = kit.unique_topic("etcd-down")
        kit.create_topic(b1.bootstrap, topic, 3)
        wait_until(lambda: all(len(leaders(b, topic)) == 3 for b in brokers), 15,
                   "every broker describes the topic")
        placed = leaders(b1, topic)
        before = kit.make_records(150, 3, seed=21, tag="before")
        kit.produce_confluent(b2.bootstrap, topic, before, extra={"acks": "all"})

        etcd.stop_all()
        down_at = time.time()
        # Past the lease TTL every broker is fenced (it cannot renew)...
        wait_until(lambda: all("is fenced" in b.log_text() for b in brokers), 2 * TTL_MS / 1000 + 5,
                   "every broker fenced", lambda: [b.log_tail(1500) for b in brokers])
        # ...and still leads what it led: produce and consume through any broker.
        during = kit.make_records(150, 3, seed=22, tag="during")
        kit.produce_confluent(b3.bootstrap, topic, during, extra={"acks": "all"})
        kit.assert_same_records(before + during, kit.consume_confluent(b1.bootstrap, topic, 3))
        assert leaders(b2, topic) == placed
        # Metadata changes fail at once with a retriable error that says why.
        a = kit.admin(b1.bootstrap)
        fut = a.create_topics([NewTopic(kit.unique_topic("refused"), 1, 1)], request_timeout=20)
        with pytest.raises(KafkaException) as err:
            list(fut.values())[0].result(timeout=30)
        assert err.value.args[0].code() == KafkaError.REQUEST_TIMED_OUT, err.value
        assert "metadata store (etcd) cannot be reached" in err.value.args[0].str()
        time.sleep(max(0.0, down_at + ETCD_OUTAGE_S - time.time()))
        assert all(b.running for b in brokers)

        for i in range(len(etcd.members)):
            etcd.start(i)
        etcd.wait_healthy()
        after = kit.unique_topic("after")
        kit.retry(lambda: create_retrying(b2.bootstrap, after, 3), timeout=30,
                  what="topic creation once etcd is back")
        wait_until(lambda: all(len(leaders(b, after)) == 3 for b in brokers), 15,
                   "every broker describes the new topic")
        recs = kit.make_records(90, 3, seed=23, tag="after")
        kit.produce_confluent(b1.bootstrap, after, recs, extra={"acks": "all"})
        kit.assert_same_records(recs, kit.consume_confluent(b3.bootstrap, after, 3))
        kit.assert_same_records(before + during, kit.consume_confluent(b2.bootstrap, topic, 3))
        wait_until(lambda: len(etcd.get_prefix(f"{PREFIX}/brokers/")) == 3, 20,
                   "all three registered in etcd again")
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()


def test_losing_one_of_three_etcd_members_disrupts_nothing(tmp_path, broker_factory):
    etcd, brokers = start_cluster(tmp_path, broker_factory, etcd_members=3)
    try:
        b1 = brokers[0]
        topic = kit.unique_topic("quorum")
        kit.create_topic(b1.bootstrap, topic, 3)
        before = kit.make_records(150, 3, seed=14, tag="before")
        kit.produce_confluent(b1.bootstrap, topic, before)
        registered = {n: etcd.get_prefix(f"{PREFIX}/brokers/")[f"{PREFIX}/brokers/{n}"]
                      for n in (1, 2, 3)}
        status = quorum_tool(b1, "--status")
        assert 'CurrentVoters:          [{"id": 0}, {"id": 1}, {"id": 2}]' in status, status
        assert re.search(r"^LeaderId:\s+[012]$", status, re.M), status
        assert 'CurrentObservers:       [{"id": 1}, {"id": 2}, {"id": 3}]' in status, status
        etcd.stop(0, kill=True)
        # Data goes on with two of three members, and so do metadata changes.
        after = kit.make_records(150, 3, seed=15, tag="after")
        kit.produce_confluent(brokers[2].bootstrap, topic, after)
        other = kit.unique_topic("quorum-after")
        create_retrying(brokers[1].bootstrap, other, 3)
        kit.assert_same_records(before + after, kit.consume_confluent(b1.bootstrap, topic, 3))
        assert sorted(leader for leader, _ in leaders(b1, other).values()) == [1, 2, 3]
        # Past a lease TTL: every broker kept its registration (no re-registration, no
        # leader change).
        time.sleep(TTL_MS / 1000 + 1)
        now = etcd.get_prefix(f"{PREFIX}/brokers/")
        for n, reg in registered.items():
            assert now[f"{PREFIX}/brokers/{n}"]["create_revision"] == reg["create_revision"], n
        assert all(leader in (1, 2, 3) for leader, _ in leaders(b1, topic).values())
        # The metadata quorum's health shows the lost member: one voter without a position.
        voters = [line.split() for line in quorum_tool(b1, "--replication").splitlines()
                  if line.split()[-1:] in (["Leader"], ["Follower"])]
        assert len(voters) == 3 and sorted(v[2] == "-1" for v in voters) == [False, False, True], \
            voters
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()


def test_kafka_tools_see_the_cluster(cluster):
    from test_kafka_tools import TOPIC_CMD, tool
    if not list(kit.KAFKA_LIB.glob("kafka-tools-*.jar")):
        pytest.fail(f"Kafka tool jars missing in {kit.KAFKA_LIB}: run scripts/install-test-deps.sh")
    b1, b2, b3 = cluster
    topic = kit.unique_topic("cli")
    # A manual assignment is honoured: leaders are the first replicas. The followers join
    # the ISR once they have fetched; both describing brokers must have seen that before
    # the two describes below can be compared.
    tool(TOPIC_CMD, "--bootstrap-server", b3.bootstrap, "--create", "--topic", topic,
         "--replica-assignment", "2:3,3:1,1:2")

    def isrs(b):
        md = metadata(b, topic).topics[topic].partitions
        return {p: (pm.leader, list(pm.replicas), sorted(pm.isrs)) for p, pm in md.items()}
    wait_until(lambda: all(len(isrs(b)) == 3 and all(sorted(r) == i for _, r, i in isrs(b).values())
                           for b in (b1, b2)), 30,
               "every follower in the ISR, as brokers 1 and 2 see it",
               lambda: {"b1": isrs(b1), "b2": isrs(b2)})
    out = tool(TOPIC_CMD, "--bootstrap-server", b1.bootstrap, "--describe", "--topic", topic)
    for p, (leader, replicas) in enumerate([(2, "2,3"), (3, "3,1"), (1, "1,2")]):
        assert re.search(rf"\tPartition: {p}\tLeader: {leader}\tReplicas: {replicas}\tIsr: "
                         rf"({replicas}|{replicas[::-1]})\t", out), out
    # Kafka 4.x describes through DescribeTopicPartitions, here one partition per page.
    paged = tool(TOPIC_CMD, "--bootstrap-server", b2.bootstrap, "--describe", "--topic", topic,
                 "--partition-size-limit-per-response", "1")
    assert [ln for ln in paged.splitlines() if "Partition:" in ln] == \
        [ln for ln in out.splitlines() if "Partition:" in ln], paged
    # ElectLeaders (forwarded to the controller from whichever broker gets it): the
    # preferred replicas lead already.
    out = tool("org.apache.kafka.tools.LeaderElectionCommand", "--bootstrap-server", b3.bootstrap,
               "--election-type", "PREFERRED", "--topic", topic, "--partition", "0")
    assert f"Valid replica already elected for partitions {topic}-0" in out, out
    refused = subprocess.run(
        ["java", "-Xmx512m", "-cp", f"{kit.KAFKA_LIB}/*", TOPIC_CMD, "--bootstrap-server",
         b2.bootstrap, "--create", "--topic", kit.unique_topic("rf4"), "--partitions", "1",
         "--replication-factor", "4"], capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0
    assert "InvalidReplicationFactorException" in refused.stdout + refused.stderr, refused.stderr
    assert "only 3 broker(s) are registered" in refused.stdout + refused.stderr

    cluster_id = metadata(b1).cluster_id
    out = tool("org.apache.kafka.tools.ClusterTool", "cluster-id", "--bootstrap-server",
               b2.bootstrap)
    assert f"Cluster ID: {cluster_id}" in out, out
    out = tool("org.apache.kafka.tools.BrokerApiVersionsCommand", "--bootstrap-server",
               b1.bootstrap)
    for b in cluster:
        assert f"{b.bootstrap} (id: {b.config['node.id']} rack: null" in out, out


def test_controller_bound_requests_sent_to_any_broker_are_forwarded(cluster):
    """CreateTopics, CreatePartitions and DeleteTopics sent straight to a broker that is
    not the controller reach the controller (only its writes pass the election fence)
    and answer the client as if sent there; Envelope itself is for brokers only."""
    by_node = {int(b.config["node.id"]): b for b in cluster}
    controller = metadata(cluster[0]).controller_id
    assert controller in by_node, controller
    other = next(b for n, b in by_node.items() if n != controller)
    topic = kit.unique_topic("fwd")
    with rawkafka.Conn(other.bootstrap) as c:
        apis = c.api_versions()
        assert 58 not in apis, "Envelope must not be advertised to clients"
        assert apis.get(75) == (0, 0), "DescribeTopicPartitions v0"

        c.send(rawkafka.request(19, 7, 41, rawkafka.create_topics_body(7, topic, 6, 1),
                                flexible_header=True))
        cid, body = c.recv_frame()
        assert cid == 41
        assert rawkafka.parse_create_topics(7, body) == [(topic, 0, None)]
        # Again: the controller's answer comes back, error and message included.
        c.send(rawkafka.request(19, 7, 42, rawkafka.create_topics_body(7, topic, 6, 1),
                                flexible_header=True))
        cid, body = c.recv_frame()
        [(name, code, msg)] = rawkafka.parse_create_topics(7, body)
        assert (cid, name, code) == (42, topic, 36), (cid, name, code, msg)  # TOPIC_ALREADY_EXISTS
    wait_until(lambda: all(len(leaders(b, topic)) == 6 for b in cluster), 15,
               "every broker describes the forwarded topic")
    placed = leaders(cluster[0], topic)
    counts = {n: sum(1 for leader, _ in placed.values() if leader == n) for n in by_node}
    assert counts == {1: 2, 2: 2, 3: 2}, placed

    with rawkafka.Conn(other.bootstrap) as c:
        # CreatePartitions v1: 6 -> 9.
        w = rawkafka.Writer()
        w.array([0], lambda w2, _: w2.string(topic).i32(9).i32(-1)).i32(30000).boolean(False)
        c.send(rawkafka.request(37, 1, 43, bytes(w.buf)))
        cid, body = c.recv_frame()
        r = rawkafka.Reader(body)
        r.i32()
        assert r.array_len() == 1
        assert (cid, r.string(), r.i16()) == (43, topic, 0), r.string()
    wait_until(lambda: all(len(leaders(b, topic)) == 9 for b in cluster), 15,
               "every broker describes 9 partitions")

    # A client's Envelope is answered like a broker's: this broker is not the controller.
    inner = rawkafka.request(19, 7, 1, rawkafka.create_topics_body(7, "never", 1, 1),
                             flexible_header=True)[4:]
    w = rawkafka.Writer(flexible=True)
    w.bytes_(inner).uvarint(0).bytes_(bytes([127, 0, 0, 1])).tags()
    with rawkafka.Conn(other.bootstrap) as c:
        c.send(rawkafka.request(58, 0, 44, bytes(w.buf), flexible_header=True))
        cid, body = c.recv_frame()
    r = rawkafka.Reader(body, flexible=True)
    r.skip_tags()
    assert r.uvarint() == 0  # response_data null
    assert (cid, r.i16()) == (44, 41)  # NOT_CONTROLLER
    assert "never" not in metadata(cluster[0]).topics

    with rawkafka.Conn(other.bootstrap) as c:
        # DeleteTopics v3 (the last classic version).
        w = rawkafka.Writer()
        w.array([topic], lambda w2, t: w2.string(t)).i32(30000)
        c.send(rawkafka.request(20, 3, 45, bytes(w.buf)))
        cid, body = c.recv_frame()
        r = rawkafka.Reader(body)
        r.i32()
        assert r.array_len() == 1
        assert (cid, r.string(), r.i16()) == (45, topic, 0)
    wait_until(lambda: all(topic not in metadata(b).topics for b in cluster), 15,
               "the topic gone from every broker")
    for b in cluster:
        assert "not forwarded to the controller" not in b.log_text(), b.log_tail()


def broker_config(b, name: str) -> tuple[str, int]:
    """(value, source) of a config of broker `b`, as the AdminClient describes it there."""
    from confluent_kafka.admin import ConfigResource, ResourceType
    res = ConfigResource(ResourceType.BROKER, b.config["node.id"])
    a = kit.admin(b.bootstrap)  # kept alive until the result is in
    entry = a.describe_configs([res])[res].result(timeout=15)[name]
    return entry.value, int(entry.source)


def test_dynamic_broker_configs_apply_to_every_broker_and_topic(cluster):
    """kafka-configs --entity-type brokers --entity-default sets a topic-config default for
    the whole cluster (held in etcd): every broker describes it and applies it to every topic
    without an override, its log segments included; a broker's own value wins over it."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
    from test_kafka_tools import CONFIG_CMD, tool
    b1, b2, b3 = cluster
    topic = kit.unique_topic("dyn")
    kit.create_topic(b1.bootstrap, topic, 3)
    default = ["--bootstrap-server", b2.bootstrap, "--entity-type", "brokers", "--entity-default"]
    out = tool(CONFIG_CMD, *default, "--alter", "--add-config",
               "log.segment.bytes=20000,log.retention.ms=7200000")
    assert "Completed updating default config for brokers in the cluster." in out, out
    out = tool(CONFIG_CMD, *default, "--describe")
    assert "Default configs for brokers in the cluster are:" in out, out
    assert re.search(r"^  log\.segment\.bytes=20000 sensitive=false "
                     r"synonyms=\{DYNAMIC_DEFAULT_BROKER_CONFIG:log\.segment\.bytes=20000\}", out,
                     re.M), out
    dynamic_default, dynamic_broker = 3, 2  # Kafka's ConfigSource values
    for b in cluster:
        wait_until(lambda: broker_config(b, "log.retention.ms") == ("7200000", dynamic_default),
                   15, f"broker {b.config['node.id']} sees the cluster default",
                   lambda: broker_config(b, "log.retention.ms"))
    # Every broker rolls its partition's segments at the new size.
    recs = kit.make_records(600, 3, seed=31, tag="dyn", value_size=300)
    kit.produce_confluent(b3.bootstrap, topic, recs, extra={"batch.size": "4000"})
    for p, (leader, _) in leaders(b1, topic).items():
        b = next(x for x in cluster if int(x.config["node.id"]) == leader)
        segments = list(b.partition_dir(topic, p).glob("*.log"))
        assert len(segments) >= 3, (p, leader, segments)
    kit.assert_same_records(recs, kit.consume_confluent(b1.bootstrap, topic, 3))

    # A broker's own value wins over the cluster default, on that broker only.
    res = ConfigResource(ResourceType.BROKER, "3", incremental_configs=[
        ConfigEntry("log.retention.ms", "3600000",
                    incremental_operation=AlterConfigOpType.SET)])
    a = kit.admin(b3.bootstrap)
    a.incremental_alter_configs([res])[res].result(timeout=15)
    assert broker_config(b3, "log.retention.ms") == ("3600000", dynamic_broker)
    assert broker_config(b1, "log.retention.ms") == ("7200000", dynamic_default)
    # Static configs stay static.
    refused = subprocess.run(
        ["java", "-Xmx512m", "-cp", f"{kit.KAFKA_LIB}/*", CONFIG_CMD, *default, "--alter",
         "--add-config", "num.network.threads=4"], capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0
    assert "Cannot update these configs dynamically: num.network.threads" in \
        refused.stdout + refused.stderr, refused.stdout + refused.stderr


def test_a_topic_deleted_while_its_broker_is_down_leaves_no_data_there(cluster, tmp_path):
    """The broker that was down finds its directory of the deleted topic stray at start-up
    and deletes it; the other brokers deleted theirs at once. The topic is tiered: the
    remote data of every partition goes too, that of the down broker's partition deleted
    by the controller (nobody led it at the deletion)."""
    b1, b2, b3 = cluster
    remote = tmp_path / "remote"
    topic = kit.unique_topic("stray")
    a = kit.admin(b1.bootstrap)
    # Not kafka-topics: it refuses segment.bytes below 1 MiB itself.
    a.create_topics([NewTopic(topic, 3, replica_assignment=[[1], [2], [3]], config={
        "remote.storage.enable": "true", "segment.bytes": "2048"})])[topic].result(timeout=30)
    wait_until(lambda: all(len(leaders(b, topic)) == 3 for b in cluster), 15,
               "every broker describes the topic")
    # Batches of 5 records (~1 KB) into 2 KB segments: several rolled segments each.
    kit.produce_confluent(b1.bootstrap, topic, kit.make_records(60, 3, seed=41, tag="stray"),
                          extra={"batch.num.messages": 5})
    assert b2.partition_dir(topic, 1).exists()

    def remote_dirs():
        return sorted(d.name for d in remote.iterdir() if d.name.startswith(f"{topic}-"))

    def uploaded(p: int) -> bool:
        dirs = [d for d in remote.iterdir() if d.name.startswith(f"{topic}-{p}-")]
        return any(f.suffix == ".log" for d in dirs for f in d.iterdir())

    wait_until(lambda: all(uploaded(p) for p in range(3)), 30,
               "a rolled segment of every partition uploaded", remote_dirs)

    b2.kill9()
    wait_until(lambda: leaders(b1, topic)[1][0] == -1, OFFLINE_WITHIN, "partition 1 offline")
    kit.retry(lambda: a.delete_topics([topic])[topic].result(timeout=30), timeout=30,
              what="deleting the topic with broker 2 down")
    wait_until(lambda: not b1.partition_dir(topic, 0).exists() and
               not b3.partition_dir(topic, 2).exists(), 15, "the live brokers' replicas deleted")
    wait_until(lambda: not remote_dirs(), 15, "the remote data of every partition deleted",
               remote_dirs)
    assert b2.partition_dir(topic, 1).exists()  # it was down
    cleaned = f"deleted the remote data of deleted topic '{topic}'"
    wait_until(lambda: any(cleaned in b.log_text() for b in (b1, b3)), 15,
               "the controller's log line")

    b2.start()
    assert not b2.partition_dir(topic, 1).exists()  # gone before it serves
    assert "deleted stray partition directory" in b2.log_text(since_start=True), b2.log_tail()
    assert not remote_dirs()


def test_a_stopped_broker_is_fenced_until_unregistered(cluster):
    """KRaft keeps a stopped broker registered and fenced until `kafka-cluster unregister`;
    so does Strata (its known-broker record), and the broker registers again when started."""
    from test_kafka_tools import tool
    cluster_tool = "org.apache.kafka.tools.ClusterTool"
    b1, b2, b3 = cluster

    def listed() -> str:
        return tool(cluster_tool, "list-endpoints", "--bootstrap-server", b1.bootstrap,
                    "--include-fenced-brokers")
    b3.stop()
    wait_until(lambda: re.search(r"^3\s.*\bfenced\b", listed(), re.M), 15,
               "broker 3 listed as fenced", listed)
    out = tool(cluster_tool, "unregister", "--bootstrap-server", b2.bootstrap, "--id", "3")
    assert "no longer registered" in out, out
    assert not re.search(r"^3\s", listed(), re.M), listed()
    again = subprocess.run(
        ["java", "-Xmx512m", "-cp", f"{kit.KAFKA_LIB}/*", cluster_tool, "unregister",
         "--bootstrap-server", b2.bootstrap, "--id", "3"], capture_output=True, text=True,
        timeout=120)
    assert again.returncode != 0 and "BrokerIdNotRegistered" in again.stdout + again.stderr, \
        again.stdout + again.stderr
    b3.start()
    wait_until(lambda: re.search(r"^3\s.*\bunfenced\b", listed(), re.M), 15,
               "broker 3 registered again", listed)


def test_a_standby_broker_registers_its_capacity_and_holds_nothing(tmp_path, broker_factory):
    """strata.broker.standby: registered (state standby, with the declared capacity) and listed,
    but topics are placed over the active brokers only."""
    import json
    etcd, brokers = start_cluster(tmp_path, broker_factory)
    try:
        standby = broker_factory(config={
            **{k: v for k, v in brokers[0].config.items()
               if k.startswith(("strata.etcd", "strata.metadata", "strata.remote",
                                "remote.log"))},
            "node.id": "4", "strata.broker.standby": "true",
            "strata.broker.capacity.network.in.bytes.per.sec": "125000000",
            "strata.broker.capacity.network.out.bytes.per.sec": "250000000",
            "strata.broker.capacity.cpu.cores": "16"})
        wait_until(lambda: len(metadata(brokers[0]).brokers) == 4, 15, "4 registered brokers",
                   lambda: metadata(brokers[0]).brokers)
        reg = json.loads(etcd.get_prefix(f"{PREFIX}/brokers/4")[f"{PREFIX}/brokers/4"]["value"])
        assert reg["state"] == "standby", reg
        assert reg["capacity"]["network_in_bytes_per_sec"] == 125000000, reg
        assert reg["capacity"]["network_out_bytes_per_sec"] == 250000000, reg
        assert reg["capacity"]["cpu_cores"] == 16, reg
        assert reg["capacity"]["disk_bytes"] > 0, reg  # the log dir's file system
        active = json.loads(etcd.get_prefix(f"{PREFIX}/brokers/1")[f"{PREFIX}/brokers/1"]["value"])
        assert active["state"] == "active" and "network_in_bytes_per_sec" not in active["capacity"]

        topic = kit.unique_topic("not-on-standby")
        kit.create_topic(standby.bootstrap, topic, 12)  # even through the standby broker
        placed = leaders(brokers[0], topic)
        assert len(placed) == 12 and all(4 not in replicas for _, replicas in placed.values()), \
            placed
        standby.stop()
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()


def test_brokers_reach_etcd_over_tls_with_a_user(tmp_path, broker_factory):
    """etcd with TLS, client certificates required and authentication on: brokers connect with
    strata.etcd.tls.* and strata.etcd.user/password, register, create a topic, replicate;
    without the password a broker cannot start."""
    import subprocess as sp
    import conftest
    from certs import CA
    from etcdkit import Etcd
    ca = CA(tmp_path / "certs")
    server = ca.issue("etcd", "127.0.0.1", san="IP:127.0.0.1,DNS:localhost")
    client = ca.issue("strata", "strata-broker")
    etcd = Etcd(tmp_path / "etcd", tls={"cert": server.cert, "key": server.key, "ca": ca.cert})
    etcd.enable_auth("root-secret")
    secure = {"strata.etcd.tls.ca.location": str(ca.cert),
              "strata.etcd.tls.cert.location": str(client.cert),
              "strata.etcd.tls.key.location": str(client.key),
              "strata.etcd.user": "root", "strata.etcd.password": "root-secret"}
    brokers = []
    try:
        for node in (1, 2):
            brokers.append(broker_factory(config={
                "node.id": str(node), "strata.metadata.backend": "etcd",
                "strata.etcd.endpoints": etcd.endpoints, "strata.etcd.prefix": PREFIX,
                "strata.etcd.lease.ttl.ms": str(TTL_MS), **secure}))
        registered = etcd.get_prefix(PREFIX + "/brokers/")
        assert len(registered) == 2, registered
        topic = kit.unique_topic("etcd-tls")
        from confluent_kafka.admin import NewTopic
        a = kit.admin(brokers[0].bootstrap)
        a.create_topics([NewTopic(topic, 2, 2)])[topic].result(timeout=30)
        kit.wait_for_topic(a, topic, 2)
        recs = kit.make_records(40, 2, seed=79, tag="etcd-tls")
        kit.produce_confluent(brokers[1].bootstrap, topic, recs, extra={"acks": "all"})
        kit.assert_same_records(recs, kit.consume_confluent(brokers[0].bootstrap, topic, 2))
        # A wrong password: no registration, start-up fails naming etcd.
        props = tmp_path / "bad.properties"
        props.write_text("\n".join([
            f"node.id=3", f"log.dirs={tmp_path / 'bad-data'}",
            f"listeners=PLAINTEXT://127.0.0.1:{free_port()}",
            "strata.metadata.backend=etcd", f"strata.etcd.endpoints={etcd.endpoints}",
            f"strata.etcd.prefix={PREFIX}", "strata.etcd.request.timeout.ms=1000",
            *[f"{k}={v}" for k, v in secure.items() if k != "strata.etcd.password"],
            "strata.etcd.password=wrong"]) + "\n")
        r = sp.run([conftest.STRATA_BIN, "serve", "--config", str(props)], capture_output=True,
                   text=True, timeout=120)
        assert r.returncode != 0 and "etcd" in (r.stdout + r.stderr), (r.stdout + r.stderr)[-3000:]
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()
