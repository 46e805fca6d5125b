"""Tiered storage under injected faults, disk back-pressure and admin edge cases, on a file://
store; the tests marked [file, s3] also run on S3 (S3Proxy, s3kit.py), reading the store back
around Strata (RemoteView below) with the same assertions. The fault layer sits under the retry,
hedge and breaker layers on every backend, so on S3 those handle real S3 requests.

* [file, s3] Slow tail: 5% of remote Gets are delayed 2 s (strata.remote.fault.get.delay.*);
  hedged reads (strata.remote.hedge.delay.ms) keep the p99 of remote fetches far below the
  delay, bytes exact.
* [file, s3] 20% of remote Puts fail (strata.remote.fault.put.fail.ratio): every segment is
  uploaded exactly once and every record stays readable.
* Store down + strata.log.dir.high.mark.bytes: Produce gets the retriable KAFKA_STORAGE_ERROR (56)
  with a message naming the cause, and accepts again by itself once uploads drain.
* [file, s3] DeleteRecords on a tiered topic deletes the remote segments below the new log start
  promptly.
* [file, s3] retention.bytes, then retention.ms, delete the oldest remote segments' objects and
  move the log start past them.
* remote.storage.enable=true with cleanup.policy=compact is refused with INVALID_CONFIG (40).
* A topic deleted while the store is down: DeleteTopics answers at once, the remote directories
  stay pending across a restart, and are removed once the store is back.
* The broker restarted while the store is down: ListOffsets -2 still says 0, old offsets get the
  retriable 56, local data is served, nothing un-uploaded is deleted, uploads resume.
"""
from __future__ import annotations

import contextlib
import json
import re
import struct
import threading
import time
from pathlib import Path

import pytest

import kit
import rawkafka
import remote_stores
import s3kit
from test_tiered_localfs import list_offsets, metric, remote_partition_dir, wait_until

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata-specific remote storage")

SEGMENT = 256 * 1024
KAFKA_STORAGE_ERROR = 56
INVALID_CONFIG = 40


from ports import free_port  # noqa: E402


# ---- the store, read around Strata --------------------------------------------------------

class RemoteView:
    """A tier's store as the tests read it, the same on file:// and S3: the objects of a
    partition's directory ("<topic>-<p>-<id>"), their bytes, its manifest. `config` holds the
    broker settings for the tier."""
    name: str
    config: dict

    def objects(self, topic: str, p: int) -> dict[str, int]:
        """{object name: size} in partition p's directory."""
        raise NotImplementedError

    def read(self, topic: str, p: int, name: str) -> bytes:
        """An object's bytes (FileNotFoundError if missing)."""
        raise NotImplementedError

    def manifest(self, topic: str, p: int) -> dict:
        # One broker without cluster mode writes manifest.json (no leader epoch in the name).
        return json.loads(self.read(topic, p, "manifest.json"))


class FileView(RemoteView):
    name = "file"

    def __init__(self, root: Path):
        self.root = root
        self.config = {"strata.remote.storage.uri": f"file://{root}"}

    def objects(self, topic: str, p: int) -> dict[str, int]:
        out = {}
        for f in remote_partition_dir(self.root, topic, p).iterdir():
            with contextlib.suppress(FileNotFoundError):  # deleted or renamed meanwhile
                out[f.name] = f.stat().st_size
        return out

    def read(self, topic: str, p: int, name: str) -> bytes:
        return (remote_partition_dir(self.root, topic, p) / name).read_bytes()


class S3View(RemoteView):
    """Keys "<prefix>/<partition dir>/<name>" in the bucket, read with s3kit's own client."""
    name = "s3"

    def __init__(self, store, root: str):
        self.server, self.bucket = store.server, remote_stores.BUCKET
        self.config = store.config(root)
        self.prefix = store.path(root)

    def _dir(self, topic: str, p: int) -> tuple[str, dict[str, int]]:
        """(partition p's key prefix, {key: size} under it)."""
        keys = self.server.list_keys(self.bucket, f"{self.prefix}/{topic}-{p}-")
        dirs = {k[len(self.prefix) + 1:].split("/", 1)[0] for k in keys}
        assert len(dirs) == 1, f"remote dirs for {topic}-{p}: {sorted(dirs)}"
        return f"{self.prefix}/{dirs.pop()}/", keys

    def objects(self, topic: str, p: int) -> dict[str, int]:
        d, keys = self._dir(topic, p)
        return {k[len(d):]: size for k, size in keys.items()}

    def read(self, topic: str, p: int, name: str) -> bytes:
        key = self._dir(topic, p)[0] + name
        try:
            return self.server.get(self.bucket, key)
        except s3kit.S3Error as e:
            if e.status == 404:  # as a missing file on file://, for the waits below
                raise FileNotFoundError(key) from e
            raise


