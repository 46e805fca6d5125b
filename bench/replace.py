#!/usr/bin/env python3
"""Machine replacement benchmark (the seed's scenario): a broker holding every replica of a
many-partition topic is replaced by an empty one with the same node id; how long until every
replica is back in the ISR, and how many bytes the new broker copied. Apache Kafka (3-node
KRaft, the version of bench/kafka/pom.xml) with tiered storage (KIP-405 + KIP-1023) and without
it (a full copy) against Strata (tiered, defaults) in the same run on the same data.

    bench/replace.sh [--partitions 100] [--total-mib 10240] [--modes kafka-tiered,kafka,strata-roll]

For each mode, on a fresh 3-broker cluster (data under bench/.work/replace-<ts>/<mode>/):
1. topic `replace`, --partitions partitions at RF 3 (every broker holds every partition;
   leaders rotate over the brokers), segment.bytes --segment-mib (8 MiB), retention.ms -1,
   min.insync.replicas 1; the tiered modes add remote.storage.enable=true and
   local.retention.bytes = 2 segments;
2. --total-mib MiB of 1 KiB records produced by `strata bench produce` (librdkafka, acks=all,
   no compression), spread over the partitions by librdkafka's partitioner; the tiered modes
   then wait until every partition's remote log end is within one segment of its log end
   (kafka-tiered: every rolled segment of each partition's leader in the remote store, the
   history from offset 0 there; a Kafka topic that does not tier fails the run);
3. broker 3 is stopped (SIGTERM), its data directory deleted (Kafka's is formatted again with
   the cluster id: `kafka-storage format`, the operator's step), page cache synced and dropped,
   and it is started again with the same node id; t0 is taken just before the start;
4. Metadata (from broker 1) is polled every 0.2 s until broker 3 is in the ISR of every
   partition (t1); seconds = t1 - t0; bytes copied = the topic's .log files on broker 3 at t1.

Modes: kafka-tiered (KIP-405 with Kafka's LocalTieredStorage on a shared directory, and
KIP-1023's follower.fetch.last.tiered.offset.enable=true); kafka (no tiered storage: full
copy); strata-full (no remote storage: full copy); strata-active
(`strata.replica.sync.roll.enable=false`); strata-roll (defaults).

Writes bench/results/replace-<ts>.json and .md and appends the section to bench/RESULTS.md
(not with --no-record). See bench/README.md ("Machine replacement").
"""
from __future__ import annotations

import argparse
import datetime
import json
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

from harness import brokers, env, kadmin, kafka_tiered, limits, procs  # noqa: E402

TOPIC = "replace"
RECORD_SIZE = 1024
REPLACED = 3
POLL_S = 0.2
MODES = ["kafka-tiered", "kafka", "strata-full", "strata-active", "strata-roll"]
KAFKA_MODES = {"kafka-tiered", "kafka"}
TIERED = {"kafka-tiered", "strata-active", "strata-roll"}
MODE_BROKER_CONFIG = {"strata-full": {}, "strata-active":
                      {"strata.replica.sync.roll.enable": "false"}, "strata-roll": {}}
MODE_TEXT = {
    "kafka-tiered": "Apache Kafka with tiered storage (KIP-405: Kafka's LocalTieredStorage as the "
                    "RemoteStorageManager on the shared directory, "
                    "TopicBasedRemoteLogMetadataManager) "
                    "and `follower.fetch.last.tiered.offset.enable=true` (KIP-1023: each new "
                    "replica starts at its leader's earliest offset not yet uploaded)",
    "kafka": "Apache Kafka, no tiered storage: full copy",
    "strata-full": "Strata, no remote storage: full copy",
    "strata-active": "Strata tiered, `strata.replica.sync.roll.enable=false` (each replica "
                     "starts at its leader's active segment)",
    "strata-roll": "Strata tiered, defaults (each leader rolls; the replica starts at its log end)",
}
LOCAL_RETENTION_SEGMENTS = 2


