"""Tiered storage (KIP-405) against the file:// remote backend.

A broker with remote.log.storage.system.enable=true uploads every rolled segment of a topic with
remote.storage.enable=true to strata.remote.storage.uri; local retention (local.retention.bytes)
then keeps only the tail on local disk, fetches below the local log start are served from remote
storage, ListOffsets -2/-4/-5 report log start / local log start / remote log end, and
retention.ms expires remote segments, moving the log start offset.
"""
from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path

import pytest

import kit
from kit import wait_until
import rawkafka

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata-specific remote storage layout")

PARTITIONS = 4
SEGMENT = 1024 * 1024


def list_offsets(bootstrap: str, topic: str, timestamp: int,
                 partitions: int = PARTITIONS) -> dict[int, int]:
    """ListOffsets v4 for every partition with `timestamp` (-2, -4, -5 ...) -> {partition: offset}."""
    w = rawkafka.Writer()
    w.i32(-1).i8(0)
    w.array([topic], lambda w2, t: w2.string(t).array(
        list(range(partitions)), lambda w3, p: w3.i32(p).i32(-1).i64(timestamp)))
    with rawkafka.Conn(bootstrap) as c:
        c.send(rawkafka.request(2, 4, 7, bytes(w.buf)))
        cid, body = c.recv_frame()
    assert cid == 7
    r = rawkafka.Reader(body)
    r.i32()  # throttle
    out = {}
    for _ in range(r.array_len()):
        r.string()
        for _ in range(r.array_len()):
            p, err, _ts, off, _epoch = r.i32(), r.i16(), r.i64(), r.i64(), r.i32()
            assert err == 0, f"ListOffsets({timestamp}) partition {p}: error {err}"
            out[p] = off
    return out


def remote_partition_dir(remote: Path, topic: str, p: int) -> Path:
    dirs = [d for d in remote.iterdir() if d.name.startswith(f"{topic}-{p}-")]
    assert len(dirs) == 1, f"remote dirs for {topic}-{p}: {dirs}"
    return dirs[0]


def manifest(remote: Path, topic: str, p: int) -> dict:
    return json.loads((remote_partition_dir(remote, topic, p) / "manifest.json").read_text())


def local_segments(broker, topic: str, p: int) -> list[int]:
    return sorted(int(f.stem) for f in broker.partition_dir(topic, p).glob("*.log"))


def metric(admin_port: int, name: str) -> float:
    text = urllib.request.urlopen(f"http://127.0.0.1:{admin_port}/metrics", timeout=10).read()
    for line in text.decode().splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"metric {name} not exported")