@pytest.fixture(params=["file", "s3"])
def store(request, tmp_path) -> RemoteView:
    """A fresh directory, or a prefix of the test's own in the module's S3Proxy."""
    if request.param == "file":
        (tmp_path / "remote").mkdir()
        return FileView(tmp_path / "remote")
    root = "/strata/" + re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name).strip("-")
    return S3View(remote_stores.S3Store(request.getfixturevalue("s3_server")), root)


def seg_stem(seg: dict) -> str:
    """The name of a manifest segment's objects without the extension."""
    return f"{seg['base_offset']:020d}-{seg['uuid']}"


def log_name(seg: dict) -> str:
    return seg_stem(seg) + ".log"


def object_stems(objects) -> set[str]:
    """seg_stem of every object of a partition directory, manifest aside."""
    return {n.split(".", 1)[0] for n in objects if not n.startswith("manifest")}


def tiered_broker(broker_factory, view: RemoteView, admin_port: int, extra: dict | None = None):
    config = {
        "strata.admin.listener": f"127.0.0.1:{admin_port}",
        "remote.log.storage.system.enable": "true",
        **view.config,
        "remote.log.manager.task.interval.ms": "1000000",  # no periodic remote retention
        "log.retention.check.interval.ms": "300",
    }
    config.update(extra or {})
    return broker_factory(config=config)


def tiered_setup(broker_factory, tmp_path: Path, extra: dict | None = None):
    """A tiered broker storing into a fresh `tmp_path/remote`: (broker, remote dir, admin port)."""
    remote = tmp_path / "remote"
    remote.mkdir()
    b, admin_port = store_setup(broker_factory, FileView(remote), extra)
    return b, remote, admin_port


def store_setup(broker_factory, view: RemoteView, extra: dict | None = None):
    """A tiered broker storing into `view`'s store: (broker, admin port)."""
    admin_port = free_port()
    return tiered_broker(broker_factory, view, admin_port, extra), admin_port


def tiered_topic(b, partitions: int = 1, **extra) -> str:
    topic = kit.unique_topic("slowtail")
    config = {"remote.storage.enable": "true", "segment.bytes": str(SEGMENT),
              "local.retention.bytes": "1", "retention.ms": "-1"}
    config.update(extra)
    kit.create_topic(b.bootstrap, topic, partitions, config=config)
    return topic


def produce(b, topic: str, recs: list, batch_size: int = 65536, **extra) -> None:
    """Produces with batches well under segment.bytes (the broker refuses larger ones)."""
    kit.produce_confluent(b.bootstrap, topic, recs, extra={"batch.size": batch_size, **extra})


def wait_all_tiered(b, view: RemoteView, topic: str, partitions: int, timeout: float = 90):
    """Waits until every rolled segment is COPY_FINISHED and local retention left only the
    active segment; returns {partition: manifest segments}."""
    def done():
        out = {}
        for p in range(partitions):
            try:
                segs = view.manifest(topic, p)["segments"]
            except (AssertionError, FileNotFoundError, json.JSONDecodeError):
                return None
            local = sorted(int(f.stem) for f in b.partition_dir(topic, p).glob("*.log"))
            if not segs or len(local) != 1 or any(s["state"] != "COPY_FINISHED" for s in segs):
                return None
            if segs[-1]["end_offset"] + 1 != local[0]:
                return None
            out[p] = segs
        return out
    return wait_until(done, timeout, "uploads and local retention")


# ---- raw Fetch v4 --------------------------------------------------------------------------

