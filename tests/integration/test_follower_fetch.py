"""Consumers read from the nearest replica (KIP-392, "fetch from follower"): three brokers in
racks r1, r2 and r3 with replica.selector.class = Kafka's RackAwareReplicaSelector.

What is checked: a leader in r1 answers a consumer fetch (v11+) whose rack_id is r2 with
preferred_read_replica = the r2 follower and no records, and one from its own rack (or without
a rack) with records; librdkafka (confluent-kafka) and the Java consumer with client.rack set
then read every acknowledged record, identical, from that follower (its
strata_follower_fetch_* counters, the leader's strata_preferred_read_replica_total); a follower
answers as Kafka's: records up to its own high watermark, preferred_read_replica -1,
NOT_LEADER_OR_FOLLOWER below Fetch v11, FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH against its
leader epoch, OFFSET_OUT_OF_RANGE past its log end; on a tiered topic (remote storage on HDFS)
the follower serves the offsets below its local log start from the leader's remote log and
writes nothing there.
"""
from __future__ import annotations

import json
import subprocess
import urllib.request

import pytest
from confluent_kafka.admin import NewTopic

import kit
import rawkafka
from kit import wait_until
from test_cluster import OFFLINE_WITHIN, leaders, prometheus, start_cluster
from test_replication import JOIN_WITHIN, isr, log_bytes

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's cluster mode")

RACK_AWARE = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
NOT_LEADER_OR_FOLLOWER = 6
OFFSET_OUT_OF_RANGE = 1
FENCED_LEADER_EPOCH = 74
UNKNOWN_LEADER_EPOCH = 75


def start_racks(tmp_path, broker_factory, **more: str):
    """Brokers 1, 2, 3 in racks r1, r2, r3 (brokers[n - 1] is node n)."""
    return start_cluster(
        tmp_path, broker_factory, extra={"replica.selector.class": RACK_AWARE,
                                         "log.retention.check.interval.ms": "300", **more},
        per_node={n: {"broker.rack": f"r{n}"} for n in (1, 2, 3)})


@pytest.fixture
def racks(tmp_path, broker_factory):
    etcd, brokers = start_racks(tmp_path, broker_factory)
    yield brokers
    for b in brokers:
        b.stop()
    etcd.stop_all()


@pytest.fixture
def racks_on_hdfs(tmp_path, broker_factory, remote_uri):
    """The same, with remote storage on HDFS."""
    etcd, brokers = start_racks(tmp_path, broker_factory,
                                **{"strata.remote.storage.uri": remote_uri})
    yield brokers
    for b in brokers:
        b.stop()
    etcd.stop_all()


def create_led_by_1(b, topic: str, partitions: int, config: dict | None = None) -> None:
    """RF=3, every partition led by broker 1 (r1) with a full ISR."""
    a = kit.admin(b.bootstrap)
    assignment = [[1, 2, 3] if p % 2 == 0 else [1, 3, 2] for p in range(partitions)]
    a.create_topics([NewTopic(topic, partitions, replica_assignment=assignment,
                              config={"min.insync.replicas": "2", **(config or {})})]
                    )[topic].result(timeout=30)
    wait_until(lambda: all(i == [1, 2, 3] for i in isr(b, topic).values())
               and all(leader == 1 for leader, _ in leaders(b, topic).values()),
               JOIN_WITHIN, "a full ISR under leader 1", lambda: (isr(b, topic), leaders(b, topic)))


def counters(b) -> dict[str, float]:
    m = prometheus(b)
    return {k: m.get(k, 0) for k in ("strata_follower_fetch_requests_total",
                                     "strata_follower_fetch_bytes_total",
                                     "strata_preferred_read_replica_total",
                                     "strata_remote_reads_total")}


def replica_state(b, topic: str, p: int = 0) -> dict:
    """Partition `p` of `topic` as broker `b`'s replica has it (admin API)."""
    url = f"http://{b.config['strata.admin.listener']}/v1/topics"
    with urllib.request.urlopen(url, timeout=10) as r:
        [t] = [t for t in json.load(r) if t["name"] == topic]
    [state] = [s for s in t["partitions"] if s["partition"] == p]
    return state


