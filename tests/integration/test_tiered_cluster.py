"""Tiered storage in a cluster, on each real remote store (HDFS, a MiniDFSCluster; S3, S3Proxy;
remote_stores.py): an RF=3 tiered topic
(min.insync.replicas=2) under an idempotent acks=all producer; the leader is SIGKILLed while it
has rolled segments not yet uploaded, and a new leader takes the remote log over.

What is checked: followers delete local segments only below the remote end the leader recorded
in etcd (their local log start moves up, and never past it); the new leader writes its own
manifest (manifest-<its leader epoch>.json) and goes on uploading from the shared end; at the
end the store holds exactly the objects the current manifest lists (the killed leader's half-done
upload and any segment the new leader's longer one covers are deleted), the listed segments
cover every offset from 0 to the remote end with no gap, and a consumer from offset 0 reads
every acknowledged value exactly once (the oldest from the store).
"""
from __future__ import annotations

import json
import threading

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import NewTopic

import kit
from kit import wait_until
from test_cluster import OFFLINE_WITHIN, leaders, prometheus, start_cluster
from test_replication import JOIN_WITHIN, isr
from test_tiered_localfs import list_offsets

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's cluster mode")

SEGMENT = 256 * 1024
ROOT = "/strata"
UPLOAD_WITHIN = 90  # seconds for the uploads of a few MiB on 2 shared cores


@pytest.fixture(params=["hdfs", "s3"])
def tiered_cluster(tmp_path, broker_factory, request):
    import remote_stores
    if request.param == "s3":
        store = remote_stores.S3Store(request.getfixturevalue("s3_server"))
    else:
        store = remote_stores.HdfsStore(request.getfixturevalue("hdfs"))
    root = f"{ROOT}/{request.param}"
    etcd, brokers = start_cluster(tmp_path, broker_factory, extra={
        **store.config(root), "log.retention.check.interval.ms": "300"})
    yield store, store.path(root), brokers
    for b in brokers:
        b.stop()
    etcd.stop_all()


class AckedProducer:
    """An idempotent acks=all producer writing "v-n" to partition 0 from its own thread;
    the values acknowledged, in order."""

    def __init__(self, bootstrap: str, topic: str):
        self.topic = topic
        self.p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                           "acks": "all", "linger.ms": 5, "message.timeout.ms": 120000,
                           "batch.size": SEGMENT // 4})  # a batch must fit a segment
        self.acked: list[bytes] = []
        self.errors: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run)
        self.pad = b"x" * 900

    def _delivered(self, err, msg):
        if err is not None:
            self.errors.append(str(err))
        else:
            self.acked.append(msg.value())

    def _run(self):
        i = 0
        while not self.stop.is_set():
            self.p.produce(self.topic, b"v-%d-" % i + self.pad, partition=0,
                           on_delivery=self._delivered)
            i += 1
            # ~0.5 MB/s: two segments a second, which HDFS on 2 shared cores keeps up with
            self.p.poll(0.002)
        self.p.flush(120)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(150)


def partition_dir(store, root: str, topic: str) -> str:
    [name] = [n for n in store.children(root) if n.startswith(f"{topic}-0-")]
    return f"{root}/{name}"


def local_start(b, topic: str) -> int:
    """The first offset still on broker `b`'s disk (its first segment's base)."""
    return min(int(f.stem) for f in b.partition_dir(topic, 0).glob("*.log"))


def local_logs(b, topic: str) -> list[int]:
    return sorted(int(f.stem) for f in b.partition_dir(topic, 0).glob("*.log"))


def saved_remote_end(b, topic: str) -> int:
    """The remote log end offset the leader serves (ListOffsets -5), -1 when none."""
    return list_offsets(b.bootstrap, topic, -5, 1)[0]


def by_id(brokers, node: int):
    return next(b for b in brokers if int(b.config["node.id"]) == node)