def fetch(conn: rawkafka.Conn, topic: str, partition: int, offset: int, max_bytes: int,
          cid: int) -> tuple[int, bytes]:
    """One Fetch v4 of one partition -> (error code, record bytes)."""
    w = rawkafka.Writer()
    w.i32(-1).i32(500).i32(1).i32(max_bytes).i8(0)
    w.array([topic], lambda w2, t: w2.string(t).array(
        [partition], lambda w3, p: w3.i32(p).i64(offset).i32(max_bytes)))
    conn.send(rawkafka.request(1, 4, cid, bytes(w.buf)))
    got_cid, body = conn.recv_frame()
    assert got_cid == cid
    r = rawkafka.Reader(body)
    r.i32()  # throttle
    assert r.array_len() == 1
    r.string()
    assert r.array_len() == 1
    r.i32()
    err = r.i16()
    r.i64(); r.i64()  # high watermark, last stable offset
    n = r.array_len()
    for _ in range(max(n, 0)):
        r.i64(); r.i64()
    size = r.i32()
    return err, (r._take(size) if size > 0 else b"")


def whole_batches(data: bytes) -> list[tuple[int, int, bytes]]:
    """[(base offset, last offset, batch bytes)] of the complete batches in `data`."""
    out, pos = [], 0
    while pos + 12 <= len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        if pos + 12 + length > len(data):
            break
        last_delta = struct.unpack_from(">i", data, pos + 23)[0]
        out.append((base, base + last_delta, data[pos:pos + 12 + length]))
        pos += 12 + length
    return out


def remote_bytes(view: RemoteView, topic: str, p: int, segs: list[dict]) -> bytes:
    return b"".join(view.read(topic, p, log_name(s)) for s in segs)