def fetch(b, topic: str, offset: int, version: int = 11, rack: str = "", epoch: int = -1,
          p: int = 0) -> dict:
    """One raw consumer Fetch (v10 or v11) of partition `p` from broker `b`."""
    w = rawkafka.Writer()
    w.i32(-1).i32(100).i32(1).i32(1 << 20).i8(0).i32(0).i32(-1)
    w.array([topic], lambda w2, t: w2.string(t).array(
        [p], lambda w3, q: w3.i32(q).i32(epoch).i64(offset).i64(-1).i32(1 << 20)))
    w.array([], lambda w2, t: None)  # forgotten topics
    if version >= 11:
        w.string(rack)
    with rawkafka.Conn(b.bootstrap) as c:
        c.send(rawkafka.request(1, version, 21, bytes(w.buf)))
        cid, body = c.recv_frame()
    assert cid == 21
    r = rawkafka.Reader(body)
    r.i32(), r.i16(), r.i32()  # throttle, error, session
    assert r.array_len() == 1 and r.string() == topic
    assert r.array_len() == 1
    out = {"partition": r.i32(), "error": r.i16(), "high_watermark": r.i64()}
    r.i64()  # last stable offset
    out["log_start_offset"] = r.i64()
    for _ in range(max(r.array_len(), 0)):  # aborted transactions
        r.i64(), r.i64()
    out["preferred_read_replica"] = r.i32() if version >= 11 else -1
    size = r.i32()
    out["records"] = r._take(size) if size > 0 else b""
    return out


def test_a_consumer_reads_every_record_from_the_follower_in_its_rack(racks):
    b1, b2, b3 = racks
    topic = kit.unique_topic("ffr")
    create_led_by_1(b1, topic, 2)
    recs = kit.make_records(1500, 2, seed=392, tag="ffr")
    kit.produce_confluent(b1.bootstrap, topic, recs, extra={"acks": "all"})
    before = [counters(b) for b in racks]

    got = kit.consume_confluent(b1.bootstrap, topic, 2, extra={"client.rack": "r2"})
    kit.assert_same_records(recs, got)
    after = [counters(b) for b in racks]
    served = {k: after[1][k] - before[1][k] for k in after[1]}
    # The leader sent the consumer to broker 2 for both partitions, which served every byte.
    assert after[0]["strata_preferred_read_replica_total"] - \
        before[0]["strata_preferred_read_replica_total"] >= 2, (before, after)
    assert served["strata_follower_fetch_requests_total"] > 0, (before, after)
    total = sum(len(log_bytes(b1, topic, p)) for p in range(2))
    assert served["strata_follower_fetch_bytes_total"] >= total, (served, total)
    assert after[2] == before[2], "broker 3 (r3) served nothing"

    # In the leader's rack (or with no rack) the consumer stays on the leader. (Only bytes are
    # compared: the closed consumer's last long poll on broker 2 may be answered meanwhile.)
    def moved():
        m = [counters(b) for b in racks]
        return (m[0]["strata_preferred_read_replica_total"],
                [x["strata_follower_fetch_bytes_total"] for x in m])
    for rack in ("r1", ""):
        again = moved()
        got = kit.consume_confluent(b1.bootstrap, topic, 2, extra={"client.rack": rack})
        kit.assert_same_records(recs, got)
        assert moved() == again, rack

    # Later records reach the r3 follower's consumers too: a follower's high watermark
    # follows the leader's (within replica.fetch.wait.max.ms), and long-polling consumer
    # fetches wake when it moves.
    more = kit.make_records(300, 2, seed=393, tag="ffr-more")
    kit.produce_confluent(b1.bootstrap, topic, more, extra={"acks": "all"})
    got = kit.consume_confluent(b1.bootstrap, topic, 2, extra={"client.rack": "r3"})
    kit.assert_same_records(recs + more, got)
    assert counters(b3)["strata_follower_fetch_bytes_total"] >= sum(
        len(log_bytes(b1, topic, p)) for p in range(2))


def test_a_follower_answers_consumer_fetches_as_kafka_does(racks):
    b1, b2, b3 = racks
    topic = kit.unique_topic("ffr-raw")
    create_led_by_1(b1, topic, 1)
    recs = kit.make_records(200, 1, seed=394, tag="raw")
    kit.produce_confluent(b1.bootstrap, topic, recs, extra={"acks": "all"})
    end = max(r.offset for r in recs) + 1
    wait_until(lambda: replica_state(b2, topic)["high_watermark"] == end, JOIN_WITHIN,
               "the follower's high watermark at the end", lambda: replica_state(b2, topic))

    # The leader: a consumer in r2 or r3 is sent to that rack's follower, with no records.
    for rack, node in (("r2", 2), ("r3", 3)):
        got = fetch(b1, topic, 0, rack=rack)
        assert (got["error"], got["preferred_read_replica"], got["records"]) == (0, node, b""), got
        assert got["high_watermark"] == end, got
    for rack in ("r1", "", "nowhere"):
        got = fetch(b1, topic, 0, rack=rack)
        assert got["error"] == 0 and got["preferred_read_replica"] == -1, (rack, got)
        assert got["records"], rack

    # The follower: records up to its high watermark, and no preferred replica of its own.
    got = fetch(b2, topic, 0, rack="r2")
    assert (got["error"], got["preferred_read_replica"], got["high_watermark"]) == (0, -1, end)
    assert got["records"]
    assert fetch(b2, topic, end)["records"] == b""  # at its high watermark: nothing yet
    assert fetch(b2, topic, 0, version=10)["error"] == NOT_LEADER_OR_FOLLOWER
    assert fetch(b2, topic, end + 1000)["error"] == OFFSET_OUT_OF_RANGE
    epoch = replica_state(b2, topic)["leader_epoch"]
    assert fetch(b2, topic, 0, epoch=epoch)["error"] == 0
    assert fetch(b2, topic, 0, epoch=epoch + 1)["error"] == UNKNOWN_LEADER_EPOCH
    # Consumer fetches are not replica fetches: the ISR still counts broker 2 by its own.
    assert isr(b1, topic)[0] == [1, 2, 3]

    # The leader goes: a follower still at the old epoch is fenced by a newer one.
    b1.kill9()
    wait_until(lambda: leaders(b2, topic)[0][0] in (2, 3), OFFLINE_WITHIN, "a new leader",
               lambda: leaders(b2, topic))
    wait_until(lambda: replica_state(b3, topic)["leader_epoch"] > epoch, OFFLINE_WITHIN,
               "broker 3 at the new leader epoch", lambda: replica_state(b3, topic))
    follower = b3 if leaders(b2, topic)[0][0] == 2 else b2
    assert fetch(follower, topic, 0, epoch=epoch)["error"] == FENCED_LEADER_EPOCH
    got = fetch(follower, topic, 0, epoch=replica_state(follower, topic)["leader_epoch"])
    assert got["error"] == 0 and got["records"], got