def test_tiered_localfs_upload_read_and_retention(broker_factory, tmp_path):
    remote = tmp_path / "remote"
    remote.mkdir()
    from ports import free_port
    admin_port = free_port()
    b = broker_factory(config={
        "strata.admin.listener": f"127.0.0.1:{admin_port}",
        "remote.log.storage.system.enable": "true",
        "strata.remote.storage.uri": f"file://{remote}",
        "remote.log.manager.task.interval.ms": "500",
        "log.retention.check.interval.ms": "300",
    })
    topic = kit.unique_topic("tiered")
    kit.create_topic(b.bootstrap, topic, PARTITIONS, config={
        "remote.storage.enable": "true", "segment.bytes": str(SEGMENT),
        "local.retention.bytes": str(2 * SEGMENT), "retention.ms": "-1"})

    # ~30 MiB over 4 partitions.
    recs = kit.make_records(30000, PARTITIONS, seed=405, tag="tiered", value_size=2000)
    kit.produce_confluent(b.bootstrap, topic, recs)
    end = {p: 1 + max(r.offset for r in recs if r.partition == p) for p in range(PARTITIONS)}

    # Every rolled segment reaches remote storage; local disk keeps only the tail.
    def all_uploaded():
        for p in range(PARTITIONS):
            m = manifest(remote, topic, p)
            finished = [s for s in m["segments"] if s["state"] == "COPY_FINISHED"]
            local = local_segments(b, topic, p)
            try:
                sizes = [(b.partition_dir(topic, p) / f"{o:020d}.log").stat().st_size
                         for o in local]
            except FileNotFoundError:  # local retention deleted one meanwhile
                return False
            # local.retention.bytes: what is left without the oldest is under the limit.
            if not finished or sum(sizes[1:]) >= 2 * SEGMENT:
                return False
            if finished[-1]["end_offset"] + 1 != local[-1] or finished[0]["base_offset"] != 0:
                return False
        return True
    wait_until(all_uploaded, 60, "uploads and local retention")

    sizes = []
    for p in range(PARTITIONS):
        m = manifest(remote, topic, p)
        segs = m["segments"]
        assert [s["state"] for s in segs] == ["COPY_FINISHED"] * len(segs)
        assert len(segs) >= 5, f"partition {p}: only {len(segs)} segments tiered"
        # Contiguous offsets; one object set per segment.
        for a, c in zip(segs, segs[1:]):
            assert a["end_offset"] + 1 == c["base_offset"]
        rdir = remote_partition_dir(remote, topic, p)
        logs = sorted(rdir.glob("*.log"))
        assert len(logs) == len(segs)
        for s in segs:
            obj = rdir / f"{s['base_offset']:020d}-{s['uuid']}.log"
            assert obj.stat().st_size == s["size"]
            assert (rdir / f"{s['base_offset']:020d}-{s['uuid']}.index").exists()
            assert (rdir / f"{s['base_offset']:020d}-{s['uuid']}.timeindex").exists()
            assert (rdir / f"{s['base_offset']:020d}-{s['uuid']}.epochs").exists()
        # Segments still on local disk are byte-identical to their remote copy.
        local_dir = b.partition_dir(topic, p)
        for s in segs:
            lf = local_dir / f"{s['base_offset']:020d}.log"
            if lf.exists():
                obj = rdir / f"{s['base_offset']:020d}-{s['uuid']}.log"
                assert lf.read_bytes() == obj.read_bytes()
        local_total = sum(f.stat().st_size for f in local_dir.glob("*.log"))
        assert local_total <= 3 * SEGMENT + 64 * 1024, f"partition {p}: {local_total} bytes local"
        sizes.append(sum(s["size"] for s in segs))

    # Metrics: every tiered segment counted, no upload lag left.
    assert metric(admin_port, "strata_remote_uploads_total") == sum(
        len(manifest(remote, topic, p)["segments"]) for p in range(PARTITIONS))
    assert metric(admin_port, "strata_remote_uploaded_bytes_total") == sum(sizes)
    assert metric(admin_port, "strata_remote_upload_lag_segments") == 0
    assert metric(admin_port, "strata_remote_breaker_state") == 0

    # ListOffsets: -2 log start (remote), -4 local log start, -5 remote log end.
    earliest = list_offsets(b.bootstrap, topic, -2)
    local_start = list_offsets(b.bootstrap, topic, -4)
    tiered_end = list_offsets(b.bootstrap, topic, -5)
    for p in range(PARTITIONS):
        m = manifest(remote, topic, p)
        assert earliest[p] == 0
        assert local_start[p] == local_segments(b, topic, p)[0] > 0
        assert tiered_end[p] == m["segments"][-1]["end_offset"]
        assert tiered_end[p] + 1 >= local_start[p]

    # A consumer from offset 0 gets every record, identical, at its exact offset.
    got = kit.consume_confluent(b.bootstrap, topic, PARTITIONS, timeout=120)
    kit.assert_same_records(recs, got)
    assert {p: len(got[p]) for p in got} == end

    # retention.ms now expires remote segments and moves the log start offset.
    a = kit.admin(b.bootstrap)
    from confluent_kafka.admin import ConfigResource
    res = ConfigResource("topic", topic, set_config={
        "remote.storage.enable": "true", "segment.bytes": str(SEGMENT),
        "local.retention.bytes": str(2 * SEGMENT), "retention.ms": "1000"})
    a.alter_configs([res])[res].result(30)

    # Every record is older than 1 s: every rolled segment is uploaded and then expires, and
    # the log start moves to the active segment, which retention never deletes.
    def expired():
        starts = list_offsets(b.bootstrap, topic, -2)
        for p in range(PARTITIONS):
            live = [s for s in manifest(remote, topic, p)["segments"]
                    if s["state"] == "COPY_FINISHED"]
            local = local_segments(b, topic, p)
            # Rolled segments still uploading keep the log start below the active segment.
            if live or len(local) != 1 or starts[p] != local[0] or starts[p] == 0:
                return False
        return starts
    starts = wait_until(expired, 60, "remote retention")
    assert list_offsets(b.bootstrap, topic, -4) == starts
    for p in range(PARTITIONS):
        rdir = remote_partition_dir(remote, topic, p)
        assert list(rdir.glob("*.log")) == []
    assert metric(admin_port, "strata_remote_segments_expired_total") == metric(
        admin_port, "strata_remote_uploads_total")
    # Consuming from the beginning now starts at the new log start.
    got = kit.consume_confluent(b.bootstrap, topic, PARTITIONS, timeout=120,
                                start={p: starts[p] for p in range(PARTITIONS)})
    for p in range(PARTITIONS):
        assert got[p][0].offset() == starts[p]