def test_slow_remote_gets_are_hedged(broker_factory, store):
    b, admin_port = store_setup(broker_factory, store, {
        "strata.remote.fault.get.delay.ratio": "0.05",
        "strata.remote.fault.get.delay.ms": "2000",
        "strata.remote.hedge.delay.ms": "100",
        "strata.remote.hedge.max.ratio": "0.2",
        "strata.remote.cache.bytes": "0",  # every fetch reads the store (no chunk cache)
    })
    assert "FAULT INJECTION" in b.log_text()
    topic = tiered_topic(b)
    recs = kit.make_records(4000, 1, seed=99, tag="slow", value_size=4000, nulls=False)
    produce(b, topic, recs, batch_size=16384)
    segs = wait_all_tiered(b, store, topic, 1)[0]
    assert len(segs) >= 20
    remote_end = segs[-1]["end_offset"]
    expected = remote_bytes(store, topic, 0, segs)

    # Successive raw fetches over the remote-only range, one small batch each.
    latencies, fetched, offset = [], [], 0
    with rawkafka.Conn(b.bootstrap, timeout=30) as c:
        while offset <= remote_end:
            t0 = time.monotonic()
            err, data = fetch(c, topic, 0, offset, 16384, cid=len(latencies) + 1)
            latencies.append(time.monotonic() - t0)
            assert err == 0, f"fetch at {offset}: error {err}"
            batches = whole_batches(data)
            assert batches and batches[0][0] <= offset <= batches[0][1], f"fetch at {offset}"
            for base, last, raw in batches:
                if base >= offset and last <= remote_end:
                    fetched.append(raw)
                    offset = last + 1
    assert b"".join(fetched) == expected  # byte-identical to the uploaded segments
    latencies.sort()
    p99 = latencies[int(len(latencies) * 0.99) - 1]
    p50 = latencies[len(latencies) // 2]
    print(f"{store.name}: remote fetches: {len(latencies)}, p50 {p50 * 1000:.0f} ms, "
          f"p99 {p99 * 1000:.0f} ms, max {latencies[-1] * 1000:.0f} ms")
    assert len(latencies) >= 200
    assert p99 < 1.0, f"p99 {p99:.3f}s: hedging did not cut the 2 s tail"
    # The faults really happened and hedges answered them.
    assert metric(admin_port, "strata_remote_storage_hedge_fired_total") > 0
    assert metric(admin_port, "strata_remote_storage_hedge_won_total") > 0
    # A client from offset 0 gets every record exactly.
    got = kit.consume_confluent(b.bootstrap, topic, 1, timeout=120)
    kit.assert_same_records(recs, got)


def test_failing_puts_upload_each_segment_once(broker_factory, store):
    b, admin_port = store_setup(broker_factory, store, {
        "strata.remote.fault.put.fail.ratio": "0.2",
        "strata.remote.retry.max.attempts": "2",  # let some failures reach the copier
        "strata.remote.retry.backoff.ms": "10",
    })
    partitions = 2
    topic = tiered_topic(b, partitions)
    recs = kit.make_records(6000, partitions, seed=7, tag="puts", value_size=2000)
    produce(b, topic, recs)
    tiered = wait_all_tiered(b, store, topic, partitions, timeout=120)
    total = 0
    for p, segs in tiered.items():
        bases = [s["base_offset"] for s in segs]
        assert len(bases) == len(set(bases)), f"partition {p}: a base offset listed twice"
        assert bases[0] == 0
        for x, y in zip(segs, segs[1:]):
            assert x["end_offset"] + 1 == y["base_offset"]
        objects = store.objects(topic, p)
        logs = sorted(n for n in objects if n.endswith(".log"))
        assert logs == sorted(log_name(s) for s in segs)
        for s in segs:
            assert objects[log_name(s)] == s["size"]
        # A retry reuses the segment's uuid: nothing of a failed attempt is left beside it.
        assert object_stems(objects) == {seg_stem(s) for s in segs}
        total += len(segs)
    assert total >= 10
    assert metric(admin_port, "strata_remote_uploads_total") == total
    assert metric(admin_port, "strata_remote_storage_retry_retries_total") > 0
    got = kit.consume_confluent(b.bootstrap, topic, partitions, timeout=120)
    kit.assert_same_records(recs, got)


# ---- produce back-pressure -------------------------------------------------------------------

def produce_raw(conn: rawkafka.Conn, topic: str, batch: bytes, cid: int) -> tuple[int, int, str]:
    """Produce v8 of one batch to partition 0 -> (error code, base offset, error message)."""
    conn.send(rawkafka.request(0, 8, cid, rawkafka.produce_body(8, topic, 0, batch, acks=-1)))
    got_cid, body = conn.recv_frame()
    assert got_cid == cid
    r = rawkafka.Reader(body)
    assert r.array_len() == 1
    r.string()
    assert r.array_len() == 1
    r.i32()
    code, base = r.i16(), r.i64()
    r.i64(); r.i64()  # log append time, log start
    for _ in range(max(r.array_len(), 0)):
        r.i32(); r.string()
    return code, base, r.string() or ""


def test_produce_refused_above_disk_high_mark_while_store_down(broker_factory, tmp_path):
    away = tmp_path / "remote-away"
    high_mark = 3 * 1024 * 1024
    b, remote, admin_port = tiered_setup(broker_factory, tmp_path, {
        "strata.log.dir.high.mark.bytes": str(high_mark)})
    topic = tiered_topic(b)
    # The store goes down: a file where its root directory was.
    remote.rename(away)
    remote.write_text("store is down")

    acked: list[tuple[int, bytes]] = []  # (offset, value)
    value_of = lambda i: (f"v{i:06d}-".encode() * 1000)[:10000]
    refused = None
    with rawkafka.Conn(b.bootstrap, timeout=30) as c:
        for i in range(200):  # 10 records x 10 KB a request: ~20 MB at most
            vals = [value_of(i * 10 + k) for k in range(10)]
            batch = rawkafka.record_batch([(None, v, []) for v in vals], kit.BASE_TS + i)
            code, base, msg = produce_raw(c, topic, batch, cid=i + 1)
            if code == KAFKA_STORAGE_ERROR:
                refused = (i, msg)
                break
            assert code == 0, f"produce {i}: error {code} {msg}"
            acked.extend((base + k, v) for k, v in enumerate(vals))
        assert refused is not None, "produce never refused above the high mark"
        assert "strata.log.dir.high.mark.bytes" in refused[1], refused[1]
        used = sum(f.stat().st_size for f in b.partition_dir(topic, 0).glob("*.log"))
        assert used > high_mark
        # Still refused (cheap cached check), logged once, counted.
        for i in range(5):
            batch = rawkafka.record_batch([(None, b"x", [])], kit.BASE_TS)
            assert produce_raw(c, topic, batch, cid=1000 + i)[0] == KAFKA_STORAGE_ERROR
    assert b.log_text().count("refusing produce") == 1
    assert metric(admin_port, "strata_produce_disk_high_mark_rejections_total") >= 6
    assert metric(admin_port, "strata_log_dir_high_mark_exceeded") == 1

    # A real client treats the error as retriable: it keeps retrying, and its records land
    # once the store is back and local retention has freed space.
    later = kit.make_records(200, 1, seed=3, tag="later", value_size=500)
    result: dict = {}

    def produce_later():
        try:
            kit.produce_confluent(b.bootstrap, topic, later, flush_timeout=150,
                                  extra={"batch.size": 65536, "message.timeout.ms": 120000})
            result["ok"] = True
        except BaseException as e:  # noqa: BLE001 - reported below
            result["error"] = e
    t = threading.Thread(target=produce_later)
    t.start()
    time.sleep(3)
    assert not result, f"produce finished while the disk was above the mark: {result}"
    assert all(r.offset < 0 for r in later)
    remote.unlink()
    away.rename(remote)
    t.join(170)
    assert result.get("ok"), f"producer after recovery: {result}"
    assert b.log_text().count("accepting produce again") >= 1
    assert metric(admin_port, "strata_log_dir_high_mark_exceeded") == 0

    # Every acked record is readable, at its offset.
    got = kit.consume_confluent(b.bootstrap, topic, 1, timeout=120)[0]
    by_offset = {m.offset(): m for m in got}
    for off, v in acked:
        assert by_offset[off].value() == v, f"offset {off}"
    kit.assert_same_records(later, {0: [m for m in got if m.offset() > acked[-1][0]]},
                            contiguous_from=None)


# ---- DeleteRecords and config validation ----------------------------------------------------

def test_delete_records_deletes_remote_segments(broker_factory, store):
    from confluent_kafka import TopicPartition
    b, admin_port = store_setup(broker_factory, store)
    topic = tiered_topic(b)
    recs = kit.make_records(3000, 1, seed=21, tag="dr", value_size=1000, nulls=False)
    produce(b, topic, recs)
    segs = wait_all_tiered(b, store, topic, 1)[0]
    assert len(segs) >= 5
    assert list_offsets(b.bootstrap, topic, -2, 1) == {0: 0}
    new_start = segs[3]["base_offset"] + 5  # inside segment 3
    a = kit.admin(b.bootstrap)
    t0 = time.monotonic()
    tp = TopicPartition(topic, 0, new_start)
    assert a.delete_records([tp], operation_timeout=30)[tp].result(30).low_watermark == new_start
    assert list_offsets(b.bootstrap, topic, -2, 1) == {0: new_start}

    def deleted():
        states = {s["base_offset"]: s["state"] for s in store.manifest(topic, 0)["segments"]}
        objects = store.objects(topic, 0)
        logs = [n for n in objects if n.endswith(".log")]
        return all(states.get(s["base_offset"], "gone") in ("DELETE_FINISHED", "gone")
                   for s in segs[:3]) and len(logs) == len(segs) - 3 and (
                   object_stems(objects) == {seg_stem(s) for s in segs[3:]})  # index etc. too
    wait_until(deleted, 10, "remote segments below the new log start deleted")
    assert time.monotonic() - t0 < 10  # not the (disabled) retention task
    states = {s["base_offset"]: s["state"] for s in store.manifest(topic, 0)["segments"]}
    for s in segs[3:]:
        assert states[s["base_offset"]] == "COPY_FINISHED"
    assert metric(admin_port, "strata_remote_segments_expired_total") == 3
    assert list_offsets(b.bootstrap, topic, -2, 1) == {0: new_start}
    # Consuming from the beginning starts at the new log start, bytes intact.
    got = kit.consume_confluent(b.bootstrap, topic, 1, timeout=120, start={0: new_start})
    kit.assert_same_records([r for r in recs if r.offset >= new_start], got,
                            contiguous_from=new_start)


def alter_tiered_topic(b, topic: str, **config) -> None:
    """AlterConfigs: tiered_topic's settings with `config` (dots as underscores) over them."""
    from confluent_kafka.admin import ConfigResource
    settings = {"remote.storage.enable": "true", "segment.bytes": str(SEGMENT),
                "local.retention.bytes": "1", "retention.ms": "-1"}
    settings.update({k.replace("_", "."): str(v) for k, v in config.items()})
    res = ConfigResource("topic", topic, set_config=settings)
    a = kit.admin(b.bootstrap)  # keep the client alive until the future resolves
    a.alter_configs([res])[res].result(30)


def wait_remote_segments(b, view: RemoteView, topic: str, live: list[dict], start: int):
    """Waits until `live` are the only COPY_FINISHED segments, every other object of the
    partition (manifest aside) is gone, and the log start is `start`."""
    def done():
        copied = [s["base_offset"] for s in view.manifest(topic, 0)["segments"]
                  if s["state"] == "COPY_FINISHED"]
        objects = view.objects(topic, 0)
        return (copied == [s["base_offset"] for s in live]
                and object_stems(objects) == {seg_stem(s) for s in live}
                and all(log_name(s) in objects for s in live)
                and list_offsets(b.bootstrap, topic, -2, 1) == {0: start})
    wait_until(done, 30, f"remote segments from {start} only")


def test_retention_deletes_remote_segments(broker_factory, store):
    b, admin_port = store_setup(broker_factory, store,
                                {"remote.log.manager.task.interval.ms": "300"})
    topic = tiered_topic(b)
    recs = kit.make_records(3000, 1, seed=41, tag="ret", value_size=1000, nulls=False)
    produce(b, topic, recs)
    segs = wait_all_tiered(b, store, topic, 1)[0]
    assert len(segs) >= 6
    active_base = segs[-1]["end_offset"] + 1
    active = b.partition_dir(topic, 0) / f"{active_base:020d}.log"

    # retention.bytes counts the remote segments plus the local bytes not in the store (the
    # active segment); the oldest go while the rest still reach it. A limit half a segment
    # below segs[3:] + active deletes exactly segs[:3], whatever a few bytes of accounting.
    keep = segs[3:]
    limit = sum(s["size"] for s in keep) + active.stat().st_size - keep[0]["size"] // 2
    alter_tiered_topic(b, topic, retention_bytes=limit)
    wait_remote_segments(b, store, topic, keep, keep[0]["base_offset"])
    assert metric(admin_port, "strata_remote_segments_expired_total") == 3

    # retention.ms: every record is from 2023, so every remote segment goes; the log start
    # moves to the active segment, which retention never deletes.
    alter_tiered_topic(b, topic, retention_ms=1000)
    wait_remote_segments(b, store, topic, [], active_base)
    assert metric(admin_port, "strata_remote_segments_expired_total") == len(segs)
    assert [int(f.stem) for f in b.partition_dir(topic, 0).glob("*.log")] == [active_base]
    got = kit.consume_confluent(b.bootstrap, topic, 1, timeout=120, start={0: active_base})
    kit.assert_same_records([r for r in recs if r.offset >= active_base], got,
                            contiguous_from=active_base)


def test_remote_storage_with_compaction_is_refused(broker_factory, tmp_path):
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic
    b, _, _ = tiered_setup(broker_factory, tmp_path)
    a = kit.admin(b.bootstrap)

    def create_error(config: dict):
        topic = kit.unique_topic("compact")
        fut = a.create_topics([NewTopic(topic, 1, 1, config=config)])[topic]
        with pytest.raises(KafkaException) as e:
            fut.result(30)
        return e.value.args[0]

    for policy in ("compact", "compact,delete", "delete,compact"):
        err = create_error({"remote.storage.enable": "true", "cleanup.policy": policy})
        assert err.code() == INVALID_CONFIG, err
        assert "remote.storage.enable" in err.str() and "compact" in err.str(), err.str()

    # AlterConfigs (whole set) and IncrementalAlterConfigs on a tiered topic.
    tiered = tiered_topic(b)
    res = ConfigResource("topic", tiered, set_config={
        "remote.storage.enable": "true", "cleanup.policy": "compact"})
    with pytest.raises(KafkaException) as e:
        a.alter_configs([res])[res].result(30)
    assert e.value.args[0].code() == INVALID_CONFIG
    res = ConfigResource("topic", tiered, incremental_configs=[
        ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.SET)])
    with pytest.raises(KafkaException) as e:
        a.incremental_alter_configs([res])[res].result(30)
    assert e.value.args[0].code() == INVALID_CONFIG
    # ... and turning tiering on for a compacted topic.
    compacted = kit.unique_topic("compacted")
    kit.create_topic(b.bootstrap, compacted, 1, config={"cleanup.policy": "compact"})
    res = ConfigResource("topic", compacted, incremental_configs=[
        ConfigEntry("remote.storage.enable", "true", incremental_operation=AlterConfigOpType.SET)])
    with pytest.raises(KafkaException) as e:
        a.incremental_alter_configs([res])[res].result(30)
    assert e.value.args[0].code() == INVALID_CONFIG
    # Nothing changed; allowed combinations still work.
    cfg = a.describe_configs([ConfigResource("topic", tiered)])
    entries = list(cfg.values())[0].result(30)
    assert entries["cleanup.policy"].value == "delete"
    ok = kit.unique_topic("ok")
    kit.create_topic(b.bootstrap, ok, 1, config={"remote.storage.enable": "false",
                                                 "cleanup.policy": "compact"})


