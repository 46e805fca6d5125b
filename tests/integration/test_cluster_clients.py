"""Every client against a three-broker cluster (one real etcd, test_cluster.py's
`start_cluster`): topics of 1 to 48 partitions, data through any broker, auto-creation and
consumer groups whose coordinators are on different brokers.

What is checked:
* three topics created at the same time, each through a different broker: 1 partition with
  RF 3 by kafka-topics, 7 partitions with RF 2 by confluent-kafka's AdminClient and 48
  partitions with RF 3 by Kafka's Java AdminClient (java/.../TopicAdmin.java). Per topic the
  brokers' replica counts differ by at most one, and so do their leader counts. Once every
  ISR is full, kafka-topics --describe, confluent-kafka's Metadata (asked of each broker) and
  the Java AdminClient's describeTopics show the same leader, replicas (in order) and ISR
  for every partition.
* Kafka's Java producer and consumer (java/.../ProduceConsume.java), confluent-kafka,
  kafka-python and kcat each write a few records to every partition of the three topics, one
  client after the other, each through a different bootstrap broker. Each client reads its
  own records back at exactly the expected offsets, with identical keys, values, headers and
  timestamps, through a broker other than the one it produced through. ProduceConsume is the
  exception: it reads through the broker it produced through, so confluent-kafka then reads
  the Java records through another broker and checks each one's offset, index and timestamp.
  At the end each partition holds the four clients' records contiguously from offset 0.
* a confluent-kafka producer bootstrapped by a broker that is not the controller writes to a
  topic that does not exist. The topic is auto-created with num.partitions partitions and
  default.replication.factor (3) replicas over all brokers, and the records come back exactly.
* a raw FindCoordinator, asked of every broker, gets the same answer from each, namely the
  leader of the group's __consumer_offsets partition. Three groups found this way are
  coordinated by brokers 1, 2 and 3. They consume one 48-partition topic at the same time,
  each with two confluent-kafka members bootstrapped through the brokers that are not its
  coordinator. Each group reads every record, and list_consumer_group_offsets shows each
  group's committed offsets equal to the end offsets it consumed.
"""
from __future__ import annotations

import re
import subprocess
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from confluent_kafka.admin import NewTopic

import kit
import rawkafka
import test_kafka_python
from kit import wait_until
from test_cluster import cluster  # noqa: F401 (the 3-broker fixture)
from test_cluster import group_partition, leaders, metadata, start_cluster
from test_consumer_groups import members  # noqa: F401 (the group-member processes fixture)
from test_consumer_groups import (admin_committed, balanced, end_offsets, start_members,
                                  wait_all_consumed)
from test_consumer_groups_java import java_classes  # noqa: F401 (java/src compiled)
from test_java_clients import run_java
from test_kafka_tools import TOPIC_CMD, tool
from test_kcat import FMT, kcat, make_lines, parse

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's cluster mode")

NODES = (1, 2, 3)
K = 3  # records per partition per client
# Followers join an ISR within a few fetch rounds; 48 partitions being made at once included.
ISR_FULL_WITHIN = 30

# (topic, partition) -> (leader, replicas in order, ISR sorted)
View = dict[tuple[str, int], tuple[int, list[int], list[int]]]


def confluent_view(b, topics) -> View:
    """What confluent-kafka's Metadata from broker `b` says of `topics` (those it knows)."""
    md = metadata(b)
    return {(t, p): (pm.leader, list(pm.replicas), sorted(pm.isrs))
            for t in topics if t in md.topics and md.topics[t].error is None
            for p, pm in md.topics[t].partitions.items()}


DESCRIBE_RE = re.compile(r"^\tTopic: (\S+)\tPartition: (\d+)\tLeader: (-?\d+|none)\t"
                         r"Replicas: ([\d,]*)\tIsr: ([\d,]*)(?:\t|$)", re.M)


def ids(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x not in ("", "-")]


def cli_view(b, topics) -> View:
    """kafka-topics --describe through broker `b` (`--topic` takes a regular expression)."""
    out = tool(TOPIC_CMD, "--bootstrap-server", b.bootstrap, "--describe",
               "--topic", "|".join(map(re.escape, topics)))
    return {(t, int(p)): (-1 if leader == "none" else int(leader), ids(replicas), sorted(ids(isr)))
            for t, p, leader, replicas, isr in DESCRIBE_RE.findall(out)}