def test_remote_reads_in_flight_are_bounded(broker_factory, tmp_path):
    """strata.remote.fetch.max.bytes: several consumers catching up on remote-only data at once
    keep at most that many bytes of remote reads in flight; fetches beyond it wait for the others
    and every record still comes back exactly."""
    remote = tmp_path / "remote"
    remote.mkdir()
    from ports import free_port
    admin_port = free_port()
    b = broker_factory(config={
        "strata.admin.listener": f"127.0.0.1:{admin_port}",
        "remote.log.storage.system.enable": "true",
        "strata.remote.storage.uri": f"file://{remote}",
        "remote.log.manager.task.interval.ms": "500",
        "log.retention.check.interval.ms": "300",
        "strata.remote.fetch.max.bytes": str(256 * 1024),  # a quarter of one partition's fetch
        "strata.remote.cache.bytes": "0",  # every read goes to the store
        # Every store read takes 50 ms (test-only fault layer): the consumers' reads overlap.
        "strata.remote.fault.get.delay.ratio": "1",
        "strata.remote.fault.get.delay.ms": "50",
    })
    topic = kit.unique_topic("budget")
    kit.create_topic(b.bootstrap, topic, PARTITIONS, config={
        "remote.storage.enable": "true", "segment.bytes": str(SEGMENT),
        "local.retention.bytes": "1", "retention.ms": "-1"})
    recs = kit.make_records(8000, PARTITIONS, seed=406, tag="budget", value_size=2000)
    kit.produce_confluent(b.bootstrap, topic, recs)
    wait_until(lambda: all(list_offsets(b.bootstrap, topic, -4)[p] > 0 for p in range(PARTITIONS)),
               60, "local retention down to the remote data")

    import threading
    results: list = [None] * 3
    def consume(i: int) -> None:
        results[i] = kit.consume_confluent(b.bootstrap, topic, PARTITIONS, timeout=120)
    readers = [threading.Thread(target=consume, args=(i,)) for i in range(3)]
    for t in readers:
        t.start()
    for t in readers:
        t.join()
    for got in results:
        kit.assert_same_records(recs, got)
    assert metric(admin_port, "strata_remote_fetch_budget_waits_total") > 0
    assert metric(admin_port, "strata_remote_fetch_bytes_in_flight") == 0  # all released
