"""Tiered storage against each real remote store: HDFS (MiniDFSCluster over WebHDFS,
tests/hdfs/hdfs_fixture.py) and S3 (S3Proxy, tests/s3; remote_stores.py puts both behind one
interface). Every test runs once per store.

Rolled segments go to the store and are read back for a consumer from offset 0; while the store
is down (kill -9) produce goes on, nothing un-uploaded leaves local disk, and once it is back the
uploads resume in order. 64 MiB of segments (1 GiB in scripts/soak.sh, STRATA_TIERED_BIG_MIB) are
compared byte for byte (SHA-256) with what a client independent of Strata reads back: Hadoop's
Java client over native RPC (HdfsDigest.java) for HDFS, a plain signed HTTP client for S3.
1 GiB produced with local retention at its minimum is read back cold from the store by a consumer
from offset 0 and compared record by record with what was produced.
A broker restarted while the store is down starts, serves produce and local reads, answers
remote-only fetches with a retriable error, and resumes uploading once the store is back.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import kit
import rawkafka
from test_tiered_localfs import list_offsets, wait_until

from remote_stores import HdfsStore, S3Store  # noqa: E402

HDFS_DIR = Path(__file__).resolve().parents[1] / "hdfs"
sys.path.insert(0, str(HDFS_DIR))
from hdfs_fixture import MiniHdfs  # noqa: E402

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata-specific remote storage")

PARTITIONS = 2
SEGMENT = 1024 * 1024


@pytest.fixture(params=["hdfs", "s3"])
def store(request, tmp_path):
    """A fresh store of each kind per test (the tests kill it)."""
    if request.param == "hdfs":
        if not (HDFS_DIR / "target" / "strata-minihdfs.jar").exists():
            pytest.fail("tests/hdfs/target/strata-minihdfs.jar is missing: run "
                        "scripts/install-test-deps.sh")
        h = MiniHdfs(tmp_path / "hdfs")
        h.start(format=True)
        yield HdfsStore(h)
        h.stop()
    else:
        import s3kit
        server = s3kit.S3Server(tmp_path / "s3").start()
        yield S3Store(server)
        server.stop()


def all_tiered(b, topic: str):
    """True once every rolled segment is in the store: remote end + 1 == the active segment
    base."""
    tiered = list_offsets(b.bootstrap, topic, -5, PARTITIONS)
    for p in range(PARTITIONS):
        logs = sorted(int(f.stem) for f in b.partition_dir(topic, p).glob("*.log"))
        if tiered[p] < 0 or tiered[p] + 1 != logs[-1]:
            return False
    return tiered


def test_upload_outage_and_resume(broker_factory, store):
    b = broker_factory(config={
        "remote.log.storage.system.enable": "true",
        **store.config("/strata"),
        "log.retention.check.interval.ms": "300",
    })
    topic = kit.unique_topic("tiered-remote")
    kit.create_topic(b.bootstrap, topic, PARTITIONS, config={
        "remote.storage.enable": "true", "segment.bytes": str(SEGMENT),
        "local.retention.bytes": str(SEGMENT), "retention.ms": "-1"})
    recs = kit.make_records(6000, PARTITIONS, seed=7, tag="hdfs", value_size=2000)
    kit.produce_confluent(b.bootstrap, topic, recs)
    wait_until(lambda: all_tiered(b, topic), 120, "uploads to the store")
    local_start = wait_until(
        lambda: (s := list_offsets(b.bootstrap, topic, -4, PARTITIONS)) and all(
            s[p] > 0 for p in range(PARTITIONS)) and s, 30, "local retention")
    assert list_offsets(b.bootstrap, topic, -2, PARTITIONS) == {p: 0 for p in range(PARTITIONS)}
    got = kit.consume_confluent(b.bootstrap, topic, PARTITIONS, timeout=120)
    kit.assert_same_records(recs, got)

    # The store down: produce goes on, local retention must not drop un-uploaded segments.
    tiered_before = list_offsets(b.bootstrap, topic, -5, PARTITIONS)
    store.kill9()
    more = kit.make_records(4000, PARTITIONS, seed=8, tag="hdfs2", value_size=2000)
    kit.produce_confluent(b.bootstrap, topic, more)
    time.sleep(3)
    assert list_offsets(b.bootstrap, topic, -5, PARTITIONS) == tiered_before
    for p in range(PARTITIONS):
        logs = sorted(int(f.stem) for f in b.partition_dir(topic, p).glob("*.log"))
        assert logs[0] <= tiered_before[p] + 1, f"partition {p}: un-uploaded segment deleted"

    # The store back: uploads resume and everything is readable from offset 0 again.
    store.restart()
    wait_until(lambda: all_tiered(b, topic), 180, "uploads after the outage")
    got = kit.consume_confluent(b.bootstrap, topic, PARTITIONS, timeout=180)
    kit.assert_same_records(recs + more, got)
    assert list_offsets(b.bootstrap, topic, -4, PARTITIONS) != local_start


# ---- helpers for the tests below ----------------------------------------------------------

KAFKA_STORAGE_ERROR = 56


from ports import free_port  # noqa: E402


def tiered_broker(broker_factory, store, admin_port: int, extra: dict | None = None):
    return broker_factory(config={
        "strata.admin.listener": f"127.0.0.1:{admin_port}",
        "remote.log.storage.system.enable": "true",
        **store.config("/strata"),
        "remote.log.manager.task.interval.ms": "500",
        "log.retention.check.interval.ms": "300",
        **(extra or {}),
    })


def metric_sum(admin_port: int, name: str) -> float:
    """Sum of every series of `name` on /metrics (upload lag is one series per partition)."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{admin_port}/metrics", timeout=10).read()
    vals = [float(line.rsplit(" ", 1)[1]) for line in text.decode().splitlines()
            if line.startswith(name + " ") or line.startswith(name + "{")]
    assert vals, f"metric {name} not exported"
    return sum(vals)