def test_a_killed_leader_hands_the_remote_log_over_with_no_gap(tiered_cluster):
    store, root, brokers = tiered_cluster
    b1 = brokers[0]
    topic = kit.unique_topic("tiered-rf3")
    admin = kit.admin(b1.bootstrap)  # kept: the futures need their client alive
    admin.create_topics([NewTopic(topic, 1, 3, config={
        "min.insync.replicas": "2", "remote.storage.enable": "true",
        "segment.bytes": str(SEGMENT), "local.retention.bytes": str(SEGMENT),
        "retention.ms": "-1"})])[topic].result(timeout=30)
    wait_until(lambda: isr(b1, topic)[0] == [1, 2, 3], JOIN_WITHIN, "a full ISR",
               lambda: isr(b1, topic))

    with AckedProducer(b1.bootstrap, topic) as prod:
        first = by_id(brokers, leaders(b1, topic)[0][0])
        followers = [b for b in brokers if b is not first]
        # Followers drop local data, but only below what the leader recorded as remote.
        wait_until(lambda: saved_remote_end(first, topic) > 4 * SEGMENT // 1000 and all(
            0 < local_start(f, topic) <= saved_remote_end(first, topic) + 1 for f in followers),
            UPLOAD_WITHIN, "followers deleting below the shared remote end",
            lambda: (saved_remote_end(first, topic),
                     [local_start(f, topic) for f in followers]))
        # Kill the leader while a rolled segment waits for its upload.
        wait_until(lambda: prometheus(first).get(
            f'strata_remote_upload_lag_segments{{partition="{topic}-0"}}', 0) > 0,
            UPLOAD_WITHIN, "a rolled segment not uploaded yet", lambda: prometheus(first))
        old_end = saved_remote_end(first, topic)
        first.kill9()
        survivor = followers[0]
        wait_until(lambda: leaders(survivor, topic)[0][0] in
                   {int(f.config["node.id"]) for f in followers}, OFFLINE_WITHIN,
                   "a new leader", lambda: leaders(survivor, topic))
        second = by_id(brokers, leaders(survivor, topic)[0][0])
        acked_at_kill = len(prod.acked)
        # The new leader goes on from the shared end.
        wait_until(lambda: saved_remote_end(second, topic) > old_end + 2 * SEGMENT // 1000,
                   UPLOAD_WITHIN, "uploads by the new leader",
                   lambda: (old_end, saved_remote_end(second, topic)))
        first.start()
        wait_until(lambda: isr(survivor, topic)[0] == [1, 2, 3], JOIN_WITHIN,
                   "the killed broker back in the ISR", lambda: isr(survivor, topic))
    assert not prod.errors, prod.errors[:5]
    assert len(prod.acked) > acked_at_kill

    # Everything rolled is uploaded; the replaced objects are deleted (retention task).
    leader = by_id(brokers, leaders(b1, topic)[0][0])
    directory = partition_dir(store, root, topic)

    def settled():
        end = saved_remote_end(leader, topic)
        logs = local_logs(leader, topic)
        if end < 0 or end + 1 != logs[-1]:
            return False
        names = store.children(directory)
        manifests = sorted(n for n in names if n.startswith("manifest-"))
        current = max(manifests, key=lambda n: int(n[len("manifest-"):-len(".json")]))
        m = json.loads(store.read(f"{directory}/{current}"))
        finished = [s for s in m["segments"] if s["state"] == "COPY_FINISHED"]
        listed = {f"{s['base_offset']:020d}-{s['uuid']}.log" for s in finished}
        # (names starting with "." are temporaries of interrupted Puts, never read)
        stored = {n for n in names if n.endswith(".log") and not n.startswith(".")}
        return (listed == stored and m["log_end_offset"] == end) and (m, finished)

    m, finished = wait_until(
        settled, UPLOAD_WITHIN, f"{store.name} holding exactly the manifest's segments",
        lambda: (saved_remote_end(leader, topic),
                 local_logs(leader, topic)[-3:],
                 [n for n in store.children(directory) if n.endswith(".log")][-5:]))
    assert m["leader_epoch"] > 0, m["leader_epoch"]
    covered = 0
    for s in sorted(finished, key=lambda s: (s["base_offset"], s["end_offset"])):
        assert s["base_offset"] <= covered, f"gap before {s['base_offset']} (covered to {covered})"
        covered = max(covered, s["end_offset"] + 1)
    assert covered == m["log_end_offset"] + 1

    # A consumer from offset 0 reads every acknowledged value once, in order.
    c = Consumer({"bootstrap.servers": b1.bootstrap, "group.id": kit.unique_topic("g"),
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.assign([TopicPartition(topic, 0, 0)])
    got: list[bytes] = []
    wait_until(lambda: got.extend(m.value() for m in c.consume(500, 1) if not m.error()) or
               len(got) >= len(prod.acked), 120, "reading everything back",
               lambda: (len(got), len(prod.acked)))
    c.close()
    assert got == prod.acked, (len(got), len(prod.acked))