# ---- topic deletion while the store is down ---------------------------------------------------

def test_topic_deleted_while_store_down_is_removed_remotely_later(broker_factory, tmp_path):
    """The remote directories of a topic deleted during an outage are recorded as pending (in
    the metadata store, so a restart keeps them) and removed once the store answers again."""
    b, remote, admin_port = tiered_setup(broker_factory, tmp_path,
                                         {"remote.log.manager.task.interval.ms": "300"})
    topic = tiered_topic(b, partitions=2)
    produce(b, topic, kit.make_records(3000, 2, seed=5, tag="del", value_size=1000, nulls=False))
    wait_all_tiered(b, FileView(remote), topic, 2)
    dirs = [remote_partition_dir(remote, topic, p) for p in range(2)]
    assert all(d.is_dir() for d in dirs)

    away = tmp_path / "remote-away"
    remote.rename(away)
    remote.write_text("store is down")
    t0 = time.monotonic()
    a = kit.admin(b.bootstrap)  # keep the client alive until the future resolves
    a.delete_topics([topic], operation_timeout=30)[topic].result(30)
    assert time.monotonic() - t0 < 5, "DeleteTopics must not wait for the remote store"
    wait_until(lambda: metric(admin_port, "strata_remote_pending_dir_deletions") == 2, 10,
               "two pending remote deletions")

    # A restart during the outage keeps them pending.
    b.stop()
    b.start()
    time.sleep(1.0)
    assert metric(admin_port, "strata_remote_pending_dir_deletions") == 2
    remote.unlink()
    away.rename(remote)
    assert all(d.is_dir() for d in dirs)
    wait_until(lambda: metric(admin_port, "strata_remote_pending_dir_deletions") == 0, 20,
               "pending remote deletions done")
    assert not any(d.exists() for d in dirs)


