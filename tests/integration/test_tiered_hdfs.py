"""Tiered storage against a real HDFS (MiniDFSCluster over WebHDFS, tests/hdfs/hdfs_fixture.py).

Rolled segments go to HDFS and are read back for a consumer from offset 0; while HDFS is down
(kill -9) produce goes on, nothing un-uploaded leaves local disk, and once HDFS is back the
uploads resume in order. Skipped when the MiniHdfs jar is not built (tests/hdfs/build.sh).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

import kit
from test_tiered_localfs import list_offsets, wait_until

HDFS_DIR = Path(__file__).resolve().parents[1] / "hdfs"
sys.path.insert(0, str(HDFS_DIR))
from hdfs_fixture import MiniHdfs  # noqa: E402

pytestmark = [
    pytest.mark.skipif(kit.against_kafka(), reason="Strata-specific remote storage"),
    pytest.mark.skipif(not (HDFS_DIR / "target" / "strata-minihdfs.jar").exists(),
                       reason="MiniHdfs not built (tests/hdfs/build.sh)"),
]

PARTITIONS = 2
SEGMENT = 1024 * 1024


@pytest.fixture
def hdfs(tmp_path):
    h = MiniHdfs(tmp_path / "hdfs")
    h.start(format=True)
    yield h
    h.stop()


def all_tiered(b, topic: str):
    """True once every rolled segment is in HDFS: remote end + 1 == the active segment base."""
    tiered = list_offsets(b.bootstrap, topic, -5, PARTITIONS)
    for p in range(PARTITIONS):
        logs = sorted(int(f.stem) for f in b.partition_dir(topic, p).glob("*.log"))
        if tiered[p] < 0 or tiered[p] + 1 != logs[-1]:
            return False
    return tiered


def test_tiered_hdfs_upload_outage_and_resume(broker_factory, hdfs):
    b = broker_factory(config={
        "remote.log.storage.system.enable": "true",
        "strata.remote.storage.uri": hdfs.webhdfs_uri("/strata"),
        "log.retention.check.interval.ms": "300",
    })
    topic = kit.unique_topic("tiered-hdfs")
    kit.create_topic(b.bootstrap, topic, PARTITIONS, config={
        "remote.storage.enable": "true", "segment.bytes": str(SEGMENT),
        "local.retention.bytes": str(SEGMENT), "retention.ms": "-1"})
    recs = kit.make_records(6000, PARTITIONS, seed=7, tag="hdfs", value_size=2000)
    kit.produce_confluent(b.bootstrap, topic, recs)
    wait_until(lambda: all_tiered(b, topic), 120, "uploads to HDFS")
    local_start = wait_until(
        lambda: (s := list_offsets(b.bootstrap, topic, -4, PARTITIONS)) and all(
            s[p] > 0 for p in range(PARTITIONS)) and s, 30, "local retention")
    assert list_offsets(b.bootstrap, topic, -2, PARTITIONS) == {p: 0 for p in range(PARTITIONS)}
    got = kit.consume_confluent(b.bootstrap, topic, PARTITIONS, timeout=120)
    kit.assert_same_records(recs, got)

    # HDFS down: produce goes on, local retention must not drop un-uploaded segments.
    tiered_before = list_offsets(b.bootstrap, topic, -5, PARTITIONS)
    hdfs.kill9()
    more = kit.make_records(4000, PARTITIONS, seed=8, tag="hdfs2", value_size=2000)
    kit.produce_confluent(b.bootstrap, topic, more)
    time.sleep(3)
    assert list_offsets(b.bootstrap, topic, -5, PARTITIONS) == tiered_before
    for p in range(PARTITIONS):
        logs = sorted(int(f.stem) for f in b.partition_dir(topic, p).glob("*.log"))
        assert logs[0] <= tiered_before[p] + 1, f"partition {p}: un-uploaded segment deleted"

    # HDFS back: uploads resume and everything is readable from offset 0 again.
    hdfs.restart()
    wait_until(lambda: all_tiered(b, topic), 180, "uploads after the outage")
    got = kit.consume_confluent(b.bootstrap, topic, PARTITIONS, timeout=180)
    kit.assert_same_records(recs + more, got)
    assert list_offsets(b.bootstrap, topic, -4, PARTITIONS) != local_start