def remote_health(admin_port: int) -> dict:
    """The broker's remote store as its admin API reports it (/v1/remote)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{admin_port}/v1/remote", timeout=10) as r:
        return json.loads(r.read())


def local_logs(b, topic: str, p: int) -> list[int]:
    return sorted(int(f.stem) for f in b.partition_dir(topic, p).glob("*.log"))


def all_rolled_tiered(b, topic: str, partitions: int):
    """{p: remote log end} once every rolled local segment of every partition is in remote
    storage (remote end + 1 == base of the active segment), else False."""
    tiered = list_offsets(b.bootstrap, topic, -5, partitions)
    for p in range(partitions):
        logs = local_logs(b, topic, p)
        if tiered[p] < 0 or tiered[p] + 1 != logs[-1]:
            return False
    return tiered


def set_topic_config(bootstrap: str, topic: str, config: dict) -> None:
    """AlterConfigs (replaces the topic's whole dynamic config with `config`)."""
    from confluent_kafka.admin import ConfigResource
    a = kit.admin(bootstrap)
    res = ConfigResource("topic", topic, set_config=config)
    a.alter_configs([res])[res].result(30)


def fetch_v4(bootstrap: str, topic: str, partition: int, offset: int,
             max_bytes: int = 1 << 20) -> tuple[int, int, bytes]:
    """One raw Fetch v4 for one partition -> (error code, high watermark, records bytes).

    Raw because librdkafka retries KAFKA_STORAGE_ERROR silently and never shows it."""
    w = rawkafka.Writer()
    w.i32(-1).i32(100).i32(1).i32(max_bytes).i8(0)  # replica, max wait, min bytes, max bytes, RU
    w.array([topic], lambda w2, t: w2.string(t).array(
        [partition], lambda w3, p: w3.i32(p).i64(offset).i32(max_bytes)))
    with rawkafka.Conn(bootstrap, timeout=60) as c:
        c.send(rawkafka.request(1, 4, 11, bytes(w.buf)))
        cid, body = c.recv_frame()
    assert cid == 11
    r = rawkafka.Reader(body)
    r.i32()  # throttle
    assert r.array_len() == 1 and r.string() == topic
    assert r.array_len() == 1
    p, err, hw = r.i32(), r.i16(), r.i64()
    r.i64()  # last stable offset
    assert p == partition
    for _ in range(max(r.array_len(), 0)):  # aborted transactions
        r.i64(), r.i64()
    size = r.i32()
    return err, hw, (r._take(size) if size > 0 else b"")


def first_batch_base_offset(records: bytes) -> int:
    import struct
    assert len(records) >= 12, f"no complete batch in {len(records)} bytes"
    return struct.unpack_from(">q", records, 0)[0]


def remote_dirs(files: dict, topic: str, partitions: int) -> dict[int, str]:
    """{p: the store's directory of partition p} from a digest listing."""
    out: dict[int, str] = {}
    for path in files:
        parent = path.rsplit("/", 1)[0]
        name = parent.rsplit("/", 1)[1]
        for p in range(partitions):
            if name.startswith(f"{topic}-{p}-"):
                assert out.get(p, parent) == parent, f"two remote dirs for {topic}-{p}"
                out[p] = parent
    assert sorted(out) == list(range(partitions)), f"remote dirs: {out}"
    return out


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


# ---- 64 MiB (200 in the soak): byte-identical in the store (read back around Strata) -------

BIG_PARTITIONS = 4
BIG_MIB = int(os.environ.get("STRATA_TIERED_BIG_MIB", "64"))
BIG_BYTES = BIG_MIB * 1024 * 1024
# 1 MiB segments up to 256 MiB; 16 MiB beyond (a 1 GiB soak would otherwise upload 1,024
# segments of five objects each, which HDFS takes minutes over).
BIG_SEGMENT = SEGMENT if BIG_MIB <= 256 else 16 * SEGMENT
BIG_WAIT = max(240, BIG_MIB // 2)  # seconds for each of produce, upload and consume


def test_big_log_identical_read_directly_then_remote_only(broker_factory, store):
    t_start = time.monotonic()
    admin_port = free_port()
    # On HDFS, uploading 1 MiB segments costs ~28 WebHDFS round trips each (CREATE + stat +
    # rename per object and manifest): 4 copiers bring a 200-segment upload to ~1.5 min.
    b = tiered_broker(broker_factory, store, admin_port,
                      {"remote.log.manager.copier.thread.pool.size": "4"})
    topic = kit.unique_topic("remote-big")
    base_config = {"remote.storage.enable": "true", "segment.bytes": str(BIG_SEGMENT),
                   "retention.ms": "-1"}
    kit.create_topic(b.bootstrap, topic, BIG_PARTITIONS,
                     config={**base_config, "local.retention.bytes": str(4 * BIG_BYTES)})

    # Values average 4100 random bytes; with keys and headers that is ~BIG_MIB of log.
    n = BIG_BYTES // 4100
    recs = kit.make_records(n, BIG_PARTITIONS, seed=4050, tag="big", value_size=8200)
    kit.produce_confluent(b.bootstrap, topic, recs, extra={"linger.ms": 20},
                          flush_timeout=BIG_WAIT)
    t_produced = time.monotonic()

    # Every rolled segment uploaded: remote end reaches the active segment, no lag left.
    wait_until(lambda: all_rolled_tiered(b, topic, BIG_PARTITIONS)
               and metric_sum(admin_port, "strata_remote_upload_lag_segments") == 0,
               BIG_WAIT, "every rolled segment uploaded")
    t_uploaded = time.monotonic()

    # Local rolled segments vs the same objects read back around Strata.
    files, read_secs = store.digest("/strata")
    dirs = remote_dirs(files, topic, BIG_PARTITIONS)
    compared = 0
    for p in range(BIG_PARTITIONS):
        pdir = b.partition_dir(topic, p)
        rolled = local_logs(b, topic, p)[:-1]
        expected = BIG_BYTES // BIG_SEGMENT // BIG_PARTITIONS
        assert len(rolled) >= 0.8 * expected, f"partition {p}: only {len(rolled)} rolled segments"
        man = json.loads(store.read(f"{dirs[p]}/manifest.json"))  # metadata only
        segs = man["segments"]
        assert [s["state"] for s in segs] == ["COPY_FINISHED"] * len(segs)
        assert [s["base_offset"] for s in segs] == rolled, f"partition {p}: manifest bases"
        remote_logs = sorted(f for f in files if f.startswith(dirs[p] + "/") and f.endswith(".log"))
        assert remote_logs == sorted(f"{dirs[p]}/{s['base_offset']:020d}-{s['uuid']}.log"
                                     for s in segs), f"partition {p}: stray or missing .log objects"
        for s in segs:
            local = pdir / f"{s['base_offset']:020d}.log"
            length, sha = files[f"{dirs[p]}/{s['base_offset']:020d}-{s['uuid']}.log"]
            assert length == local.stat().st_size == s["size"], f"{local.name}: sizes differ"
            assert sha == sha256_file(local), f"partition {p} segment {local.name}: bytes differ"
            compared += length
        for a, c in zip(segs, segs[1:]):
            assert a["end_offset"] + 1 == c["base_offset"]
    assert compared >= 0.95 * BIG_BYTES, f"only {compared} bytes compared"
    t_hashed = time.monotonic()

    # Local retention down to nothing: only the active segment may stay on local disk.
    tiered = list_offsets(b.bootstrap, topic, -5, BIG_PARTITIONS)
    set_topic_config(b.bootstrap, topic, {**base_config, "local.retention.bytes": "1"})

    def tail_only():
        return all(local_logs(b, topic, p) == [tiered[p] + 1] for p in range(BIG_PARTITIONS))
    wait_until(tail_only, 60, "local retention down to the active segment")
    assert list_offsets(b.bootstrap, topic, -4, BIG_PARTITIONS) == {
        p: tiered[p] + 1 for p in range(BIG_PARTITIONS)}
    assert list_offsets(b.bootstrap, topic, -2, BIG_PARTITIONS) == {
        p: 0 for p in range(BIG_PARTITIONS)}

    # Everything from offset 0, almost all of it now only in the store, identical.
    got = kit.consume_confluent(b.bootstrap, topic, BIG_PARTITIONS, timeout=BIG_WAIT)
    t_consumed = time.monotonic()
    kit.assert_same_records(recs, got)
    assert sum(len(v) for v in got.values()) == n
    print(f"\n{store.name} {BIG_MIB} MiB test: {compared / 2**20:.1f} MiB compared; produce "
          f"{t_produced - t_start:.1f}s, upload wait {t_uploaded - t_produced:.1f}s, "
          f"direct digest {t_hashed - t_uploaded:.1f}s (reads {read_secs:.1f}s), "
          f"remote consume {t_consumed - t_hashed:.1f}s, total {time.monotonic() - t_start:.1f}s")


# ---- 1 GiB read back cold, compared with what was produced ----------------------------------

GIB_PARTITIONS = 2
GIB_VALUE = 128 * 1024  # large values: the client's per-record cost stays out of the way
GIB_RECORDS = (1 << 30) // GIB_VALUE
GIB_SEGMENT = 32 * SEGMENT
GIB_WAIT = 300  # seconds for each of produce, upload and consume (about 30 s each here)


class PartitionValues:
    """The value of each partition's n-th record, regenerated in order from a seed, so that
    neither the producer nor the checking consumer holds a GiB."""

    def __init__(self, seed: int):
        import random
        self.rnd = {p: random.Random(seed * 1000 + p) for p in range(GIB_PARTITIONS)}

    def next(self, p: int) -> bytes:
        return self.rnd[p].randbytes(GIB_VALUE)


def produce_gib(bootstrap: str, topic: str, seed: int) -> None:
    from confluent_kafka import Producer
    # Idempotent: a retried batch cannot reorder a partition, whose n-th offset must be its
    # n-th value.
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
                  "linger.ms": 20, "batch.size": 1_000_000, "message.timeout.ms": GIB_WAIT * 1000,
                  "queue.buffering.max.kbytes": 256 * 1024})
    values, errors, acked = PartitionValues(seed), [], [0]

    def delivered(err, msg):
        if err is not None:
            errors.append(err)
        else:
            acked[0] += 1
    for i in range(GIB_RECORDS):
        part = i % GIB_PARTITIONS
        value = values.next(part)
        while True:
            try:
                p.produce(topic, value=value, key=str(i).encode(), partition=part,
                          on_delivery=delivered)
                break
            except BufferError:
                p.poll(0.1)
        p.poll(0)
    assert p.flush(GIB_WAIT) == 0, "records still undelivered after flush"
    assert not errors and acked[0] == GIB_RECORDS, f"{acked[0]} acked, errors {errors[:3]}"


