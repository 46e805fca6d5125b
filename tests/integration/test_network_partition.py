"""Network partition: the leader of an RF=3 partition (min.insync.replicas=2, unclean election
off) is cut off from etcd, from the other two brokers and from the test's clients, while an
idempotent acks=all producer writes unique values.

Each broker runs in a network namespace of its own, joined by a veth pair to a Linux bridge in
the root namespace where etcd listens; cutting a broker takes its veth's bridge end down (the
cable pulled: nothing crosses in either direction), healing brings it up again.

What is checked: within the lease TTL the other two elect a new leader from the ISR (as a
surviving broker's metadata shows), and the producer's acknowledgements resume through it.
The cut leader, out of contact but not knowing it has been replaced, acknowledges no acks=all
write (a Produce sent to it from inside its namespace gets an error, here REQUEST_TIMED_OUT)
while it still takes acks=1 writes into its log: a tail nobody else has. After the heal it
registers again, follows the new leader, truncates that tail and rejoins the ISR; the three
logs end byte-identical, every acknowledged value is read back exactly once from offset 0 (in
send order), and nothing written only to the cut leader is readable anywhere.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from collections import Counter

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import NewTopic

import kit
from etcdkit import Etcd
from kit import wait_until
from netkit import Net, net, partitioned_cluster  # noqa: F401 (net, partitioned_cluster: fixtures)
from test_cluster import OFFLINE_WITHIN, PREFIX, TTL_MS, leaders, metadata, prometheus
from test_replication import JOIN_WITHIN, isr, log_bytes, wait_identical

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's cluster mode")

# The producer's request.timeout.ms (the Produce timeout the broker enforces) and, a second
# longer, its socket.timeout.ms: librdkafka gives up a request the cut leader never answers
# after that long, drops the connection and looks the leader up again.
PRODUCE_TIMEOUT_MS = 5000
SOCKET_TIMEOUT_MS = PRODUCE_TIMEOUT_MS + 1000
# Acknowledgements resume once the new leader is elected and the producer has given up its
# requests to the cut one (then a metadata refresh and a retry).
RESUME_WITHIN = OFFLINE_WITHIN + SOCKET_TIMEOUT_MS / 1000 + 5
# The timeout of the acks=all Produce sent straight to the cut leader.
DIRECT_TIMEOUT_MS = 2000
# After the heal the old leader learns its lease is gone at its next renewal (every TTL/3),
# registers again (TTL/3 later), follows the new leader, truncates and catches up.
REJOIN_WITHIN = TTL_MS / 1000 + JOIN_WITHIN


# ---- clients --------------------------------------------------------------------------

class AckedProducer:
    """An idempotent acks=all confluent-kafka producer writing "acked-n" to partition 0 from
    its own thread (~200 a second); what it sent and what was acknowledged, in order."""

    def __init__(self, bootstrap: str, topic: str):
        self.topic = topic
        self.p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                           "acks": "all", "linger.ms": 5,
                           "request.timeout.ms": PRODUCE_TIMEOUT_MS,
                           "socket.timeout.ms": SOCKET_TIMEOUT_MS,
                           "message.timeout.ms": 120000})
        self.sent: list[bytes] = []
        self.acked: list[bytes] = []
        self.errors: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run)

    def _delivered(self, err, msg):
        if err is not None:
            self.errors.append(f"{msg.value()!r}: {err}")
        else:
            self.acked.append(msg.value())

    def _run(self):
        i = 0
        while not self.stop.is_set():
            value = b"acked-%06d" % i
            self.p.produce(self.topic, value, partition=0, on_delivery=self._delivered)
            self.sent.append(value)
            i += 1
            self.p.poll(0.005)
        self.p.flush(120)

    def finish(self) -> None:
        self.stop.set()
        self.thread.join(150)
        assert not self.thread.is_alive(), "the producer did not flush"


IN_NETNS_PRODUCE = """
import json, sys
import rawkafka
bootstrap, topic, acks, timeout_ms, value, ts = sys.argv[1:7]
batch = rawkafka.record_batch([(None, value.encode(), [])], int(ts))
body = rawkafka.produce_body(8, topic, 0, batch, acks=int(acks), timeout_ms=int(timeout_ms))
try:
    with rawkafka.Conn(bootstrap, timeout=int(timeout_ms) / 1000 + 10) as c:
        c.send(rawkafka.request(0, 8, 1, body))
        _, answer = c.recv_frame()
    [(_, _, code, base)] = rawkafka.parse_produce_response(8, answer)
    print(json.dumps({"code": code, "base_offset": base}))