def topic_admin(classpath: str, b, *args: str) -> str:
    """java/.../TopicAdmin.java (Kafka's Java AdminClient) through broker `b`."""
    r = subprocess.run(["java", "-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                        "-cp", classpath, "io.strata.it.TopicAdmin", "--bootstrap", b.bootstrap,
                        *args], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"TopicAdmin {' '.join(args)} -> {r.returncode}:\n" \
                              f"{(r.stdout + r.stderr)[-6000:]}"
    return r.stdout


def java_view(classpath: str, b, topics) -> View:
    out = topic_admin(classpath, b, "describe", ",".join(topics))
    view = {}
    for line in out.splitlines():
        _, t, p, leader, replicas, isr = line.split()
        view[(t, int(p))] = (int(leader), ids(replicas), sorted(ids(isr)))
    return view


def assert_same_view(what: str, got: View, want: View) -> None:
    diff = {k: (want.get(k), got.get(k)) for k in sorted(set(want) | set(got))
            if want.get(k) != got.get(k)}
    assert not diff, f"{what} differs from confluent-kafka's Metadata (want, got): {diff}"


def full_isrs(view: View, partitions: int) -> bool:
    return len(view) == partitions and all(
        leader in replicas and isr == sorted(replicas) for leader, replicas, isr in view.values())


def assert_spread(view: View, topic: str, partitions: int, rf: int) -> None:
    """Every partition has `rf` distinct replicas led by one of them; per broker the replica
    counts differ by at most one, and so do the leader counts."""
    placed = {p: v for (t, p), v in view.items() if t == topic}
    assert sorted(placed) == list(range(partitions)), placed
    for p, (leader, replicas, _) in placed.items():
        assert len(set(replicas)) == len(replicas) == rf and set(replicas) <= set(NODES), \
            (topic, p, replicas)
        assert leader in replicas, (topic, p, leader, replicas)
    replica_counts = Counter(n for _, replicas, _ in placed.values() for n in replicas)
    leader_counts = Counter(leader for leader, _, _ in placed.values())
    print(f"{topic}: {partitions} partitions, RF {rf}: replicas per broker "
          f"{dict(sorted(replica_counts.items()))}, leaders {dict(sorted(leader_counts.items()))}")
    for counts in (replica_counts, leader_counts):
        per_node = [counts.get(n, 0) for n in NODES]
        assert max(per_node) - min(per_node) <= 1, \
            f"{topic}: replicas per broker {dict(replica_counts)}, leaders per broker " \
            f"{dict(leader_counts)}; placement {placed}"


class KafkaPythonMessage:
    """A kafka-python ConsumerRecord with confluent-kafka's Message accessors, for
    kit.assert_same_records."""

    def __init__(self, m):
        self.m = m

    def offset(self):
        return self.m.offset

    def key(self):
        return self.m.key

    def value(self):
        return self.m.value

    def headers(self):
        return list(self.m.headers)

    def timestamp(self):
        return (kit.TIMESTAMP_CREATE_TIME if self.m.timestamp_type == 0 else 2, self.m.timestamp)


def every_client_produces_and_consumes(brokers, topic: str, partitions: int, seed: int) -> None:
    """Java, confluent-kafka, kafka-python, then kcat: K records to every partition each,
    read back at the expected offsets; client c produces through brokers[(seed + c) % 3]
    and (except Java) reads through the next broker."""
    def via(c: int):
        return brokers[(seed + c) % 3], brokers[(seed + c + 1) % 3]

    n = K * partitions
    prod, _ = via(0)  # ProduceConsume writes and reads through one broker, from offset 0
    out = run_java(prod.bootstrap, topic, "lz4", records=n, partitions=partitions)
    assert f"partitions={partitions} produced={n} consumed={n} mismatches=0" in out, out

    prod, cons = via(1)
    recs = kit.make_records(n, partitions, seed=seed, tag=f"confluent-{topic}")
    kit.produce_confluent(prod.bootstrap, topic, recs, {"compression.type": "zstd"})
    assert [r.offset for r in recs] == [K + r.index // partitions for r in recs]
    kit.assert_same_records(recs, kit.consume_confluent(cons.bootstrap, topic, partitions,
                                                        start={p: K for p in range(partitions)}),
                            contiguous_from=K)

    prod, cons = via(2)
    # kafka-python cannot send null header values, nor a record with null key and value.
    recs = kit.make_records(n, partitions, seed=seed + 1, tag=f"kafka-python-{topic}",
                            null_header_values=False)
    for r in recs:
        if r.key is None and r.value is None:
            r.key = b""
    test_kafka_python.produce(prod.bootstrap, topic, recs, "snappy", idempotence=True)
    assert [r.offset for r in recs] == [2 * K + r.index // partitions for r in recs]
    got = test_kafka_python.consume(cons.bootstrap, topic, partitions)
    kit.assert_same_records(recs, {p: [KafkaPythonMessage(m) for m in msgs if m.offset >= 2 * K]
                                   for p, msgs in got.items()}, contiguous_from=2 * K)

    prod, cons = via(3)
    sent = {p: make_lines("gzip", p, K, seed=seed * 1000 + p) for p in range(partitions)}
    for p, lines in sent.items():
        kcat("-P", "-b", prod.bootstrap, "-t", topic, "-p", str(p), "-z", "gzip", "-K", ":",
             "-H", f"part={p}", "-X", "acks=all", stdin="".join(f"{k}:{v}\n" for k, v in lines))
    got = parse(kcat("-C", "-b", cons.bootstrap, "-t", topic, "-o", str(3 * K), "-e", "-q",
                     "-f", FMT))
    for p, lines in sent.items():
        assert [(o, k, v, h) for o, k, v, h, _ in got.get(p, [])] == [
            (3 * K + i, k, v, f"part={p}") for i, (k, v) in enumerate(lines)], f"{topic}-{p}"

    # Everything, through a broker ProduceConsume did not use: its records at offset i // P.
    got = kit.consume_confluent(via(1)[0].bootstrap, topic, partitions)
    for p, msgs in got.items():
        assert [m.offset() for m in msgs] == list(range(4 * K)), f"{topic}-{p}"
        for m in msgs[:K]:
            i = int(dict(m.headers())["idx"])
            assert (i % partitions, i // partitions) == (p, m.offset()), (topic, p, m.offset(), i)
            assert m.timestamp() == (kit.TIMESTAMP_CREATE_TIME, kit.BASE_TS + i)
            assert ("codec", b"lz4") in m.headers(), m.headers()


def test_topics_made_by_three_admin_clients_and_used_by_every_client(cluster, java_classes):
    b1, b2, b3 = cluster
    cli_t, ck_t, java_t = (kit.unique_topic(f"cc-{n}") for n in ("cli", "confluent", "java"))
    spec = {cli_t: (1, 3), ck_t: (7, 2), java_t: (48, 3)}  # topic -> (partitions, RF)
    total = sum(n for n, _ in spec.values())

    def by_cli():
        tool(TOPIC_CMD, "--bootstrap-server", b1.bootstrap, "--create", "--topic", cli_t,
             "--partitions", "1", "--replication-factor", "3")

    def by_confluent():
        a = kit.admin(b2.bootstrap)
        a.create_topics([NewTopic(ck_t, 7, 2)], request_timeout=60)[ck_t].result(timeout=60)

    def by_java():
        assert f"CREATED {java_t}" in topic_admin(java_classes, b3, "create", java_t, "48", "3")

    with ThreadPoolExecutor(3) as pool:  # all three at once
        for f in [pool.submit(fn) for fn in (by_cli, by_confluent, by_java)]:
            f.result()

    def views():
        return {b.config["node.id"]: confluent_view(b, spec) for b in cluster}
    wait_until(lambda: all(full_isrs(v, total) for v in views().values()), ISR_FULL_WITHIN,
               "every broker describing every partition with a full ISR",
               lambda: {n: {k: v for k, v in view.items() if not full_isrs({k: v}, 1)} or len(view)
                        for n, view in views().items()})
    want = confluent_view(b1, spec)
    for b in (b2, b3):
        assert_same_view(f"broker {b.config['node.id']}'s Metadata", confluent_view(b, spec), want)
    for t, (n, rf) in spec.items():
        assert_spread(want, t, n, rf)
    assert_same_view("kafka-topics --describe", cli_view(b2, spec), want)
    assert_same_view("Java AdminClient describeTopics", java_view(java_classes, b3, spec), want)

    for seed, (t, (n, _)) in enumerate(spec.items()):
        every_client_produces_and_consumes(cluster, t, n, seed)


AUTO_CREATE = {"auto.create.topics.enable": "true", "num.partitions": "5",
               "default.replication.factor": "3"}


def test_a_producer_auto_creates_a_topic_over_every_broker(tmp_path, broker_factory):
    etcd, brokers = start_cluster(tmp_path, broker_factory, extra=AUTO_CREATE)
    try:
        controller = metadata(brokers[0]).controller_id
        assert controller in NODES, controller
        via = next(b for b in brokers if int(b.config["node.id"]) != controller)
        reader = next(b for b in brokers if b is not via)
        topic = kit.unique_topic("auto")
        assert topic not in metadata(via).topics
        recs = kit.make_records(10 * 5, 5, seed=51, tag="auto")
        kit.produce_confluent(via.bootstrap, topic, recs)

        wait_until(lambda: all(full_isrs(confluent_view(b, [topic]), 5) for b in brokers),
                   ISR_FULL_WITHIN, "every broker describing the auto-created topic, ISRs full",
                   lambda: [confluent_view(b, [topic]) for b in brokers])
        view = confluent_view(via, [topic])
        assert_spread(view, topic, 5, 3)
        for b in brokers:
            assert_same_view(f"broker {b.config['node.id']}'s Metadata",
                             confluent_view(b, [topic]), view)
        kit.assert_same_records(recs, kit.consume_confluent(reader.bootstrap, topic, 5))
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()


def find_coordinator(b, group: str) -> tuple[int, int]:
    """FindCoordinator v1 for a group, sent to broker `b` -> (error code, node id)."""
    with rawkafka.Conn(b.bootstrap) as c:
        c.send(rawkafka.request(10, 1, 11, bytes(rawkafka.Writer().string(group).i8(0).buf)))
        cid, body = c.recv_frame()
    assert cid == 11
    r = rawkafka.Reader(body)
    r.i32()  # throttle_time_ms
    code = r.i16()
    r.string()  # error_message
    return code, r.i32()


GROUP_PARTITIONS = 48


def test_groups_coordinated_by_each_broker_consume_one_topic_at_once(cluster, members):
    by_node = {int(b.config["node.id"]): b for b in cluster}
    topic = kit.unique_topic("groups")
    kit.create_topic(cluster[0].bootstrap, topic, GROUP_PARTITIONS)
    recs = kit.make_records(5 * GROUP_PARTITIONS, GROUP_PARTITIONS, seed=61, tag="groups")
    kit.produce_confluent(cluster[1].bootstrap, topic, recs)
    wanted = {(r.partition, r.offset) for r in recs}

    def answers(group: str) -> dict[int, tuple[int, int]]:
        return {n: find_coordinator(b, group) for n, b in by_node.items()}
    # __consumer_offsets is made at the first FindCoordinator: COORDINATOR_NOT_AVAILABLE
    # until its partitions have leaders.
    wait_until(lambda: all(code == 0 for code, _ in answers(f"{topic}-probe").values()), 20,
               "FindCoordinator answered by every broker", lambda: answers(f"{topic}-probe"))
    groups: dict[int, str] = {}
    for i in range(300):
        g = f"{topic}-g{i}"
        got = answers(g)
        assert len(set(got.values())) == 1, f"brokers disagree on {g}'s coordinator: {got}"
        code, node = got[1]
        assert code == 0 and node in NODES, got
        groups.setdefault(node, g)
        if len(groups) == len(NODES):
            break
    assert sorted(groups) == list(NODES), groups
    print(f"coordinators: {groups}")
    offsets_leaders = leaders(cluster[0], "__consumer_offsets")
    for node, g in groups.items():
        assert offsets_leaders[group_partition(g, len(offsets_leaders))][0] == node, \
            (g, node, offsets_leaders)

    running = {node: [m for n, b in by_node.items() if n != node
                      for m in start_members(members, 1, b.bootstrap, g, topic)]
               for node, g in groups.items()}
    a = kit.admin(cluster[2].bootstrap)  # kept alive until its futures complete
    for node, ms in running.items():
        g = groups[node]
        wait_until(lambda: balanced(ms, GROUP_PARTITIONS), 60,
                   f"group {g} (coordinator {node}): two members owning 24 partitions each",
                   lambda: [(sorted(m.snapshot()[0]), m.errors[:3]) for m in ms])
        d = a.describe_consumer_groups([g])[g].result(30)
        assert (d.coordinator.id, len(d.members), str(d.state).split(".")[-1]) == \
            (node, 2, "STABLE"), (g, d.coordinator, d.members, d.state)
    for ms in running.values():
        wait_all_consumed(ms, wanted)
    for ms in running.values():
        for m in ms:
            m.stop()  # commits what it consumed, leaves the group

    ends = end_offsets(cluster[0].bootstrap, topic, GROUP_PARTITIONS)
    assert ends == {p: 5 for p in range(GROUP_PARTITIONS)}
    for node, ms in running.items():
        consumed = set().union(*(m.snapshot()[1] for m in ms))
        consumed_ends = {p: max(o for pp, o in consumed if pp == p) + 1
                         for p in range(GROUP_PARTITIONS)}
        assert consumed_ends == ends
        reader = next(b for n, b in by_node.items() if n != node)
        assert admin_committed(reader.bootstrap, groups[node], topic, GROUP_PARTITIONS) == ends, \
            f"group {groups[node]} (coordinator {node})"