def consume_and_compare_gib(bootstrap: str, topic: str, seed: int) -> int:
    """Reads every partition from offset 0 and compares each record with the one produced
    there -> bytes compared."""
    from confluent_kafka import OFFSET_BEGINNING, TopicPartition
    c = kit.consumer_confluent(bootstrap, {"fetch.max.bytes": 64 << 20,
                                           "max.partition.fetch.bytes": 16 << 20})
    values, compared = PartitionValues(seed), 0
    nxt = {p: 0 for p in range(GIB_PARTITIONS)}
    per_partition = GIB_RECORDS // GIB_PARTITIONS
    try:
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(GIB_PARTITIONS)])
        deadline = time.monotonic() + GIB_WAIT
        while any(n < per_partition for n in nxt.values()):
            assert time.monotonic() < deadline, f"timed out consuming at {nxt}"
            for m in c.consume(num_messages=64, timeout=0.5):
                assert m.error() is None, f"consume error: {m.error()}"
                part, off = m.partition(), m.offset()
                assert off == nxt[part], f"partition {part}: offset {off}, expected {nxt[part]}"
                want_key = str(off * GIB_PARTITIONS + part).encode()
                assert m.key() == want_key, f"partition {part} offset {off}: key {m.key()!r}"
                assert m.value() == values.next(part), f"partition {part} offset {off}: value differs"
                compared += len(m.value())
                nxt[part] = off + 1
    finally:
        c.close()
    return compared


