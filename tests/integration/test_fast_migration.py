"""Fast replica migration of tiered partitions: a new replica copies only the active segment.

What is checked:
- a partition with 500 MiB of history in 8 MiB segments (STRATA_MIGRATION_HISTORY_MIB) in remote
  storage moved to a new broker with kafka-reassign-partitions: the new replica's log
  starts at the leader's log end (the leader rolled its active segment when the replica asked),
  so the bytes it copied are at most one segment; it joins the ISR, the old replica is removed,
  and a consumer from offset 0, served by the new replica as leader, reads every record
  identical (the history from remote storage);
- uploads held back by the fault seam, so a new replica has a gap between remote storage and
  its log: it is marked not contiguous in the partition record (admin API), stays out of the
  ISR although caught up, and is not elected when every other replica dies, not even with
  unclean election on (the controller says why in its log); once the leader comes back with
  uploads working, the gap closes, the flag goes and it joins the ISR; nothing acknowledged is
  lost;
- without the roll (strata.replica.sync.roll.enable=false) a moved replica starts at the
  leader's active segment and copies at most that segment;
- a follower that was down while the leader deleted locally what it lacks (uploaded) is
  answered OFFSET_MOVED_TO_TIERED_STORAGE and starts over at the sync point, joins the ISR, and
  leads with every record readable;
- a broker whose disk was wiped rebuilds every replica from active segments; a new leader
  started at the active segment reports remote storage's log start.
Remote storage is HDFS (one MiniDFSCluster per module, a directory per test); the moves without
the roll and the wiped disk run on S3 too (one S3Proxy per module).
"""
from __future__ import annotations

import json
import os
import time
import urllib.request

import pytest
from confluent_kafka.admin import NewTopic

import kit
import rawkafka
from kit import wait_until
from test_cluster import OFFLINE_WITHIN, leaders, start_cluster
from test_reassignment import plan, reassign_tool
from test_replication import JOIN_WITHIN, isr
from test_tiered_cluster import by_id, local_logs, saved_remote_end

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's cluster mode")

SEGMENT = 1 << 20
# The moved partition's history (STRATA_MIGRATION_HISTORY_MIB, MiB) in 8 MiB segments.
HISTORY_MIB = int(os.environ.get("STRATA_MIGRATION_HISTORY_MIB", "500"))
HISTORY_SEGMENT = 8 << 20
UPLOAD_WITHIN = 90  # seconds for the uploads of some MiB on 2 shared cores
# The leader's ISR pass runs every replica.lag.time.max.ms / 2, at most 500 ms apart.
ISR_PASS = 0.5


def topic_config(**more: str) -> dict[str, str]:
    # retention.ms -1: the records carry old CreateTimes (kit.BASE_TS).
    return {"remote.storage.enable": "true", "segment.bytes": str(SEGMENT), "retention.ms": "-1",
            "min.insync.replicas": "1", **more}


def partition_state(b, topic: str) -> dict:
    """Partition 0 of `topic` as broker `b`'s admin API shows its replica; {} while `b` has not
    opened one (a broker back with an empty disk opens its replicas only once the controller has
    forgotten the data they lost)."""
    url = f"http://{b.config['strata.admin.listener']}/v1/topics"
    with urllib.request.urlopen(url, timeout=10) as r:
        ts = [t for t in json.load(r) if t["name"] == topic]
    ps = [p for t in ts for p in t["partitions"] if p["partition"] == 0]
    return ps[0] if ps else {}


PID = 4242  # an idempotent producer of the test's own


def produce_idempotent(b, topic: str, seq: int) -> tuple[int, int]:
    """One idempotent batch of two records (producer PID, epoch 0, first sequence `seq`)
    straight to broker `b` with acks=all -> (error code, base offset)."""
    batch = rawkafka.record_batch([(b"k", f"idem-{seq}".encode(), []),
                                   (b"k", f"idem-{seq + 1}".encode(), [])], kit.BASE_TS,
                                  producer_id=PID, producer_epoch=0, base_sequence=seq)
    with rawkafka.Conn(b.bootstrap) as c:
        c.send(rawkafka.request(0, 8, 11, rawkafka.produce_body(8, topic, 0, batch, -1)))
        cid, body = c.recv_frame()
    [(_, _, code, base)] = rawkafka.parse_produce_response(8, body)
    return code, base


def local_bytes(b, topic: str) -> int:
    return sum(f.stat().st_size for f in b.partition_dir(topic, 0).glob("*.log"))


