#!/usr/bin/env python3
"""Migration benchmark: how long, and how many bytes, moving one partition to another broker
takes, Strata (full copy and three tiered modes) against Apache Kafka (3-node KRaft, the version
of bench/kafka/pom.xml) with tiered storage (KIP-405 + KIP-1023) and without it, in the same run
on the same data.

    bench/migration.sh [--sizes 200,1024] [--modes kafka-tiered,kafka,strata-full,...]

For each size (MiB) and each mode, on a fresh 3-broker cluster (data under
bench/.work/migration-<ts>/<size>-<mode>/, deleted after):
1. topic `move`, 1 partition, replica assignment [[1]] (RF 1 on broker 1), segment.bytes
   --segment-mib (8 MiB), retention.ms -1; the tiered modes add remote.storage.enable=true and
   local.retention.bytes = 2 segments;
2. `size` MiB of incompressible 1 KiB records produced (confluent-kafka, acks=all, 1 MB
   batches; not measured); the tiered modes then wait for steady state: the remote log end
   within one segment of the log end and broker 1's local log down to its local retention
   (kafka-tiered: every rolled segment of broker 1 in the remote store, the history from
   offset 0 there, the local log down to its retention; a Kafka topic that does not tier
   fails the run);
3. sync + page-cache drop, then Kafka's own kafka-reassign-partitions (ReassignPartitionsCommand
   --execute) moves the partition from [1] to [2]; t0 is taken just before the tool starts;
4. Metadata is polled every 0.1 s until the partition's replicas == [2] and ISR == [2] (t1);
   seconds = t1 - t0; bytes copied = the .log files in broker 2's move-0 directory at t1.

Modes: kafka-tiered (Kafka with KIP-405 tiered storage, Kafka's LocalTieredStorage on a shared
directory as the RemoteStorageManager, and KIP-1023's follower.fetch.last.tiered.offset.enable:
what a Kafka operator would compare against), kafka (no tiered storage: a full copy),
strata-full (no remote storage: full copy), strata-local (tiered, `strata.replica.sync.enable=
false`: a KIP-405 follower without KIP-1023, copies the leader's local-retention window),
strata-active (tiered, `strata.replica.sync.roll.enable=false`: starts at the leader's active
segment base), strata-roll (tiered, defaults: the leader rolls when asked, the new replica copies
~nothing).

Writes bench/results/migration-<ts>.json and .md and appends the section to bench/RESULTS.md
(not with --no-record). See bench/README.md ("Migration").
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from harness import brokers, env, kafka_tiered, limits, procs  # noqa: E402

TOPIC = "move"
RECORD_SIZE = 1024
SOURCE, TARGET = 1, 2
POLL_S = 0.1
REASSIGN = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
MODES = ["kafka-tiered", "kafka", "strata-full", "strata-local", "strata-active", "strata-roll"]
KAFKA_MODES = {"kafka-tiered", "kafka"}
TIERED = {"kafka-tiered", "strata-local", "strata-active", "strata-roll"}
# Broker configs of each Strata mode on top of the cluster's (brokers.StrataCluster).
MODE_BROKER_CONFIG = {
    "strata-full": {},
    "strata-local": {"strata.replica.sync.enable": "false"},
    "strata-active": {"strata.replica.sync.roll.enable": "false"},
    "strata-roll": {},
}
MODE_TEXT = {
    "kafka-tiered": "Apache Kafka with tiered storage (KIP-405: Kafka's LocalTieredStorage as the "
                    "RemoteStorageManager on the shared directory, "
                    "TopicBasedRemoteLogMetadataManager) "
                    "and `follower.fetch.last.tiered.offset.enable=true` (KIP-1023: the new "
                    "replica starts at the leader's earliest offset not yet uploaded)",
    "kafka": "Apache Kafka, no tiered storage: full copy",
    "strata-full": "Strata, no remote storage: full copy",
    "strata-local": "Strata tiered, `strata.replica.sync.enable=false` (a KIP-405 follower "
                    "without KIP-1023: copies the leader's local log)",
    "strata-active": "Strata tiered, `strata.replica.sync.roll.enable=false` (starts at the "
                     "leader's active segment)",
    "strata-roll": "Strata tiered, defaults (the leader rolls; the new replica starts at its "
                   "log end)",
}
LOCAL_RETENTION_SEGMENTS = 2


def log(msg: str) -> None:
    print(f"[migration {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def dir_log_bytes(data_dir: Path) -> tuple[int, list[int]]:
    """Bytes of the partition's segment files (*.log) and their base offsets."""
    files = list((data_dir / f"{TOPIC}-0").glob("*.log"))
    total = 0
    for f in files:
        try:
            total += f.stat().st_size
        except FileNotFoundError:  # deleted by retention in between
            pass
    return total, sorted(int(f.stem) for f in files if f.stem.isdigit())