def test_a_tiered_follower_serves_old_offsets_from_remote_storage(racks_on_hdfs, hdfs, request):
    b1, b2, b3 = racks_on_hdfs
    topic = kit.unique_topic("ffr-tiered")
    segment = 32 * 1024
    create_led_by_1(b1, topic, 1, {"remote.storage.enable": "true",
                                   "segment.bytes": str(segment),
                                   "local.retention.bytes": str(segment), "retention.ms": "-1"})
    recs = kit.make_records(3000, 1, seed=395, tag="tiered", value_size=300)
    kit.produce_confluent(b1.bootstrap, topic, recs, extra={"acks": "all",
                                                            "batch.size": segment // 4})
    # Uploads, then local deletion below the saved remote end on the followers too.
    wait_until(lambda: replica_state(b2, topic)["log_start_offset"] > 1000, 90,
               "broker 2's local log trimmed below the remote end",
               lambda: replica_state(b2, topic))
    before = counters(b2)

    got = kit.consume_confluent(b1.bootstrap, topic, 1, extra={"client.rack": "r2"})
    kit.assert_same_records(recs, got)
    after = counters(b2)
    assert after["strata_remote_reads_total"] > before["strata_remote_reads_total"], after
    assert after["strata_follower_fetch_bytes_total"] > before["strata_follower_fetch_bytes_total"]
    # The follower wrote nothing remote: every manifest is the leader's (its epoch's).
    epoch = replica_state(b1, topic)["leader_epoch"]
    names = {p.rsplit("/", 1)[-1] for p in hdfs.list_files(f"/strata/{request.node.name}")}
    manifests = {n for n in names if n.startswith("manifest") and n.endswith(".json")}
    assert manifests == {f"manifest-{epoch}.json"}, manifests
    for follower in (b2, b3):
        m = prometheus(follower)
        assert m["strata_remote_uploads_total"] == 0, m
        assert m["strata_remote_segments_expired_total"] == 0, m
    assert prometheus(b1)["strata_remote_uploads_total"] > 0


def test_the_java_consumer_reads_from_the_follower_in_its_rack(racks):
    jar = kit.JAVA_DIR / "target" / "strata-it-java.jar"
    if not jar.exists():
        pytest.fail(f"{jar} missing: run scripts/install-test-deps.sh")
    b1, b2, b3 = racks
    topic = kit.unique_topic("ffr-java")
    create_led_by_1(b1, topic, 2)
    before = counters(b3)
    n = 3000
    cmd = ["java", "-Xmx512m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
           "-cp", kit.JAVA_CLASSPATH, "io.strata.it.ProduceConsume",
           "--bootstrap", b1.bootstrap, "--topic", topic, "--partitions", "2",
           "--records", str(n), "--codec", "lz4", "--acks", "all", "--client-rack", "r3"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    out = r.stdout + r.stderr
    assert r.returncode == 0, f"ProduceConsume failed ({r.returncode}):\n{out[-8000:]}"
    assert f"produced={n} consumed={n} mismatches=0" in out, out
    after = counters(b3)
    assert after["strata_follower_fetch_requests_total"] > before[
        "strata_follower_fetch_requests_total"], (before, after)
    total = sum(len(log_bytes(b1, topic, p)) for p in range(2))
    assert after["strata_follower_fetch_bytes_total"] - before[
        "strata_follower_fetch_bytes_total"] >= total, (before, after, total)