def log(msg: str) -> None:
    print(f"[replace {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def topic_log_bytes(data_dir: Path) -> tuple[int, int]:
    """(bytes, files) of the topic's segment files (*.log) under `data_dir`."""
    total = files = 0
    for f in data_dir.glob(f"{TOPIC}-*/*.log"):
        try:
            total += f.stat().st_size
            files += 1
        except FileNotFoundError:  # deleted by retention in between
            pass
    return total, files


class Run:
    """One mode on a fresh cluster."""

    def __init__(self, mode: str, args, workdir: Path, kafka_lib: Path, strata_bin: Path,
                 rsm_lib: Path | None = None):
        self.mode, self.args = mode, args
        self.workdir = workdir / mode
        self.segment = args.segment_mib << 20
        self.remote = self.workdir / "remote"
        self.tiered = mode in TIERED
        self.strata_bin = strata_bin
        self.kafka = mode in KAFKA_MODES
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
                        "log.retention.check.interval.ms": "1000",
                    })
                b.config.update(MODE_BROKER_CONFIG[mode])
        self.topic_config = {"segment.bytes": str(self.segment), "retention.ms": "-1",
                             "min.insync.replicas": "1"}
        if self.tiered:
            self.topic_config.update({"remote.storage.enable": "true",
                                      "local.retention.bytes": str(LOCAL_RETENTION_SEGMENTS
                                                                   * self.segment)})
        self.r: dict = {"mode": mode, "ok": False, "topic_config": self.topic_config}

    def execute(self) -> dict:
        r = self.r
        self.workdir.mkdir(parents=True, exist_ok=True)
        if self.tiered:
            self.remote.mkdir(parents=True, exist_ok=True)
        r["cluster_config"] = self.cluster.config
        log(f"{self.mode}: starting a 3-broker cluster")
        self.cluster.start()
        r["commands"] = self.cluster.commands
        n = self.args.partitions
        assignment = [[(p + i) % 3 + 1 for i in range(3)] for p in range(n)]
        from confluent_kafka.admin import AdminClient, NewTopic
        admin = AdminClient({"bootstrap.servers": self.cluster.bootstrap})
        admin.create_topics([NewTopic(TOPIC, n, replica_assignment=assignment,
                                      config=self.topic_config)])[TOPIC].result(timeout=120)
        del admin
        self.wait(lambda: len(self.in_isr(3)) == n, 120, "the topic's ISRs full")
        t = time.monotonic()
        self.produce()
        r["produce_s"] = round(time.monotonic() - t, 1)
        if self.tiered:
            (self.wait_uploaded_kafka if self.kafka else self.wait_uploaded)()
        b3 = self.cluster.node(REPLACED)
        r["replaced_log_bytes_before"], r["replaced_segments_before"] = topic_log_bytes(
            b3.data_dir)
        self.cluster.check_alive("the produce")
        self.replace(b3)
        self.cluster.check_alive("the replacement")
        r["ok"] = True
        return r

    def produce(self) -> None:
        records = self.args.total_mib * (1 << 20) // RECORD_SIZE
        summary = self.workdir / "produce.json"
        cmd = [str(self.strata_bin), "bench", "produce", "--bootstrap", self.cluster.bootstrap,
               "--topic", TOPIC, "--records", str(records), "--record-size", str(RECORD_SIZE),
               "--acks", "all", "--compression", "none", "--json", str(summary)]
        log(f"{self.mode}: producing {records:,} records of {RECORD_SIZE} B over "
            f"{self.args.partitions} partitions")
        rc, out = procs.run_logged(cmd, self.workdir / "produce.log", 3600)
        if rc != 0:
            raise RuntimeError(f"strata bench produce failed ({rc}): {out[-1500:]}")
        self.r["produce"] = json.loads(summary.read_text())

    def partitions_json(self, b: brokers.Broker) -> list[dict]:
        url = f"http://{b.config['strata.admin.listener']}/v1/topics"
        with urllib.request.urlopen(url, timeout=10) as resp:
            for t in json.load(resp):
                if t["name"] == TOPIC:
                    return t["partitions"]
        return []

    def local_limit(self) -> int:
        """A leader's local log once local retention has run: local.retention.bytes (whole
        segments) plus the active segment."""
        return (LOCAL_RETENTION_SEGMENTS + 1) * self.segment

    def wait_uploaded(self) -> None:
        """Tiered modes: on its leader, every partition's remote log end within one segment of
        its log end and its local log down to its local retention (the state a tiered partition
        is in most of the time)."""
        per_segment = self.segment // RECORD_SIZE
        behind: dict = {}

        def uploaded() -> bool:
            behind.clear()
            for b in self.cluster.nodes:
                for p in self.partitions_json(b):
                    if p["leader"] != b.node_id:
                        continue
                    lag = p["log_end_offset"] - 1 - p.get("remote_log_end_offset", -1)
                    local = sum(kafka_tiered.local_segments(
                        b.data_dir / f"{TOPIC}-{p['partition']}").values())
                    if lag > per_segment or local > self.local_limit():
                        behind[p["partition"]] = {"remote lag": lag, "local bytes": local}
            return not behind
        t = time.monotonic()
        self.wait(uploaded, 600 + self.args.total_mib / 5, "uploads within a segment of the "
                  "log end and the leaders' local logs at their retention",
                  lambda: dict(list(behind.items())[:10]), interval=1.0)
        self.r["upload_wait_s"] = round(time.monotonic() - t, 1)

    def wait_uploaded_kafka(self) -> None:
        """kafka-tiered: the same state, read from the remote store's directory and each
        leader's log dir: every rolled segment of every partition's leader uploaded (so each
        remote log end is within one segment of its log end), each partition's history from
        offset 0 in the store, and each leader's local log down to its local retention. The
        last matters to Kafka: a new follower fetches from offset 0, and only when its leader
        answers that offset 0 is no longer local does KIP-1023 start it at the leader's earliest
        offset not yet uploaded; while the leader still holds offset 0 the follower copies the
        leader's local log. A topic that does not tier times out here and fails the run."""
        n = self.args.partitions
        behind: dict = {}
        last: dict = {}

        def uploaded() -> bool:
            behind.clear()
            md = kadmin.metadata(self.cluster.node(1).bootstrap, [TOPIC])["partitions"][TOPIC]
            remote = kafka_tiered.remote_segments(self.remote, TOPIC)
            states = {}
            for p in range(n):
                leader = md[p]["leader"]
                if leader < 1:
                    behind[p] = "no leader"
                    continue
                st = kafka_tiered.tiering_state(
                    self.cluster.node(leader).data_dir / f"{TOPIC}-{p}", remote.get(p, {}))
                states[p] = st
                if st["rolled_not_uploaded"] or (st["local_segments"] > 1
                                                 and st["remote_first_start"] != 0):
                    behind[p] = st["rolled_not_uploaded"][:3] or "offset 0 not in the store"
                elif st["local_bytes"] > self.local_limit():
                    behind[p] = f"{st['local_bytes']} B local"
            last["states"] = states
            return not behind
        t = time.monotonic()
        self.wait(uploaded, 600 + self.args.total_mib / 5, "Kafka's tiered storage to hold "
                  "every rolled segment and the leaders' local logs at their retention",
                  lambda: dict(list(behind.items())[:10]), interval=1.0)
        self.r["upload_wait_s"] = round(time.monotonic() - t, 1)
        states = last["states"].values()
        self.r["kafka_tiering_before"] = {
            "remote_segments": sum(s["remote_segments"] for s in states),
            "remote_bytes": sum(s["remote_bytes"] for s in states),
            "leaders_local_bytes": sum(s["local_bytes"] for s in states),
            "partitions_with_remote_segments": sum(1 for s in states if s["remote_segments"])}
        tb = self.r["kafka_tiering_before"]
        if not tb["remote_segments"]:
            raise RuntimeError("kafka-tiered: no segment reached the remote store (is --total-mib "
                               "more than a segment per partition?)")
        log(f"{self.mode}: uploads caught up after {self.r['upload_wait_s']} s: "
            f"{tb['remote_segments']} segments ({tb['remote_bytes'] / 2**20:.0f} MiB) in the "
            f"remote store, from {tb['partitions_with_remote_segments']} of {n} partitions")

    def in_isr(self, node: int) -> list[int]:
        md = kadmin.metadata(self.cluster.node(1).bootstrap, [TOPIC])
        parts = md["partitions"].get(TOPIC, {})
        return [p for p, s in parts.items() if s["error"] == 0 and node in s["isr"]]

    def replace(self, b3: brokers.Broker) -> None:
        r, n = self.r, self.args.partitions
        log(f"{self.mode}: stopping broker {REPLACED} ({r['replaced_log_bytes_before'] / 2**30:.2f}"
            f" GiB of the topic's segments on it) and deleting its data directory")
        b3.stop()
        b3.wipe()
        env.drop_page_cache(log)
        t0 = time.monotonic()
        b3.launch(fresh=True)  # Kafka: kafka-storage format with the cluster id first
        t_ready = None
        seen: list = []
        deadline = t0 + 600 + self.args.total_mib / 5
        while True:
            if t_ready is None and b3.running:
                try:
                    kadmin.wait_ready(b3.bootstrap, 0.5)
                    t_ready = time.monotonic()
                except Exception:  # noqa: BLE001 (not up yet)
                    pass
            try:
                seen = self.in_isr(REPLACED)
            except Exception as e:  # noqa: BLE001 (a broker busy)
                seen = [str(e)]
            if len(seen) == n and all(isinstance(p, int) for p in seen):
                break
            b3.check_alive("the replacement")
            if time.monotonic() > deadline:
                raise RuntimeError(f"broker {REPLACED} in {len(seen)} of {n} ISRs after "
                                   f"{time.monotonic() - t0:.0f} s")
            time.sleep(POLL_S)
        t1 = time.monotonic()
        r["seconds"] = round(t1 - t0, 2)
        r["ready_s"] = round(t_ready - t0, 2) if t_ready else None
        r["bytes_copied"], r["segments_copied"] = topic_log_bytes(b3.data_dir)
        self.replica_starts(b3)
        log(f"{self.mode}: broker {REPLACED} in every ISR {r['seconds']:.1f} s after its start "
            f"(serving after {r['ready_s']} s); copied {r['bytes_copied'] / 2**20:.1f} MiB; "
            f"{r['replicas_from_leader_active_segment']} of {n} new replicas started at their "
            f"leader's active segment or later")

    def replica_starts(self, b3: brokers.Broker) -> None:
        """Where each new replica's log starts on broker 3, against its leader's local segments
        (both from the log dirs, right after the ISRs were full): shows per partition whether
        the replica skipped the tiered history (Strata's modes, Kafka's KIP-1023) or copied the
        leader's local log."""
        try:
            md = kadmin.metadata(self.cluster.node(1).bootstrap, [TOPIC])["partitions"][TOPIC]
        except Exception as e:  # noqa: BLE001 (recorded, not a failure of the run)
            self.r["replica_starts_error"] = str(e)
            md = {}
        out = {}
        for p in range(self.args.partitions):
            mine = kafka_tiered.local_segments(b3.data_dir / f"{TOPIC}-{p}")
            leader = md.get(p, {}).get("leader", -1)
            theirs = (kafka_tiered.local_segments(
                self.cluster.node(leader).data_dir / f"{TOPIC}-{p}") if leader > 0 else {})
            out[p] = {"replica_log_start": min(mine) if mine else None,
                      "replica_segments": len(mine), "leader": leader,
                      "leader_local_log_start": min(theirs) if theirs else None,
                      "leader_active_base": max(theirs) if theirs else None}
        self.r["replica_starts"] = out
        self.r["replicas_from_leader_active_segment"] = sum(
            1 for x in out.values() if x["replica_log_start"] is not None
            and x["leader_active_base"] is not None
            and x["replica_log_start"] >= x["leader_active_base"])

    def wait(self, cond, timeout: float, what: str, detail=None, interval: float = 0.2) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if cond():
                    return
            except Exception:  # noqa: BLE001 (not up yet)
                pass
            self.cluster.check_alive(f"the wait for {what}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}"
                                   + (f": {detail()}" if detail else ""))
            time.sleep(interval)

    def cleanup(self) -> None:
        log(f"{self.mode}: stopping")
        try:
            self.cluster.stop()
        finally:
            self.cluster.wipe()
            shutil.rmtree(self.remote, ignore_errors=True)
        self.r["exit_codes"] = {f"broker {b.node_id}": b.exit_code for b in self.cluster.nodes}