def strata_partition(b: brokers.Broker) -> dict | None:
    """Partition 0 of the topic as broker `b`'s admin API (GET /v1/topics) shows its replica."""
    url = f"http://{b.config['strata.admin.listener']}/v1/topics"
    with urllib.request.urlopen(url, timeout=10) as r:
        for t in json.load(r):
            if t["name"] == TOPIC:
                for p in t["partitions"]:
                    if p["partition"] == 0:
                        return p
    return None


class Run:
    """One size × mode on a fresh cluster."""

    def __init__(self, size_mib: int, mode: str, args, workdir: Path, kafka_lib: Path,
                 strata_bin: Path, log4j: Path, rsm_lib: Path | None = None):
        self.size_mib, self.mode, self.args = size_mib, mode, args
        self.workdir = workdir / f"{size_mib}-{mode}"
        self.kafka_lib, self.log4j = kafka_lib, log4j
        self.segment = args.segment_mib << 20
        self.remote = self.workdir / "remote"
        self.tiered = mode in TIERED
        self.kafka = mode in KAFKA_MODES
        self.admin = None
        self.log_end = -1
        if self.kafka:
            self.cluster: brokers.Cluster = brokers.KafkaCluster(self.workdir, kafka_lib, 3)
            if self.tiered:
                for b in self.cluster.nodes:
                    b.config.update(kafka_tiered.broker_config(self.remote, rsm_lib))
        else:
            self.cluster = brokers.StrataCluster(self.workdir, strata_bin, 3)
            for b in self.cluster.nodes:
                b.config["strata.admin.listener"] = f"127.0.0.1:{brokers.free_port()}"
                if self.tiered:
                    b.config.update({
                        "remote.log.storage.system.enable": "true",
                        "strata.remote.storage.uri": f"file://{self.remote}",
                        "remote.log.manager.task.interval.ms": "500",
                        # local.retention.* is applied by the retention pass (default 5 min)
                        "log.retention.check.interval.ms": "1000",
                    })
                b.config.update(MODE_BROKER_CONFIG[mode])
        self.topic_config = {"segment.bytes": str(self.segment), "retention.ms": "-1"}
        if self.tiered:
            self.topic_config.update({"remote.storage.enable": "true",
                                      "local.retention.bytes": str(LOCAL_RETENTION_SEGMENTS
                                                                   * self.segment)})
        self.r: dict = {"size_mib": size_mib, "mode": mode, "ok": False,
                        "topic_config": self.topic_config}

    # ---- steps ----

    def execute(self) -> dict:
        from confluent_kafka.admin import AdminClient
        r = self.r
        self.workdir.mkdir(parents=True, exist_ok=True)
        if self.tiered:
            self.remote.mkdir(parents=True, exist_ok=True)
        r["cluster_config"] = self.cluster.config
        log(f"{self.size_mib} MiB {self.mode}: starting a 3-broker cluster")
        self.cluster.start()
        r["commands"] = self.cluster.commands
        self.admin = AdminClient({"bootstrap.servers": self.cluster.bootstrap})
        self.create_topic()
        t = time.monotonic()
        self.produce()
        r["produce_s"] = round(time.monotonic() - t, 1)
        if self.tiered:
            (self.wait_steady_kafka if self.kafka else self.wait_steady)()
        b1, b2 = self.cluster.node(SOURCE), self.cluster.node(TARGET)
        r["log_end_offset"] = self.log_end
        r["source_log_bytes"], bases = dir_log_bytes(b1.data_dir)
        r["source_segments"] = len(bases)
        r["source_local_log_start"] = bases[0] if bases else None
        if not self.kafka:
            p = strata_partition(b1)
            r["source_partition_before"] = p
            if p and "remote_log_end_offset" in p:
                r["remote_log_end_offset"] = p["remote_log_end_offset"]
        self.cluster.check_alive("the produce")
        env.drop_page_cache(log)
        self.move(b2)
        self.cluster.check_alive("the move")
        if not self.kafka:
            try:
                r["target_partition_after"] = strata_partition(b2)
            except OSError as e:
                r["target_partition_after"] = str(e)
        r["ok"] = True
        return r

    def create_topic(self) -> None:
        from confluent_kafka.admin import NewTopic
        futures = self.admin.create_topics([NewTopic(TOPIC, 1, replica_assignment=[[SOURCE]],
                                                     config=self.topic_config)])
        futures[TOPIC].result(timeout=60)
        self.wait(lambda: self.partition_state() == ([SOURCE], [SOURCE], SOURCE), 60,
                  "the topic led by broker 1", self.partition_state)

    def partition_state(self) -> tuple[list[int], list[int], int]:
        """(replicas, ISR, leader) of partition 0 from Metadata (any broker)."""
        md = self.admin.list_topics(TOPIC, timeout=5)
        t = md.topics.get(TOPIC)
        if t is None or t.error is not None or 0 not in t.partitions:
            return [], [], -1
        p = t.partitions[0]
        return list(p.replicas), sorted(p.isrs), p.leader

    def produce(self) -> None:
        from confluent_kafka import Producer
        n = self.size_mib * (1 << 20) // RECORD_SIZE
        errors: list[str] = []
        last = [-1]  # the highest offset acknowledged: one partition, so log end = last + 1

        def on_delivery(err, msg):
            if err is not None:
                if len(errors) < 20:
                    errors.append(str(err))
            elif msg.offset() > last[0]:
                last[0] = msg.offset()
        p = Producer({"bootstrap.servers": self.cluster.bootstrap, "acks": "all",
                      "linger.ms": 20, "batch.size": 1000000, "compression.type": "none",
                      "queue.buffering.max.messages": 1000000,
                      "queue.buffering.max.kbytes": 512 * 1024})
        per_chunk = (1 << 20) // RECORD_SIZE
        chunk = b""
        log(f"{self.size_mib} MiB {self.mode}: producing {n:,} records of {RECORD_SIZE} B")
        for i in range(n):
            j = i % per_chunk
            if j == 0:
                chunk = os.urandom(1 << 20)  # random bytes: incompressible
            value = chunk[j * RECORD_SIZE:(j + 1) * RECORD_SIZE]
            while True:
                try:
                    p.produce(TOPIC, value, partition=0, on_delivery=on_delivery)
                    break
                except BufferError:
                    p.poll(0.05)
            if j == 0:
                p.poll(0)
        left = p.flush(600)
        if hasattr(p, "close"):
            p.close()
        del p  # no client left connected when the cluster stops
        if left or errors:
            raise RuntimeError(f"produce: {left} records not delivered; errors {errors[:5]}")
        # No consumer or ListOffsets client for the log end: a consumer with a group.id would
        # create __consumer_offsets (50 partitions, RF 3) just before the move.
        self.log_end = last[0] + 1
        if self.log_end != n:
            raise RuntimeError(f"produce: log end {self.log_end}, expected {n}")

    def wait_steady(self) -> None:
        """Tiered modes: remote log end within one segment of the log end, and broker 1's local
        log down to its local retention (plus the active segment), so the move starts from the
        state a tiered partition is in most of the time."""
        b1 = self.cluster.node(SOURCE)
        per_segment = self.segment // RECORD_SIZE  # records in a segment, an upper bound
        limit = (LOCAL_RETENTION_SEGMENTS + 1) * self.segment
        last = {}

        def steady() -> bool:
            p = strata_partition(b1)
            last["p"] = p
            if not p or "remote_log_end_offset" not in p:
                return False
            return (p["log_end_offset"] - 1 - p["remote_log_end_offset"] <= per_segment
                    and dir_log_bytes(b1.data_dir)[0] <= limit)
        t = time.monotonic()
        timeout = 300 + self.size_mib / 5
        self.wait(steady, timeout, "remote log end within a segment of the log end and the "
                  "local log at its retention", lambda: last.get("p"), interval=0.5)
        self.r["steady_wait_s"] = round(time.monotonic() - t, 1)
        p = last["p"]
        log(f"{self.size_mib} MiB {self.mode}: steady after {self.r['steady_wait_s']} s: log end "
            f"{p['log_end_offset']}, remote end {p['remote_log_end_offset']}, local log start "
            f"{p['log_start_offset']}, {p['size_bytes'] / 2**20:.1f} MiB local")

    def wait_steady_kafka(self) -> None:
        """kafka-tiered: the same steady state, read from the remote store's directory and
        broker 1's log dir: every rolled segment of broker 1 uploaded (so the remote log end is
        within one segment of the log end), the history from offset 0 in the store, and broker
        1's local log down to its local retention. Kafka uploads nothing, or keeps it all
        locally, when tiered storage is not in effect: the wait then times out and the run
        fails, so a kafka-tiered row is never a full copy in disguise. The local retention
        matters to Kafka: the new replica fetches from offset 0, and only when the leader
        answers that offset 0 is no longer local does KIP-1023 start it at the leader's
        earliest offset not yet uploaded; before that it copies the leader's local log."""
        b1 = self.cluster.node(SOURCE)
        limit = (LOCAL_RETENTION_SEGMENTS + 1) * self.segment
        last: dict = {}

        def steady() -> bool:
            remote = kafka_tiered.remote_segments(self.remote, TOPIC).get(0, {})
            st = kafka_tiered.tiering_state(b1.data_dir / f"{TOPIC}-0", remote)
            last["st"] = st
            return (st["remote_segments"] > 0 and st["remote_first_start"] == 0
                    and not st["rolled_not_uploaded"] and st["local_bytes"] <= limit)
        t = time.monotonic()
        timeout = 300 + self.size_mib / 5
        self.wait(steady, timeout, "Kafka's tiered storage to hold every rolled segment and the "
                  "local log at its retention", lambda: last.get("st"), interval=0.5)
        self.r["steady_wait_s"] = round(time.monotonic() - t, 1)
        st = last["st"]
        self.r["kafka_tiering_before"] = st
        log(f"{self.size_mib} MiB {self.mode}: steady after {self.r['steady_wait_s']} s: "
            f"{st['remote_segments']} segments ({st['remote_bytes'] / 2**20:.1f} MiB) in the "
            f"remote store from offset {st['remote_first_start']} to {st['remote_last_start']}; "
            f"broker 1 keeps {st['local_segments']} ({st['local_bytes'] / 2**20:.1f} MiB) from "
            f"offset {st['local_log_start']}, active segment at {st['active_base']}")

    def move(self, b2: brokers.Broker) -> None:
        r = self.r
        plan = self.workdir / "reassign.json"
        plan.write_text(json.dumps({"version": 1, "partitions": [
            {"topic": TOPIC, "partition": 0, "replicas": [TARGET], "log_dirs": ["any"]}]}))
        cmd = ["java", "-Xmx512m", f"-Dlog4j2.configurationFile={self.log4j}", "-cp",
               f"{self.kafka_lib}/*", REASSIGN, "--bootstrap-server", self.cluster.bootstrap,
               "--reassignment-json-file", str(plan), "--execute"]
        r["reassign_command"] = cmd
        tool_log = self.workdir / "reassign.log"
        timeout = 300 + self.size_mib / 5
        log(f"{self.size_mib} MiB {self.mode}: moving partition 0 from [{SOURCE}] to [{TARGET}] "
            f"(log end {r['log_end_offset']:,}, broker 1 holds "
            f"{r['source_log_bytes'] / 2**20:.1f} MiB)")
        t0 = time.monotonic()
        tool = procs.spawn(cmd, tool_log, cwd=self.workdir)
        tool_end = t1 = None
        state = None
        while True:
            if tool_end is None and tool.poll() is not None:
                tool_end = time.monotonic()
                procs.stop(tool)  # reaped; forgets it
            try:
                state = self.partition_state()
            except Exception as e:  # noqa: BLE001 (KafkaException: a broker busy or moving)
                state = str(e)
            if isinstance(state, tuple) and state[0] == [TARGET] and state[1] == [TARGET]:
                t1 = time.monotonic()
                r["bytes_copied"], bases = dir_log_bytes(b2.data_dir)
                r["target_segments"] = len(bases)
                r["target_log_start"] = bases[0] if bases else None
                break
            if time.monotonic() - t0 > timeout:
                break
            if tool_end is not None and tool.returncode != 0:
                break
            time.sleep(POLL_S)
        if tool_end is None:
            try:
                tool.wait(120)
            except subprocess.TimeoutExpired:
                pass
            tool_end = time.monotonic()
            procs.stop(tool, grace=5)
        r["tool_exit"] = tool.returncode
        r["tool_s"] = round(tool_end - t0, 3)
        out = tool_log.read_text(errors="replace")
        r["tool_output_tail"] = out[-1500:]
        if tool.returncode != 0 or "Successfully started partition reassignment" not in out:
            raise RuntimeError(f"kafka-reassign-partitions failed (exit {tool.returncode}): "
                               f"{out[-800:]}")
        if t1 is None:
            raise RuntimeError(f"the move did not complete within {timeout:.0f} s: {state}")
        r["seconds"] = round(t1 - t0, 3)
        r["after_tool_s"] = round(t1 - tool_end, 3)
        log(f"{self.size_mib} MiB {self.mode}: moved in {r['seconds']:.2f} s (tool "
            f"{r['tool_s']:.2f} s); broker 2 copied {r['bytes_copied'] / 2**20:.2f} MiB in "
            f"{r['target_segments']} segment(s) from offset {r['target_log_start']}")

    def wait(self, cond, timeout: float, what: str, detail=None, interval: float = 0.1) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if cond():
                    return
            except Exception:  # noqa: BLE001 (not up yet: KafkaException, OSError, ...)
                pass
            self.cluster.check_alive(f"the wait for {what}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}"
                                   + (f": {detail()}" if detail else ""))
            time.sleep(interval)

    def cleanup(self) -> None:
        """Every process of this cluster stopped, its data dirs and remote store removed; the
        logs stay (broker.log, reassign.log)."""
        log(f"{self.size_mib} MiB {self.mode}: stopping")
        self.admin = None  # its connections go before the brokers do
        try:
            self.cluster.stop()
        finally:
            self.cluster.wipe()
            shutil.rmtree(self.remote, ignore_errors=True)
        self.r["exit_codes"] = {f"broker {b.node_id}": b.exit_code for b in self.cluster.nodes}