except OSError as e:
    print(json.dumps({"code": None, "error": repr(e)}))
"""

IN_NETNS_METRICS = """
import sys, urllib.request
print(urllib.request.urlopen(f"http://{sys.argv[1]}/metrics", timeout=10).read().decode())
"""


def in_netns(ns: str, script: str, *args: str, timeout: float = 60) -> str:
    """Runs a Python script inside network namespace `ns` (tests/integration on its path)."""
    r = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", script, *args],
                       capture_output=True, text=True, timeout=timeout, cwd=kit.IT_DIR)
    assert r.returncode == 0, f"script in {ns} failed: {r.stderr[-3000:]}"
    return r.stdout


def produce_from_inside(net: Net, n: int, b, topic: str, acks: int, value: bytes) -> dict:
    """One record by Produce v8 straight to broker `n`, sent from inside its own namespace:
    {"code": error code, "base_offset": ...}, or {"code": None, "error": ...} if unanswered."""
    out = in_netns(net.netns(n), IN_NETNS_PRODUCE, b.bootstrap, topic, str(acks),
                   str(DIRECT_TIMEOUT_MS), value.decode(), str(kit.BASE_TS))
    return json.loads(out)


def log_end_offsets(metrics: dict[str, float], topic: str) -> dict[int, float]:
    """strata_log_end_offset of the topic's partitions in a /metrics reading."""
    out = {}
    for k, v in metrics.items():
        if k.startswith("strata_log_end_offset{") and f'topic="{topic}"' in k:
            out[int(re.search(r'partition="(\d+)"', k).group(1))] = v
    return out


def log_end_from_inside(net: Net, n: int, b, topic: str) -> float:
    text = in_netns(net.netns(n), IN_NETNS_METRICS, b.config["strata.admin.listener"])
    metrics = {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
               for line in text.splitlines() if line and not line.startswith("#")}
    return log_end_offsets(metrics, topic)[0]


def broker_epoch(etcd: Etcd, n: int) -> int | None:
    """Broker n's epoch (its registration's create revision), None while unregistered."""
    reg = etcd.get_prefix(f"{PREFIX}/brokers/").get(f"{PREFIX}/brokers/{n}")
    return reg["create_revision"] if reg else None


def partition_record(etcd: Etcd, topic: str) -> dict:
    """Partition 0's record in etcd: leader, leader_epoch, isr, ..."""
    kvs = etcd.get_prefix(f"{PREFIX}/")
    topic_id = json.loads(kvs[f"{PREFIX}/topics/{topic}"]["value"])["id"]
    return json.loads(kvs[f"{PREFIX}/partitions/{topic_id}/0"]["value"])


# Answers that acknowledge nothing: REQUEST_TIMED_OUT, NOT_LEADER_OR_FOLLOWER,
# NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND.
NOT_ACKNOWLEDGED = {7, 6, 19, 20}


# ---- the test -------------------------------------------------------------------------