def markdown(run: dict) -> str:
    cfg, m, other = run["config"], run["machine"], run["other_load"]
    ts = run["started_utc"]
    get = {x["mode"]: x for x in run["results"]}

    def secs(mode):
        k = get.get(mode)
        return k.get("seconds") if k and k.get("ok") else None
    kt, kf = secs("kafka-tiered"), secs("kafka")

    def ratio(x, ks):
        return f"{x / ks:.3f}" if x is not None and ks else "n/a"
    lines = [
        f"## {ts[:10]} {ts[11:16]} UTC — Machine replacement: a broker with {cfg['partitions']} "
        f"partitions ({cfg['total_mib'] / 1024:.1f} GiB) replaced by an empty one, Strata vs "
        f"Apache Kafka {cfg['kafka_version']}"
        + (" with tiered storage (KIP-405, KIP-1023) and without" if "kafka-tiered" in cfg["modes"]
           else " without tiered storage"),
        "",
        f"Command: `{run['command']}`, Strata {cfg['strata_version']}. Whole run: "
        f"{run['elapsed_s'] / 60:.1f} min. Machine: {m['cpu_model']}, {m['cores']} cores, "
        f"{m['ram_gib']} GiB RAM; processes outside this benchmark used "
        f"{other['mean_cores']:.2f} cores on average (peak {other['peak_cores']:.2f}).",
        "",
        f"Each mode on a fresh 3-broker cluster on 127.0.0.1 (Kafka: 3 combined KRaft nodes; "
        f"Strata: etcd + 3 brokers). Topic `{TOPIC}`: {cfg['partitions']} partitions at RF 3 "
        f"(broker 3 holds every one), segment.bytes {cfg['segment_mib']} MiB, "
        f"{cfg['total_mib']} MiB of {RECORD_SIZE} B records (acks=all); tiered modes: "
        f"local.retention.bytes {LOCAL_RETENTION_SEGMENTS} segments, a remote store on a local "
        f"directory shared by the brokers (Strata: file://; Kafka: LocalTieredStorage's), "
        f"uploads caught up to within a segment and the leaders' local logs down to their "
        f"retention before the replacement. Broker 3 is stopped, "
        f"its data directory deleted (Kafka's formatted again), the page cache dropped, and it "
        f"is started with the same node id. **seconds** = from its start to the first Metadata "
        f"(polled every {POLL_S} s) with broker 3 in every ISR; **serving after** = when it "
        f"answered Metadata; **MiB copied** = the topic's .log files on broker 3 then; "
        f"**replicas from the leader's active segment** = new replicas whose log starts at their leader's active "
        f"segment or later (the tiered history skipped). "
        f"**÷ Kafka tiered** and **÷ Kafka full copy** compare a mode's seconds with those of "
        f"`kafka-tiered` (Kafka with tiered storage: what a Kafka operator would compare "
        f"against) and of `kafka` (no tiered storage) in the same run.",
        "",
        "| mode | seconds | serving after s | MiB copied | segment files | replicas from the "
        "leader's active segment | ÷ Kafka tiered | ÷ Kafka full copy | broker 3 held before "
        "(MiB) | produce s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for mode in cfg["modes"]:
        x = get.get(mode)
        if not x:
            continue
        if not x.get("ok"):
            lines.append(f"| {mode} | failed: {str(x.get('error'))[:160]} |" + " |" * 9)
            continue
        r_t = "" if mode == "kafka-tiered" else ratio(x["seconds"], kt)
        r_f = "" if mode == "kafka" else ratio(x["seconds"], kf)
        lines.append(
            f"| {mode} | {x['seconds']:.2f} | {x['ready_s']} | {x['bytes_copied'] / 2**20:.1f} | "
            f"{x['segments_copied']} | {x.get('replicas_from_leader_active_segment', 'n/a')} "
            f"of {cfg['partitions']} | {r_t} | {r_f} | "
            f"{x['replaced_log_bytes_before'] / 2**20:.0f} | {x['produce_s']} |")
    lines += ["", "Modes: " + "; ".join(f"`{k}`: {v}" for k, v in MODE_TEXT.items()
                                       if k in cfg["modes"]) + ".",
              "", "Caveats: one machine, loopback, 2 shared cores: a full copy is bound by the "
              "disk and the CPU, not a network; the remote store is a local directory; Kafka's "
              "figures include its JVM start and KRaft catch-up (kafka-tiered: and its remote "
              "log metadata manager reading __remote_log_metadata).",
              "", f"Raw data: `{run['files']['json']}`.", ""]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--total-mib", type=int, default=10240, help="history in all (default 10 GiB)")
    ap.add_argument("--modes", default="kafka-tiered,kafka,strata-roll",
                    help=f"comma-separated, of {MODES} (default kafka-tiered,kafka,strata-roll)")
    ap.add_argument("--segment-mib", type=int, default=8)
    ap.add_argument("--strata-bin", default=str(REPO / "build/strata"))
    ap.add_argument("--kafka-lib")
    ap.add_argument("--workdir")
    ap.add_argument("--no-record", action="store_true", help="do not append to bench/RESULTS.md")
    args = ap.parse_args()
    modes = [m for m in MODES if m in args.modes.split(",")]
    if not modes or set(args.modes.split(",")) - set(MODES):
        log(f"modes must be of {MODES}")
        return 2
    started = datetime.datetime.now(datetime.timezone.utc)
    ts = started.strftime("%Y%m%dT%H%M%SZ")
    workdir = Path(args.workdir) if args.workdir else BENCH / ".work" / f"replace-{ts}"
    kafka_lib = env.find_kafka_lib(args.kafka_lib, log)
    rsm_lib = env.find_rsm_lib()
    strata_bin = Path(args.strata_bin).resolve()
    if kafka_lib is None or not strata_bin.exists() or not shutil.which("etcd"):
        log("needs Kafka's jars (bench/setup.sh), build/strata and etcd")
        return 2
    if "kafka-tiered" in modes and rsm_lib is None:
        log("Kafka's LocalTieredStorage not found in bench/.deps/kafka-rsm (run bench/setup.sh)")
        return 2

    def on_term(signum, _frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, on_term)
    workdir.mkdir(parents=True, exist_ok=True)
    need = 3.3 * (args.total_mib << 20) + (2 << 30)
    if shutil.disk_usage(workdir).free < need:
        log(f"not enough disk space in {workdir}: need {need / 1e9:.1f} GB")
        return 2
    command = (f"bench/replace.sh --partitions {args.partitions} --total-mib {args.total_mib} "
               f"--modes {','.join(modes)}")
    run_bin = workdir / "strata"  # a rebuild during the run changes nothing
    shutil.copy2(strata_bin, run_bin)
    out_json = BENCH / "results" / f"replace-{ts}.json"
    run = {"kind": "replace", "command": command,
           "started_utc": started.strftime("%Y-%m-%d %H:%M:%S"),
           "config": {"partitions": args.partitions, "total_mib": args.total_mib, "modes": modes,
                      "segment_mib": args.segment_mib, "record_size": RECORD_SIZE,
                      "mode_broker_config": MODE_BROKER_CONFIG,
                      "kafka_rsm": (sorted(p.name for p in rsm_lib.glob("*.jar"))
                                    if rsm_lib and "kafka-tiered" in modes else None),
                      **env.versions(kafka_lib, strata_bin)},
           "machine": limits.machine(workdir), "results": [],
           "files": {"json": str(out_json.relative_to(REPO))}}
    log(f"{command}; work dir {workdir}; load average {limits.loadavg()}")
    other = limits.OtherLoad()
    t_start = time.time()
    try:
        for mode in modes:
            one = Run(mode, args, workdir, kafka_lib, run_bin, rsm_lib)
            try:
                one.execute()
            except Exception as e:  # noqa: BLE001 (recorded; the next mode goes on)
                one.r["error"] = f"{type(e).__name__}: {e}"
                log(f"{mode}: FAILED: {one.r['error'][:600]}")
            finally:
                one.cleanup()
            run["results"].append(one.r)
    finally:
        procs.kill_all()
        run_bin.unlink(missing_ok=True)
    run["elapsed_s"] = round(time.time() - t_start, 1)
    run["other_load"] = other.summary()
    md = markdown(run)
    out_json.parent.mkdir(parents=True, exist_ok=True)
    out_json.write_text(json.dumps(run, indent=1, default=str) + "\n")
    out_json.with_suffix(".md").write_text(md)
    print("\n" + md)
    if not args.no_record:
        with open(BENCH / "RESULTS.md", "a") as f:
            f.write("\n" + md)
        log("appended to bench/RESULTS.md")
    return 1 if any(not x.get("ok") for x in run["results"]) else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        procs.kill_all()