def test_a_gib_read_cold_from_the_store_is_what_was_produced(broker_factory, store):
    """1 GiB produced with local retention at its minimum: every rolled segment leaves local
    disk once uploaded, and a consumer from offset 0 reads it all back from the store, compared
    record by record with what was produced."""
    t_start = time.monotonic()
    admin_port = free_port()
    b = tiered_broker(broker_factory, store, admin_port,
                      {"remote.log.manager.copier.thread.pool.size": "4"})
    topic = kit.unique_topic("remote-gib")
    kit.create_topic(b.bootstrap, topic, GIB_PARTITIONS, config={
        "remote.storage.enable": "true", "segment.bytes": str(GIB_SEGMENT),
        "retention.ms": "-1", "local.retention.bytes": "1"})
    produce_gib(b.bootstrap, topic, seed=4096)
    t_produced = time.monotonic()

    def tail_only():
        tiered = all_rolled_tiered(b, topic, GIB_PARTITIONS)
        return tiered and all(local_logs(b, topic, p) == [tiered[p] + 1]
                              for p in range(GIB_PARTITIONS))
    wait_until(tail_only, GIB_WAIT, "every rolled segment uploaded and deleted locally",
               lambda: {p: local_logs(b, topic, p) for p in range(GIB_PARTITIONS)})
    starts = list_offsets(b.bootstrap, topic, -4, GIB_PARTITIONS)  # local log start
    ends = list_offsets(b.bootstrap, topic, -1, GIB_PARTITIONS)
    assert all(ends[p] - starts[p] < 0.1 * ends[p] for p in range(GIB_PARTITIONS)), (starts, ends)
    t_uploaded = time.monotonic()
    reads_before = metric_sum(admin_port, "strata_remote_reads_total")

    compared = consume_and_compare_gib(b.bootstrap, topic, seed=4096)
    t_consumed = time.monotonic()
    assert compared == GIB_RECORDS * GIB_VALUE
    assert metric_sum(admin_port, "strata_remote_reads_total") > reads_before
    print(f"\n{store.name} 1 GiB cold read: produce {t_produced - t_start:.1f}s, upload wait "
          f"{t_uploaded - t_produced:.1f}s, consume and compare {t_consumed - t_uploaded:.1f}s "
          f"({compared / 2**20 / (t_consumed - t_uploaded):.0f} MiB/s)")