def produce_history(b, topic: str, n: int, seed: int, segment: int = SEGMENT) -> list[kit.Rec]:
    recs = kit.make_records(n, 1, seed=seed, tag="history", value_size=1800)
    kit.produce_confluent(b.bootstrap, topic, recs,
                          extra={"batch.size": min(segment // 4, 1 << 20)})
    return recs


def tier_extra(remote_config: dict, **more: str) -> dict[str, str]:
    return {**remote_config, **more}


BOTH_STORES = pytest.mark.parametrize("remote_store", ["hdfs", "s3"], indirect=True)


def test_a_moved_replica_copies_only_the_active_segment(tmp_path, broker_factory, remote_config):
    move_a_tiered_partition(tmp_path, broker_factory, remote_config, HISTORY_MIB, roll=True)


@BOTH_STORES
def test_without_the_roll_a_moved_replica_copies_at_most_one_segment(
        tmp_path, broker_factory, remote_config):
    """strata.replica.sync.roll.enable=false: the new replica starts at the base of the
    leader's active segment, so it copies that segment's records and nothing older."""
    move_a_tiered_partition(tmp_path, broker_factory, remote_config, 64, roll=False)


def move_a_tiered_partition(tmp_path, broker_factory, remote_config: dict, history_mib: int,
                            roll: bool) -> None:
    extra = tier_extra(remote_config, **{"log.retention.check.interval.ms": "300",
                                      "strata.replica.sync.roll.enable": str(roll).lower()})
    etcd, brokers = start_cluster(tmp_path, broker_factory, nodes=(1, 2, 3, 4), extra=extra)
    try:
        b1, b2, b3, b4 = brokers
        topic = kit.unique_topic("migrate")
        a = kit.admin(b1.bootstrap)
        a.create_topics([NewTopic(topic, 1, replica_assignment=[[1, 2]], config=topic_config(
            **{"segment.bytes": str(HISTORY_SEGMENT),
               "local.retention.bytes": str(4 * HISTORY_SEGMENT)}))])[topic].result(timeout=30)
        wait_until(lambda: isr(b1, topic) == {0: [1, 2]}, JOIN_WITHIN, "ISR [1, 2]",
                   lambda: isr(b1, topic))
        # About history_mib of history (records average 950 bytes).
        recs = produce_history(b1, topic, history_mib * 1100, seed=81, segment=HISTORY_SEGMENT)
        # An idempotent producer's last batches before the move, at the end of the history.
        assert produce_idempotent(b1, topic, 0) == (0, recs[-1].offset + 1)
        assert produce_idempotent(b1, topic, 2) == (0, recs[-1].offset + 3)
        log_end = recs[-1].offset + 5
        wait_until(lambda: saved_remote_end(b1, topic) >= log_end - 2 * HISTORY_SEGMENT // 900,
                   UPLOAD_WITHIN, "the history uploaded", lambda: saved_remote_end(b1, topic))

        leader_active_base = local_logs(b1, topic)[-1]
        out = reassign_tool(b2, "--reassignment-json-file", plan(tmp_path, topic, {0: [4, 2]}),
                            "--execute")
        assert "Successfully started partition reassignment" in out, out
        wait_until(lambda: leaders(b2, topic)[0] == (4, [4, 2]) and isr(b2, topic) == {0: [2, 4]},
                   UPLOAD_WITHIN, "the move done, broker 4 leading",
                   lambda: (leaders(b2, topic), isr(b2, topic), partition_state(b4, topic)))

        # With the roll broker 4 started its log where the leader's ended and copied nothing of
        # the history; without it, at the base of the leader's active segment.
        starts = local_logs(b4, topic)
        active_base = leader_active_base
        want = log_end if roll else active_base
        assert starts[0] == want, f"broker 4's segments start at {starts}, expected {want}"
        copied = local_bytes(b4, topic)
        print(f"moved a partition of {log_end} records (about {history_mib} MiB, roll {roll}); "
              f"the new replica copied {copied} bytes")
        if roll:
            assert copied <= 1 << 20, f"broker 4 copied {copied} bytes"  # nearly nothing
        else:
            assert copied <= HISTORY_SEGMENT + (1 << 20), f"broker 4 copied {copied} bytes"
        assert "starts at offset" in b4.log_text(), "broker 4 never logged its log start"
        wait_until(lambda: not b1.partition_dir(topic, 0).exists(), JOIN_WITHIN,
                   "the removed replica's data deleted on broker 1")

        # Broker 4 got the producer state below its log start from remote storage (with the
        # roll: the idempotent batches are all below it): a retry of the producer's last batch
        # from before the move is a duplicate, answered with its original offset, not written
        # again.
        wait_until(lambda: not roll or "producer state below" in b4.log_text(), UPLOAD_WITHIN,
                   "broker 4 restoring producer state from the remote snapshot",
                   lambda: [line for line in b4.log_text().splitlines()
                            if topic in line and ("[tiered]" in line or "[storage]" in line
                                                  or "leader" in line)][-20:])
        assert produce_idempotent(b4, topic, 2) == (0, log_end - 2)

        # Every record from offset 0, through broker 4 (the history from remote storage).
        got = kit.consume_confluent(b4.bootstrap, topic, 1, timeout=600)
        idem = {m.offset() for m in got[0] if (m.value() or b"").startswith(b"idem-")}
        assert idem == set(range(log_end - 4, log_end)), sorted(idem)
        got[0] = [m for m in got[0] if m.offset() not in idem]
        kit.assert_same_records(recs, got)
        # Produce goes on to the new leader.
        more = kit.make_records(50, 1, seed=82, tag="after")
        kit.produce_confluent(b4.bootstrap, topic, more)
        assert more[0].offset == log_end
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()


def test_a_replica_with_a_gap_to_remote_storage_never_joins_or_leads(
        tmp_path, broker_factory, remote_config):
    # Broker 1's uploads all fail (the fault seam), so the remote log stays empty.
    etcd, brokers = start_cluster(
        tmp_path, broker_factory, extra=tier_extra(remote_config),
        per_node={1: {"strata.remote.fault.put.fail.ratio": "1"}})
    try:
        b1, b2, b3 = brokers
        topic = kit.unique_topic("gap")
        a = kit.admin(b1.bootstrap)
        a.create_topics([NewTopic(topic, 1, replica_assignment=[[1, 2]], config=topic_config(
            **{"unclean.leader.election.enable": "true"}))])[topic].result(timeout=30)
        wait_until(lambda: isr(b1, topic) == {0: [1, 2]}, JOIN_WITHIN, "ISR [1, 2]",
                   lambda: isr(b1, topic))
        recs = produce_history(b1, topic, 3000, seed=83)  # about 3 segments, none uploaded
        log_end = recs[-1].offset + 1
        assert saved_remote_end(b1, topic) == -1

        out = reassign_tool(b2, "--reassignment-json-file",
                            plan(tmp_path, topic, {0: [1, 2, 3]}), "--execute")
        assert "Successfully started partition reassignment" in out, out
        # Broker 3 starts at the leader's log end and catches up, but holds nothing below it,
        # and remote storage holds nothing: not contiguous, so not in the ISR.
        wait_until(lambda: b3.partition_dir(topic, 0).exists() and
                   partition_state(b3, topic)["log_end_offset"] == log_end, JOIN_WITHIN,
                   "broker 3 caught up", lambda: partition_state(b3, topic))
        assert partition_state(b3, topic)["log_start_offset"] == log_end
        wait_until(lambda: partition_state(b1, topic)["non_contiguous"] == [3], JOIN_WITHIN,
                   "broker 3 marked not contiguous", lambda: partition_state(b1, topic))
        deadline = time.time() + 3 * ISR_PASS + 1
        while time.time() < deadline:  # several ISR passes: it stays out
            assert isr(b1, topic) == {0: [1, 2]}, isr(b1, topic)
            time.sleep(0.1)

        # Every other replica dies: with unclean election on, broker 3 is still not elected.
        b1.kill9()
        b2.kill9()
        wait_until(lambda: "not contiguous with remote storage" in b3.log_text(), OFFLINE_WITHIN,
                   "the controller (broker 3) saying why the partition stays offline")
        assert leaders(b3, topic)[0][0] == -1, leaders(b3, topic)

        # Broker 1 comes back with uploads working: it leads again, uploads, and broker 3's gap
        # closes: the flag goes and it joins the ISR.
        b1.config["strata.remote.fault.put.fail.ratio"] = "0"
        b1.start()
        wait_until(lambda: 3 in isr(b3, topic).get(0, []), UPLOAD_WITHIN,
                   "broker 3 contiguous and in the ISR",
                   lambda: (leaders(b3, topic), isr(b3, topic), partition_state(b1, topic)))
        assert partition_state(b1, topic)["non_contiguous"] == []
        assert saved_remote_end(b1, topic) >= log_end - 1
        got = kit.consume_confluent(b1.bootstrap, topic, 1, timeout=120)
        kit.assert_same_records(recs, got)
        b2.start()
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()


@BOTH_STORES
def test_a_broker_back_with_an_empty_disk_copies_only_active_segments(
        tmp_path, broker_factory, remote_config):
    """The seed's machine replacement: broker 3's disk is wiped while it is down; it comes back
    with the same node id and rebuilds every replica from its leader's active segment, with no
    operator step."""
    import shutil
    etcd, brokers = start_cluster(tmp_path, broker_factory, extra=tier_extra(
        remote_config, **{"leader.imbalance.check.interval.seconds": "1"}))
    try:
        b1, b2, b3 = brokers
        topic = kit.unique_topic("replace")
        a = kit.admin(b1.bootstrap)
        a.create_topics([NewTopic(topic, 3, replica_assignment=[[1, 2, 3], [2, 3, 1], [3, 1, 2]],
                                  config=topic_config(**{"min.insync.replicas": "2"}))]
                        )[topic].result(timeout=30)
        full = {p: [1, 2, 3] for p in range(3)}
        wait_until(lambda: isr(b1, topic) == full, JOIN_WITHIN, "full ISRs", lambda: isr(b1, topic))
        recs = kit.make_records(4500, 3, seed=84, tag="history", value_size=1800)
        kit.produce_confluent(b1.bootstrap, topic, recs, extra={"batch.size": SEGMENT // 4})
        ends = {p: max(r.offset for r in recs if r.partition == p) + 1 for p in range(3)}

        b3.stop()
        shutil.rmtree(b3.data_dir)
        wait_until(lambda: all(3 not in m for m in isr(b1, topic).values()), OFFLINE_WITHIN,
                   "broker 3 out of every ISR", lambda: isr(b1, topic))
        b3.start()
        wait_until(lambda: isr(b1, topic) == full, UPLOAD_WITHIN, "broker 3 back in every ISR",
                   lambda: (isr(b1, topic), leaders(b1, topic)))
        for p in range(3):
            starts = sorted(int(f.stem) for f in b3.partition_dir(topic, p).glob("*.log"))
            assert starts[0] == ends[p], f"partition {p}: broker 3's log starts {starts}, end {ends[p]}"
            copied = sum(f.stat().st_size for f in b3.partition_dir(topic, p).glob("*.log"))
            assert copied <= SEGMENT, f"partition {p}: broker 3 copied {copied} bytes"
        # Broker 3 leads its preferred partition again and serves it whole from offset 0.
        wait_until(lambda: leaders(b1, topic)[2][0] == 3, JOIN_WITHIN,
                   "broker 3 leading partition 2 (preferred-leader election)",
                   lambda: leaders(b1, topic))
        # A new leader's high watermark reaches its log end once its ISR has fetched there
        # (it read 0 for a moment under ASan, and the consumer below reads up to it).
        wait_until(lambda: watermarks(b3, topic, 2) == (0, ends[2]), JOIN_WITHIN,
                   "broker 3's partition 2 from offset 0 (remote) to its log end",
                   lambda: watermarks(b3, topic, 2))
        got = kit.consume_confluent(b3.bootstrap, topic, 3, timeout=120)
        kit.assert_same_records(recs, got)
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()


def test_a_follower_left_below_the_leaders_local_log_starts_over_from_remote_storage(
        tmp_path, broker_factory, remote_config):
    """Broker 2 is down while the leader writes, uploads and deletes locally what broker 2
    lacks. Back, its fetch is answered OFFSET_MOVED_TO_TIERED_STORAGE (as Kafka 4.x answers a
    tiered follower): it starts its log over at the leader's sync point instead of copying the
    history, joins the ISR, and when the leader dies serves every record from offset 0."""
    etcd, brokers = start_cluster(tmp_path, broker_factory, extra=tier_extra(
        remote_config, **{"log.retention.check.interval.ms": "300"}))
    try:
        b1, b2, b3 = brokers
        topic = kit.unique_topic("behind")
        a = kit.admin(b1.bootstrap)
        a.create_topics([NewTopic(topic, 1, replica_assignment=[[1, 2]], config=topic_config(
            **{"local.retention.bytes": str(2 * SEGMENT)}))])[topic].result(timeout=30)
        wait_until(lambda: isr(b1, topic) == {0: [1, 2]}, JOIN_WITHIN, "ISR [1, 2]",
                   lambda: isr(b1, topic))
        first = produce_history(b1, topic, 500, seed=85)
        wait_until(lambda: partition_state(b2, topic)["log_end_offset"] == first[-1].offset + 1,
                   JOIN_WITHIN, "broker 2 caught up", lambda: partition_state(b2, topic))
        b2.stop()
        behind = first[-1].offset + 1  # broker 2's log end
        wait_until(lambda: isr(b1, topic) == {0: [1]}, OFFLINE_WITHIN, "ISR [1]",
                   lambda: isr(b1, topic))
        rest = produce_history(b1, topic, 8000, seed=86)  # about 8 segments
        # Uploaded, and deleted locally on the leader past broker 2's log end.
        wait_until(lambda: local_logs(b1, topic)[0] > behind, UPLOAD_WITHIN,
                   f"broker 1's local log starting above {behind}",
                   lambda: (local_logs(b1, topic), saved_remote_end(b1, topic)))
        leader_start = local_logs(b1, topic)[0]

        b2.start()
        wait_until(lambda: isr(b1, topic) == {0: [1, 2]}, UPLOAD_WITHIN, "broker 2 back in the ISR",
                   lambda: (isr(b1, topic), partition_state(b1, topic)))
        assert "below the leader's local log" in b2.log_text()
        starts = local_logs(b2, topic)
        assert starts[0] >= leader_start, f"broker 2's log starts {starts}, leader's {leader_start}"
        assert local_bytes(b2, topic) <= 2 * SEGMENT, local_bytes(b2, topic)

        b1.kill9()
        wait_until(lambda: leaders(b2, topic)[0][0] == 2, OFFLINE_WITHIN, "broker 2 leading",
                   lambda: leaders(b2, topic))
        got = kit.consume_confluent(b2.bootstrap, topic, 1, timeout=120)
        kit.assert_same_records(first + rest, got)
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()


def watermarks(b, topic: str, partition: int) -> tuple[int, int]:
    """(earliest, high watermark) as broker `b` answers ListOffsets."""
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": "earliest-probe"})
    try:
        return c.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
    finally:
        c.close()


def earliest_offset(b, topic: str, partition: int) -> int:
    """ListOffsets EARLIEST (-2) straight to broker `b` -> offset."""
    return watermarks(b, topic, partition)[0]


def test_a_new_leader_that_started_at_the_active_segment_reports_the_remote_log_start(
        tmp_path, broker_factory, remote_config):
    """Right after a move makes the new replica leader (its log starting where the old
    leader's ended), the log start it reports is remote storage's, not its own: a consumer
    starting from the earliest offset skips nothing, even before the new leader has read the
    remote manifest (broker 3 scans its remote log only every 20 s here)."""
    etcd, brokers = start_cluster(
        tmp_path, broker_factory, extra=tier_extra(remote_config),
        per_node={3: {"remote.log.manager.task.interval.ms": "20000"}})
    try:
        b1, b2, b3 = brokers
        topic = kit.unique_topic("start")
        a = kit.admin(b1.bootstrap)
        # The whole history in the active segment: the move's roll makes its first upload.
        a.create_topics([NewTopic(topic, 1, replica_assignment=[[1, 2]], config=topic_config(
            **{"segment.bytes": str(64 << 20)}))])[topic].result(timeout=30)
        wait_until(lambda: isr(b1, topic) == {0: [1, 2]}, JOIN_WITHIN, "ISR [1, 2]",
                   lambda: isr(b1, topic))
        recs = kit.make_records(300, 1, seed=91, tag="start")
        kit.produce_confluent(b1.bootstrap, topic, recs)
        out = reassign_tool(b2, "--reassignment-json-file", plan(tmp_path, topic, {0: [3, 2]}),
                            "--execute")
        assert "Successfully started partition reassignment" in out, out
        wait_until(lambda: leaders(b2, topic)[0] == (3, [3, 2]), UPLOAD_WITHIN,
                   "the move done, broker 3 leading", lambda: leaders(b2, topic))
        assert local_logs(b3, topic)[0] == recs[-1].offset + 1  # it copied nothing
        assert earliest_offset(b3, topic, 0) == 0
        # A new leader's high watermark reaches its log end once its ISR has fetched there
        # (as in Kafka, it may lag the move briefly): read everything below it.
        wait_until(lambda: watermarks(b3, topic, 0)[1] == recs[-1].offset + 1, JOIN_WITHIN,
                   "broker 3's high watermark at its log end", lambda: watermarks(b3, topic, 0))
        got = kit.consume_confluent(b3.bootstrap, topic, 1, timeout=120)
        kit.assert_same_records(recs, got)
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()
