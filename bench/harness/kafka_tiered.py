"""Apache Kafka with tiered storage (KIP-405) for the migration and replacement benchmarks, set up
as an operator would: the broker's RemoteLogManager with a RemoteStorageManager plugin loaded
through remote.log.storage.manager.class.path, Kafka's default remote log metadata manager
(TopicBasedRemoteLogMetadataManager, on the internal topic __remote_log_metadata), and
KIP-1023's follower.fetch.last.tiered.offset.enable, so that a new, empty replica starts at the
leader's earliest pending-upload offset instead of copying the leader's whole local log.

The plugin is Kafka's own LocalTieredStorage (kafka-storage's test artifact, fetched by
bench/kafka/pom.xml into bench/.deps/kafka-rsm: Maven Central serves no other
RemoteStorageManager), on a directory shared by the brokers, as Strata's tiered modes use a
shared file:// store. Its layout, read here to check that a topic really tiers:
<dir>/kafka-tiered-storage/<topic>-<partition>-<topic id>/<start offset, 20 digits>-<segment
id>.log (and the segment's indexes beside it); a retried upload leaves another segment id with
the same start offset.
"""
from __future__ import annotations

from pathlib import Path

RSM_CLASS = "org.apache.kafka.server.log.remote.storage.LocalTieredStorage"
ROOT_NAME = "kafka-tiered-storage"  # LocalTieredStorage's directory under rsm.config.dir
TOPIC_ID_CHARS = 22  # a topic id in URL-safe base64, which may itself contain '-'


def broker_config(remote_dir: Path, rsm_lib: Path, listener: str = "PLAINTEXT",
                  kip1023: bool = True) -> dict[str, str]:
    """Broker configs of a tiered Kafka node. The two intervals are the ones the benchmarks
    give Strata's tiered modes as well (Kafka's defaults: 30 s and 5 min)."""
    cfg = {
        "remote.log.storage.system.enable": "true",
        "remote.log.storage.manager.class.name": RSM_CLASS,
        # The plugin's jar, and the kafka-clients 4.3.1 class it links to that 4.4 moved
        # (bench/kafka/pom.xml); loaded child-first, the broker's own classes otherwise.
        "remote.log.storage.manager.class.path": f"{rsm_lib}/*:{rsm_lib}/classes",
        "rsm.config.dir": str(remote_dir),  # rsm.config. = remote.log.storage.manager.impl.prefix
        # TopicBasedRemoteLogMetadataManager (the default) reaches the brokers on this listener.
        "remote.log.metadata.manager.listener.name": listener,
        "remote.log.manager.task.interval.ms": "500",
        # local.retention.* is applied by the retention pass (default every 5 min)
        "log.retention.check.interval.ms": "1000",
    }
    if kip1023:
        cfg["follower.fetch.last.tiered.offset.enable"] = "true"
    return cfg


def remote_segments(remote_dir: Path, topic: str) -> dict[int, dict[int, int]]:
    """{partition: {start offset: bytes of its .log}} of the topic's segments in the store (one
    entry per start offset: of a retried upload, the largest copy)."""
    out: dict[int, dict[int, int]] = {}
    root = remote_dir / ROOT_NAME
    if not root.is_dir():
        return out
    for d in root.iterdir():
        name = d.name
        if len(name) <= TOPIC_ID_CHARS + 1 or name[-TOPIC_ID_CHARS - 1] != "-":
            continue
        head = name[:-TOPIC_ID_CHARS - 1]
        t, _, p = head.rpartition("-")
        if t != topic or not p.isdigit():
            continue
        segs = out.setdefault(int(p), {})
        try:
            files = list(d.glob("*.log"))
        except OSError:
            continue
        for f in files:
            off = f.name[:20]
            if not off.isdigit():
                continue
            try:
                size = f.stat().st_size
            except FileNotFoundError:
                continue
            segs[int(off)] = max(size, segs.get(int(off), 0))
    return out


def local_segments(partition_dir: Path) -> dict[int, int]:
    """{base offset: bytes} of the .log files in one replica's partition directory."""
    out = {}
    for f in partition_dir.glob("*.log"):
        if f.stem.isdigit():
            try:
                out[int(f.stem)] = f.stat().st_size
            except FileNotFoundError:  # deleted by retention in between
                pass
    return out


def tiering_state(leader_partition_dir: Path, remote: dict[int, int]) -> dict:
    """How far one partition has tiered, from its leader's local segments and the store's:
    every rolled local segment uploaded (all but the active one, the highest base offset), the
    whole history in the store (a remote segment at the local log start's left, down to 0)."""
    local = local_segments(leader_partition_dir)
    bases = sorted(local)
    active = bases[-1] if bases else None
    rolled = bases[:-1]
    missing = [b for b in rolled if b not in remote]
    return {
        "local_segments": len(bases), "local_bytes": sum(local.values()),
        "local_log_start": bases[0] if bases else None, "active_base": active,
        "remote_segments": len(remote), "remote_bytes": sum(remote.values()),
        "remote_first_start": min(remote) if remote else None,
        "remote_last_start": max(remote) if remote else None,
        "rolled_not_uploaded": missing,
    }