# ---- report ---------------------------------------------------------------------------------

def _fmt(v, digits=1) -> str:
    return "n/a" if v is None else f"{v:,.{digits}f}"


def markdown(run: dict) -> str:
    cfg, m = run["config"], run["machine"]
    ts = run["started_utc"]
    other = run["other_load"]
    res = run["results"]
    get = {(x["size_mib"], x["mode"]): x for x in res}
    shared = other["mean_cores"] >= 0.2 or any(
        n in other["seen"] for n in ("cc1plus", "ninja", "ctest", "pytest"))
    seg = cfg["segment_mib"]
    dd = run.get("disk_write") or {}
    lines = [
        f"## {ts[:10]} {ts[11:16]} UTC — Migration: moving one partition to another broker, "
        f"Strata vs Apache Kafka {cfg['kafka_version']}"
        + (" with tiered storage (KIP-405, KIP-1023) and without" if "kafka-tiered" in cfg["modes"]
           else " without tiered storage") + f" (`{run['command']}`)",
        "",
        f"Command: `{run['command']}`, Strata {cfg['strata_version']}, `{cfg['strata_bin']}`. "
        f"Whole run: {run['elapsed_s'] / 60:.1f} min.",
        "",
        f"Machine: {m['cpu_model']}, {m['cores']} cores, {m['ram_gib']} GiB RAM, Linux "
        f"{m['kernel']}, data dirs and the file:// remote store on `{m['log_dir_fs']}`"
        + (f" (dd 256 MiB with fdatasync: {dd['mb_per_s']:.0f} MB/s)" if dd else "")
        + f"; load average {' '.join(run['loadavg_start'])} at the start, "
        f"{' '.join(run['loadavg_end'])} at the end. Processes outside this benchmark used "
        f"{other['mean_cores']:.2f} cores on average (peak {other['peak_cores']:.2f}; seen: "
        f"{', '.join(f'{k} {v}x' for k, v in list(other['seen'].items())[:8]) or 'nothing'})"
        + (" — **the machine was shared with other work**, so the figures are noisier than on an "
           "idle machine." if shared else "."),
        "",
        f"Each size × mode on a fresh 3-broker cluster (Kafka: 3 combined KRaft nodes, JVM "
        f"-Xmx1g; Strata: etcd + 3 brokers), all on 127.0.0.1. Topic `{TOPIC}`: 1 partition on "
        f"broker 1 only (RF 1), segment.bytes {seg} MiB, retention.ms -1; tiered modes add "
        f"remote.storage.enable=true, local.retention.bytes {LOCAL_RETENTION_SEGMENTS * seg} MiB "
        f"(2 segments), a remote store on a local directory shared by the brokers (Strata: "
        f"file://; Kafka: LocalTieredStorage's rsm.config.dir), "
        f"remote.log.manager.task.interval.ms 500, log.retention.check.interval.ms 1000. "
        f"Filled with incompressible {RECORD_SIZE} B "
        f"records (acks=all); tiered modes then wait until the remote log end is within one "
        f"segment of the log end and broker 1's local log is down to its retention. Page cache "
        f"synced and dropped, then `kafka-reassign-partitions --execute` (Kafka's "
        f"ReassignPartitionsCommand, for both systems) moves the partition from [1] to [2]. "
        f"**seconds** = from just before the tool starts to the first Metadata (polled every "
        f"{POLL_S} s) with replicas [2] and ISR [2]; **tool s** = the tool's own run time (a JVM "
        f"start, included in seconds); **s after the tool** = seconds minus tool s (negative "
        f"when the move was done before the JVM exited); **MiB copied** = the .log files of "
        f"broker 2's replica at that moment. **÷ Kafka tiered** and **÷ Kafka full copy** "
        f"compare a mode's seconds with those of `kafka-tiered` (Kafka with tiered storage: "
        f"what a Kafka operator would compare against) and of `kafka` (no tiered storage) in "
        f"the same run.",
        "",
        "Modes: " + "; ".join(f"`{k}`: {v}" for k, v in MODE_TEXT.items() if k in cfg["modes"])
        + ".",
    ]
    for size in cfg["sizes"]:
        def secs(mode):
            k = get.get((size, mode))
            return k.get("seconds") if k and k.get("ok") else None
        kt, kf = secs("kafka-tiered"), secs("kafka")

        def ratio(x, ks):
            return f"{x / ks:.2f}" if x is not None and ks else "n/a"
        lines += ["", f"### {size} MiB", "",
                  "| mode | seconds | tool s | s after the tool | MiB copied | ÷ Kafka tiered | "
                  "÷ Kafka full copy | log end offset | broker 1 .log MiB before | broker 1 "
                  "local log start before | new replica's log start |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for mode in cfg["modes"]:
            x = get.get((size, mode))
            if not x:
                continue
            if not x.get("ok"):
                lines.append(f"| {mode} | failed: {str(x.get('error'))[:160]} |"
                             + " |" * 10)
                continue
            r_t = "" if mode == "kafka-tiered" else ratio(x["seconds"], kt)
            r_f = "" if mode == "kafka" else ratio(x["seconds"], kf)
            lines.append(
                f"| {mode} | {x['seconds']:.2f} | {x['tool_s']:.2f} | {x['after_tool_s']:.2f} | "
                f"{x['bytes_copied'] / 2**20:.2f} | {r_t} | {r_f} | {x['log_end_offset']:,} | "
                f"{x['source_log_bytes'] / 2**20:.1f} | "
                f"{_fmt(x.get('source_local_log_start'), 0)} | "
                f"{_fmt(x.get('target_log_start'), 0)} |")
    if len(cfg["sizes"]) > 1:
        lines += ["", "### Time independent of history", "",
                  "Per size: seconds (of which after the tool's JVM exited), MiB copied. The "
                  "full copies grow with the partition, the tiered modes should not.", "",
                  "| mode | " + " | ".join(f"{s} MiB" for s in cfg["sizes"]) + " |",
                  "|---|" + "---|" * len(cfg["sizes"])]
        for mode in cfg["modes"]:
            cells = []
            for s in cfg["sizes"]:
                x = get.get((s, mode))
                cells.append(f"{x['seconds']:.2f} s ({x['after_tool_s']:.2f}), "
                             f"{x['bytes_copied'] / 2**20:.1f} MiB"
                             if x and x.get("ok") else "n/a")
            lines.append(f"| {mode} | " + " | ".join(cells) + " |")
    lines += ["", "Caveats: the remote store is a local directory (Strata: file://; Kafka: "
              "LocalTieredStorage's directory) on the same disk, "
              "so an upload is a local file copy, not a network transfer; brokers talk over "
              "loopback on one machine, so a full copy is bound by the disk and the 2 shared "
              "cores, not by a network; the tool's JVM start (about a second or more here) is in "
              "every figure."]
    failed = [f"{x['size_mib']} MiB {x['mode']}: {str(x.get('error'))[:200]}"
              for x in res if not x.get("ok")]
    if failed:
        lines += ["", "Failed: " + "; ".join(failed)]
    lines += ["", f"Raw data: `{run['files']['json']}`.", ""]
    return "\n".join(lines)


# ---- main -----------------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="200,1024", help="partition sizes in MiB (default 200,1024)")
    ap.add_argument("--modes", default=",".join(MODES),
                    help=f"comma-separated subset of {','.join(MODES)} (default: all)")
    ap.add_argument("--segment-mib", type=int, default=8, help="segment.bytes in MiB (default 8)")
    ap.add_argument("--strata-bin", default=os.environ.get("STRATA_BIN", str(REPO / "build/strata")))
    ap.add_argument("--kafka-lib", help="directory with Apache Kafka's jars")
    ap.add_argument("--workdir", help="where data dirs and logs go (default bench/.work/migration-<ts>)")
    ap.add_argument("--no-record", action="store_true", help="do not append to bench/RESULTS.md")
    args = ap.parse_args()

    sizes = [int(s) for s in args.sizes.split(",") if s]
    modes = [m for m in args.modes.split(",") if m]
    bad = [m for m in modes if m not in MODES]
    if bad or not modes or not sizes:
        log(f"unknown modes {bad} (known: {MODES})" if bad else "no sizes or modes")
        return 2
    modes = [m for m in MODES if m in modes]
    started = datetime.datetime.now(datetime.timezone.utc)
    ts = started.strftime("%Y%m%dT%H%M%SZ")
    workdir = Path(args.workdir) if args.workdir else BENCH / ".work" / f"migration-{ts}"
    strata_bin = Path(args.strata_bin).resolve()
    kafka_lib = env.find_kafka_lib(args.kafka_lib, log)
    rsm_lib = env.find_rsm_lib()
    if "kafka-tiered" in modes and rsm_lib is None:
        log("Kafka's LocalTieredStorage not found in bench/.deps/kafka-rsm (run bench/setup.sh)")
        return 2
    if any(m not in KAFKA_MODES for m in modes):
        if not strata_bin.exists():
            log(f"no Strata binary at {strata_bin}")
            return 2
        if not shutil.which("etcd"):
            log("etcd not found")
            return 2
    if kafka_lib is None:  # the reassignment tool is Kafka's, for both systems
        log("Apache Kafka jars not found (run bench/setup.sh, or pass --kafka-lib)")
        return 2
    if not shutil.which("java"):
        log("java not found")
        return 2

    def on_term(signum, _frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, on_term)

    command = f"bench/migration.sh --sizes {','.join(map(str, sizes))}"
    if modes != MODES:
        command += f" --modes {','.join(modes)}"
    if args.segment_mib != 8:
        command += f" --segment-mib {args.segment_mib}"
    workdir.mkdir(parents=True, exist_ok=True)
    # One cluster at a time: the source, the new replica and (tiered) the remote copy.
    need = 3.3 * (max(sizes) << 20) + (2 << 30)
    if shutil.disk_usage(workdir).free < need:
        log(f"not enough disk space in {workdir}: need {need / 1e9:.1f} GB")
        return 2
    log(f"sizes {sizes} MiB; modes {modes}; work dir {workdir}; load average {limits.loadavg()}")
    other = limits.OtherLoad()
    t_start = time.time()
    log4j = workdir / "tools-log4j2.properties"
    log4j.write_text(brokers.LOG4J2)
    # Every Strata run uses this copy: a rebuild of build/strata during the run changes nothing.
    run_bin = workdir / "strata"
    bin_sha256 = None
    if any(m not in KAFKA_MODES for m in modes):
        shutil.copy2(strata_bin, run_bin)
        bin_sha256 = hashlib.sha256(run_bin.read_bytes()).hexdigest()
    import confluent_kafka
    out_json = BENCH / "results" / f"migration-{ts}.json"
    out_md = out_json.with_suffix(".md")
    run = {"kind": "migration", "command": command,
           "started_utc": started.strftime("%Y-%m-%d %H:%M:%S"),
           "config": {"sizes": sizes, "modes": modes, "segment_mib": args.segment_mib,
                      "record_size": RECORD_SIZE,
                      "local_retention_segments": LOCAL_RETENTION_SEGMENTS,
                      "mode_broker_config": MODE_BROKER_CONFIG, "poll_s": POLL_S,
                      "strata_bin": str(strata_bin), "strata_bin_sha256": bin_sha256,
                      "kafka_lib": str(kafka_lib),
                      "kafka_rsm": (sorted(p.name for p in rsm_lib.glob("*.jar"))
                                    if rsm_lib and "kafka-tiered" in modes else None),
                      "confluent_kafka_version": confluent_kafka.version()[0],
                      "librdkafka_client_version": confluent_kafka.libversion()[0],
                      **env.versions(kafka_lib, strata_bin)},
           "machine": limits.machine(workdir), "loadavg_start": limits.loadavg(),
           "results": [], "errors": [],
           "files": {"json": str(out_json.relative_to(REPO)), "md": str(out_md.relative_to(REPO))}}
    try:
        run["disk_write"] = limits.disk_write(workdir, 256)
    except (RuntimeError, OSError, subprocess.SubprocessError) as e:
        run["disk_write"] = None
        log(f"dd failed: {e}")
    try:
        for size in sizes:
            for mode in modes:
                one = Run(size, mode, args, workdir, kafka_lib, run_bin, log4j, rsm_lib)
                try:
                    one.execute()
                except Exception as e:  # noqa: BLE001 (recorded; the next run goes on)
                    one.r["error"] = f"{type(e).__name__}: {e}"
                    log(f"{size} MiB {mode}: FAILED: {one.r['error'][:600]}")
                finally:
                    one.cleanup()
                run["results"].append(one.r)
    finally:
        procs.kill_all()
        run_bin.unlink(missing_ok=True)
    run["elapsed_s"] = round(time.time() - t_start, 1)
    run["loadavg_end"] = limits.loadavg()
    run["other_load"] = other.summary()
    md = markdown(run)
    out_json.parent.mkdir(parents=True, exist_ok=True)
    out_json.write_text(json.dumps(run, indent=1, default=str) + "\n")
    out_md.write_text(md)
    print("\n" + md)
    if not args.no_record:
        with open(BENCH / "RESULTS.md", "a") as f:
            f.write("\n" + md)
        log("appended to bench/RESULTS.md")
    log(f"done in {run['elapsed_s'] / 60:.1f} min; {out_json}, {out_md}; logs in {workdir}")
    return 1 if any(not x.get("ok") for x in run["results"]) else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        procs.kill_all()