# ---- broker restart while the store is down -----------------------------------------------

def test_broker_restart_during_outage(broker_factory, store):
    admin_port = free_port()
    b = tiered_broker(broker_factory, store, admin_port)
    topic = kit.unique_topic("remote-restart")
    kit.create_topic(b.bootstrap, topic, PARTITIONS, config={
        "remote.storage.enable": "true", "segment.bytes": str(SEGMENT),
        "local.retention.bytes": str(SEGMENT), "retention.ms": "-1"})
    recs = kit.make_records(6000, PARTITIONS, seed=17, tag="before", value_size=2000)
    kit.produce_confluent(b.bootstrap, topic, recs)
    wait_until(lambda: all_rolled_tiered(b, topic, PARTITIONS), 120, "uploads to the store")
    local_start = wait_until(
        lambda: (s := list_offsets(b.bootstrap, topic, -4, PARTITIONS)) and all(
            s[p] > 0 for p in range(PARTITIONS)) and s, 30, "local retention")

    # The store dies; acks=all produce must still succeed and roll new (un-uploadable) segments.
    tiered_before = list_offsets(b.bootstrap, topic, -5, PARTITIONS)
    store.kill9()
    during = kit.make_records(4000, PARTITIONS, seed=18, tag="during", value_size=2000)
    kit.produce_confluent(b.bootstrap, topic, during)
    kept = {p: local_logs(b, topic, p) for p in range(PARTITIONS)}
    for p in range(PARTITIONS):
        assert kept[p][0] <= tiered_before[p] + 1, f"partition {p}: un-uploaded segment deleted"
        assert len([o for o in kept[p] if o > tiered_before[p]]) >= 3, (
            f"partition {p}: expected several un-uploaded segments, have {kept[p]}")

    # Clean stop and start again on the same data dir, the store still down.
    rc = b.stop()
    assert rc == 0, f"broker did not stop cleanly with the store down (rc {rc})"
    t0 = time.monotonic()
    b.start()
    start_secs = time.monotonic() - t0

    # Produce and local reads work.
    after = kit.make_records(2000, PARTITIONS, seed=19, tag="after", value_size=2000)
    kit.produce_confluent(b.bootstrap, topic, after)
    local_now = list_offsets(b.bootstrap, topic, -4, PARTITIONS)
    for p in range(PARTITIONS):
        assert local_now[p] <= tiered_before[p] + 1, f"partition {p}: un-uploaded data deleted"
    everything = recs + during + after
    got = kit.consume_confluent(b.bootstrap, topic, PARTITIONS, timeout=120, start=local_now)
    kit.assert_same_records([r for r in everything if r.offset >= local_now[r.partition]], got,
                            contiguous_from=None)
    for p in range(PARTITIONS):
        offs = [m.offset() for m in got[p]]
        assert offs == list(range(local_now[p], local_now[p] + len(offs)))

    # Remote-only old data: a retriable error (KAFKA_STORAGE_ERROR), never OFFSET_OUT_OF_RANGE
    # (which sends consumers to auto.offset.reset, past the remote data), and the log start
    # offset stays 0. BROKER BUG found by this test (Strata at the time of writing): the
    # manifest is not loaded while the store is down, so the broker takes the local log start as
    # the log start: Fetch(0) -> OFFSET_OUT_OF_RANGE (1) and ListOffsets(-2) -> local start.
    # Collected here and failed at the end, so the recovery below is still checked.
    outage_bugs = []
    for p in range(PARTITIONS):
        err, hw, data = fetch_v4(b.bootstrap, topic, p, 0)
        if err != KAFKA_STORAGE_ERROR or data != b"":
            outage_bugs.append(f"partition {p}: Fetch(offset 0, remote-only) with the store down after "
                               f"a restart -> error {err} (want {KAFKA_STORAGE_ERROR}), "
                               f"{len(data)} bytes")
        assert hw == 1 + max(r.offset for r in everything if r.partition == p)
    earliest = list_offsets(b.bootstrap, topic, -2, PARTITIONS)
    if earliest != {p: 0 for p in range(PARTITIONS)}:
        outage_bugs.append(f"ListOffsets(-2) with the store down after a restart -> {earliest}, "
                           f"want 0 everywhere (local starts {local_now})")
    # What a client sees: a consumer positioned at offset 0 must wait (or get offset 0 once
    # the store is back), never silently continue past the remote-only records.
    from confluent_kafka import TopicPartition
    c = kit.consumer_confluent(b.bootstrap)
    try:
        c.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        first: dict[int, int] = {}
        deadline = time.time() + 4
        while time.time() < deadline:
            for m in c.consume(num_messages=1000, timeout=0.5):
                if m.error() is None:
                    first.setdefault(m.partition(), m.offset())
    finally:
        c.close()
    skipped = {p: o for p, o in first.items() if o != 0}
    if skipped:
        outage_bugs.append(f"consumer assigned at offset 0 (auto.offset.reset=earliest) with HDFS "
                           f"down got first records at {skipped}: remote-only records skipped")

    # The admin API shows the store failing.
    health = remote_health(admin_port)
    assert health["uri"].startswith({"hdfs": "webhdfs://", "s3": "s3://"}[store.name]), health
    assert health["read"]["failures"] + health["calls"]["failures"] > 0, health

    # Several retention passes later, nothing un-uploaded has left local disk.
    time.sleep(3)
    for p in range(PARTITIONS):
        logs = local_logs(b, topic, p)
        assert logs[0] <= tiered_before[p] + 1, f"partition {p}: un-uploaded segment deleted"
        assert set(o for o in kept[p] if o > tiered_before[p]) <= set(logs)

    # The store back on the same storage: uploads resume without a broker restart.
    store.restart()
    wait_until(lambda: all_rolled_tiered(b, topic, PARTITIONS), 180, "uploads after the outage")
    wait_until(lambda: list_offsets(b.bootstrap, topic, -2, PARTITIONS) == {
        p: 0 for p in range(PARTITIONS)}, 60, "log start offset 0 (remote) again")
    for p in range(PARTITIONS):
        err, _hw, data = fetch_v4(b.bootstrap, topic, p, 0)
        assert err == 0 and first_batch_base_offset(data) == 0
    got = kit.consume_confluent(b.bootstrap, topic, PARTITIONS, timeout=180)
    kit.assert_same_records(everything, got)
    wait_until(lambda: list_offsets(b.bootstrap, topic, -4, PARTITIONS) != local_start
               and metric_sum(admin_port, "strata_remote_upload_lag_segments") == 0,
               60, "local retention after the catch-up")
    health = remote_health(admin_port)
    assert health["breaker"] == "closed" and health["upload"]["segments"] > 0, health
    print(f"\n{store.name}: restart with the store down: broker accepted connections after {start_secs:.1f}s")
    assert not outage_bugs, "BROKER BUG while the store was down:\n" + "\n".join(outage_bugs)