def test_a_partitioned_leader_stops_acknowledging_and_truncates_its_tail_on_heal(
        partitioned_cluster):
    net, etcd, brokers = partitioned_cluster
    nodes = {n: b for n, b in enumerate(brokers, start=1)}
    topic = kit.unique_topic("netsplit")
    a = kit.admin(brokers[0].bootstrap)
    a.create_topics([NewTopic(topic, 1, 3, config={
        "min.insync.replicas": "2", "unclean.leader.election.enable": "false"})])[topic].result(30)
    wait_until(lambda: isr(brokers[0], topic).get(0) == [1, 2, 3], JOIN_WITHIN, "the ISR full",
               lambda: isr(brokers[0], topic))

    producer = AckedProducer(",".join(b.bootstrap for b in brokers), topic)
    producer.thread.start()
    try:
        wait_until(lambda: len(producer.acked) >= 200, 30, "the producer under way",
                   lambda: (len(producer.acked), producer.errors[:3]))

        # 1. Cut the leader off.
        old = leaders(brokers[0], topic)[0][0]
        victim = nodes[old]
        others = sorted(n for n in nodes if n != old)
        survivor = nodes[others[0]]
        epoch_before = broker_epoch(etcd, old)
        record_before = partition_record(etcd, topic)
        acked_at_cut = len(producer.acked)
        cut_at = time.monotonic()
        net.cut(old)
        print(f"cut broker {old} (leader of {topic}-0 at leader epoch "
              f"{record_before['leader_epoch']}, broker epoch {epoch_before}) off after "
              f"{acked_at_cut} acks")

        # 2. Its lease expires; a new leader among the others, out of the old one's ISR,
        # at a higher leader epoch; acks resume.
        wait_until(lambda: broker_epoch(etcd, old) is None, OFFLINE_WITHIN,
                   f"broker {old}'s registration gone with its lease (TTL {TTL_MS} ms)",
                   lambda: etcd.get_prefix(f"{PREFIX}/brokers/").keys())
        wait_until(lambda: leaders(survivor, topic)[0][0] in others, OFFLINE_WITHIN,
                   f"a new leader among {others} (lease TTL {TTL_MS} ms)",
                   lambda: leaders(survivor, topic))
        failover_s = time.monotonic() - cut_at
        new = leaders(survivor, topic)[0][0]
        wait_until(lambda: isr(survivor, topic)[0] == others, OFFLINE_WITHIN,
                   f"broker {old} out of the ISR", lambda: isr(survivor, topic))
        record_cut = partition_record(etcd, topic)
        assert record_cut["leader"] == new and sorted(record_cut["isr"]) == others, record_cut
        assert record_cut["leader_epoch"] > record_before["leader_epoch"], record_cut
        assert sorted(b.id for b in metadata(survivor).brokers.values()) == others
        wait_until(lambda: len(producer.acked) >= acked_at_cut + 200, RESUME_WITHIN,
                   f"acknowledgements through the new leader {new}",
                   lambda: (len(producer.acked) - acked_at_cut, producer.errors[:3]))
        resume_s = time.monotonic() - cut_at
        print(f"broker {new} leads after {failover_s:.2f}s; 200 more acks after {resume_s:.2f}s")

        # 3. The cut leader acknowledges no acks=all write; acks=1 goes into its log only.
        all_answer = produce_from_inside(net, old, victim, topic, -1, b"cut-acks-all")
        one_answer = produce_from_inside(net, old, victim, topic, 1, b"cut-acks-1")
        cut_end = log_end_from_inside(net, old, victim, topic)
        print(f"broker {old} while cut: acks=all -> {all_answer}, acks=1 -> {one_answer}, "
              f"log end {cut_end:.0f}")
        assert all_answer["code"] in NOT_ACKNOWLEDGED, (
            f"acks=all to the cut leader: {all_answer}")
        assert one_answer["code"] == 0, (
            f"acks=1 to the cut leader (which still believes it leads): {one_answer}")
        assert b"cut-acks-1" in log_bytes(victim, topic, 0), "the acks=1 tail is not in its log"
        assert one_answer["base_offset"] < cut_end

        # 4. Heal: the old leader follows, truncates its tail and rejoins the ISR.
        heal_at = time.monotonic()
        net.heal(old)
        wait_until(lambda: isr(survivor, topic)[0] == [1, 2, 3], REJOIN_WITHIN,
                   f"broker {old} back in the ISR", lambda: isr(survivor, topic))
        rejoin_s = time.monotonic() - heal_at
        assert broker_epoch(etcd, old) > epoch_before  # registered again, a new lease
        wait_until(lambda: b"cut-acks" not in log_bytes(victim, topic, 0), JOIN_WITHIN,
                   f"broker {old}'s unacknowledged tail truncated",
                   lambda: log_bytes(victim, topic, 0)[-200:])
        truncated = [line for line in victim.log_text(since_start=True).splitlines()
                     if "diverges from the leader" in line and topic in line]
        print(f"broker {old} back in the ISR {rejoin_s:.2f}s after the heal; "
              f"{truncated[-1] if truncated else 'no divergence line logged'}")
        assert leaders(survivor, topic)[0][0] in others
    finally:
        producer.finish()

    # 5. Identical replicas; every acknowledged value once; nothing of the cut tail.
    wait_identical(brokers, topic, 1)
    ends = {n: log_end_offsets(prometheus(b), topic)[0] for n, b in nodes.items()}
    assert len(set(ends.values())) == 1, f"log end offsets differ: {ends}"
    got = kit.consume_confluent(survivor.bootstrap, topic, 1)[0]
    read = [m.value() for m in got]
    counts = Counter(read)
    lost = [v for v in producer.acked if v not in counts]
    duplicated = [v for v, c in counts.items() if c > 1]
    print(f"sent {len(producer.sent)}, acknowledged {len(producer.acked)}, read {len(read)}, "
          f"lost {len(lost)}, duplicated {len(duplicated)}; log end {ends}")
    assert producer.errors == [], producer.errors[:5]
    assert lost == [] and duplicated == [], (lost[:5], duplicated[:5])
    assert not any(v.startswith(b"cut-") for v in read), [v for v in read if v.startswith(b"cut-")]
    assert read == producer.acked == producer.sent, "not every sent value read back in order"