# ---- broker restarted while the store is down (file://; test_tiered_remote.py on HDFS and S3) 

def test_broker_restarted_while_store_down_keeps_old_offsets(broker_factory, tmp_path):
    b, remote, admin_port = tiered_setup(broker_factory, tmp_path)
    topic = tiered_topic(b)
    first = kit.make_records(1500, 1, seed=31, tag="before", value_size=1000, nulls=False)
    produce(b, topic, first)
    segs = wait_all_tiered(b, FileView(remote), topic, 1)[0]
    local_start = segs[-1]["end_offset"] + 1
    assert local_start > 0

    away = tmp_path / "remote-away"
    remote.rename(away)
    remote.write_text("store is down")
    during = kit.make_records(1500, 1, seed=32, tag="during", value_size=1000, nulls=False)
    produce(b, topic, during, acks="all")
    b.stop()
    b.start()
    # The remote log start comes from the metadata store: offset 0 still exists, and reading
    # it is a retriable storage error, not OFFSET_OUT_OF_RANGE.
    assert list_offsets(b.bootstrap, topic, -2, 1) == {0: 0}
    with rawkafka.Conn(b.bootstrap, timeout=30) as c:
        err, _ = fetch(c, topic, 0, 0, 1 << 20, cid=1)
        assert err == KAFKA_STORAGE_ERROR
        err, data = fetch(c, topic, 0, local_start, 1 << 20, cid=2)
        assert err == 0 and data  # local data is served
    # Nothing un-uploaded was deleted: every segment from the local start is still local.
    local = sorted(int(f.stem) for f in b.partition_dir(topic, 0).glob("*.log"))
    assert local[0] == local_start and len(local) > 1
    after = kit.make_records(500, 1, seed=33, tag="after", value_size=1000, nulls=False)
    produce(b, topic, after)

    remote.unlink()
    away.rename(remote)
    wait_all_tiered(b, FileView(remote), topic, 1)
    got = kit.consume_confluent(b.bootstrap, topic, 1, timeout=120)
    kit.assert_same_records(first + during + after, got)
