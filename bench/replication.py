#!/usr/bin/env python3
"""Replication benchmark: a 3-broker Strata cluster (one etcd + 3 brokers) and a 3-node Apache
Kafka KRaft cluster (the version of bench/kafka/pom.xml), one after the other in the same run,
both at RF=3 with min.insync.replicas=2 on the topics and their own defaults otherwise.

    bench/replication.sh [--quick]       (installs what is needed, then runs this)

Per system, on a fresh cluster each time (data under bench/.work/replication-<ts>/<system>/,
deleted after):
1. throughput: a warm-up, then ProducerPerformance (acks=all, 1 KiB JSON records drawn from a
   generated corpus with --payload-file) unthrottled into a fresh 16-partition topic, once per
   compression; then the same at a fixed rate (half of Kafka's unthrottled rate) for the latency
   percentiles. CPU time and peak RSS of every broker (and etcd) are sampled per workload.
2. failover: an idempotent acks=all producer (harness/ackprobe.py) writes continuously to a
   1-partition RF=3 topic; the partition leader is SIGKILLed --kills times; failover time = the
   first acknowledgement of a record sent after the kill minus the kill. The killed broker is
   restarted and must be back in the ISR before the next kill. Afterwards the partition is read
   back and every acknowledged record checked (lost, misplaced, duplicated); a lost or
   misplaced acknowledged record, or a read-back that could not check them all, fails the run
   (exit 1). Runs of it (--failover-variants): `defaults`, each system with its own defaults;
   `tuned`, both tuned to the same detection time (--detection-ms, default Strata's lease TTL):
   Kafka's broker.session.timeout.ms = it, broker.heartbeat.interval.ms = a third of it,
   against Strata's strata.etcd.lease.ttl.ms = it (renewed every third of it) with the liveness
   probe (strata.broker.liveness.probe.enable) on, and again with it off.
Appends a section to bench/RESULTS.md and writes bench/results/replication-<ts>.json.
See bench/README.md ("Replication benchmark").
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import signal
import statistics
import struct
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from harness import brokers, corpus, env, kadmin, limits, loadgen, procs, report  # noqa: E402

PARTITIONS = 16
RECORD_SIZE = 1024
RF = 3
TOPIC_CONFIGS = {"min.insync.replicas": "2"}
COMPRESSIONS = ["none", "lz4"]
SYSTEMS = ["kafka", "strata"]  # Kafka first: its unthrottled rates set the fixed rate
REACHED = 0.95  # a fixed-rate run holds the rate when it achieved this share of it
FAILOVER_TIMEOUT_S = 90  # no acknowledgement this long after a kill: failover did not complete
REJOIN_TIMEOUT_S = 180
LATENCY_MAX_BYTES = 2_000_000_000

MODES = {
    "full": dict(records=1_000_000, warmup=300_000, latency_s=30, latency_warmup_s=10, kills=10,
                 probe_rate=500,
                 steady_s=5, corpus_lines=20_000, idle_s=10),
    "quick": dict(records=200_000, warmup=50_000, latency_s=8, latency_warmup_s=3, kills=3,
                  probe_rate=500,
                  steady_s=3, corpus_lines=5_000, idle_s=5),
}


def log(msg: str) -> None:
    print(f"[replication {time.strftime('%H:%M:%S')}] {msg}", flush=True)


FAILOVER_VARIANTS = ["defaults", "tuned"]


def failover_runs(variants: list[str], systems: list[str], detection_ms: int) -> list[dict]:
    """The failover runs, in order: per variant, Kafka first. `settings` go on every broker of
    the run's cluster (on top of the system's defaults)."""
    runs = []
    if "defaults" in variants:
        runs += [
            {"system": "kafka", "variant": "defaults", "label": "Kafka, defaults",
             "settings": {}},
            {"system": "strata", "variant": "defaults", "label": "Strata, defaults",
             "settings": {}}]
    if "tuned" in variants:
        t = str(detection_ms)
        runs += [
            {"system": "kafka", "variant": "tuned", "label": f"Kafka, detection {t} ms",
             "settings": {"broker.session.timeout.ms": t,
                          "broker.heartbeat.interval.ms": str(detection_ms // 3)}},
            {"system": "strata", "variant": "tuned", "label": f"Strata, detection {t} ms, probe on",
             "settings": {"strata.etcd.lease.ttl.ms": t,
                          "strata.broker.liveness.probe.enable": "true"}},
            {"system": "strata", "variant": "tuned-noprobe",
             "label": f"Strata, detection {t} ms, probe off",
             "settings": {"strata.etcd.lease.ttl.ms": t,
                          "strata.broker.liveness.probe.enable": "false"}}]
    return [r for r in runs if r["system"] in systems]


def make_cluster(system: str, workdir: Path, kafka_lib: Path, strata_bin: Path,
                 settings: dict[str, str] | None = None) -> brokers.Cluster:
    c: brokers.Cluster = (brokers.KafkaCluster(workdir, kafka_lib, RF) if system == "kafka"
                          else brokers.StrataCluster(workdir, strata_bin, RF))
    for b in c.nodes:
        b.config.update(settings or {})
    return c


def log_bytes(cluster: brokers.Cluster, topic: str) -> dict[str, int]:
    """Bytes of the topic's segment files (*.log) in each broker's log dir."""
    out = {}
    for b in cluster.nodes:
        out[f"broker {b.node_id}"] = sum(f.stat().st_size for f in b.data_dir.glob(f"{topic}-*/*.log"))
    return out


class Throughput:
    """Phase 1 against one fresh cluster: warm-up, unthrottled produce per compression, then
    the fixed-rate runs. Appends one result dict per workload to `results`."""

    def __init__(self, plan: dict, gen: loadgen.KafkaPerf, payload: Path, results: list[dict],
                 idle: dict):
        self.plan, self.gen, self.payload, self.results, self.idle = plan, gen, payload, results, idle

    def run(self, system: str, cluster: brokers.Cluster) -> None:
        env.drop_page_cache(log)
        log(f"{system}: starting a {RF}-node cluster for throughput")
        cluster.start()
        samplers = {name: procs.ProcSampler(pid) for name, pid in cluster.processes().items()}
        try:
            log(f"{system}: up on {cluster.bootstrap} ({cluster.processes()})")
            self._idle(system, cluster)
            self._workload(system, cluster, samplers, "warmup", "none", self.plan["warmup"], 0)
            for comp in COMPRESSIONS:
                self._workload(system, cluster, samplers, "produce", comp, self.plan["records"], 0)
            for comp in COMPRESSIONS:
                rate, basis = self._rate(system, comp)
                seconds = min(self.plan["latency_s"], LATENCY_MAX_BYTES / RECORD_SIZE / rate)
                warmup = int(rate * self.plan["latency_warmup_s"])
                self._workload(system, cluster, samplers, "latency", comp,
                               max(int(rate * seconds), 1) + warmup, rate, basis, warmup)
        finally:
            for s in samplers.values():
                s.close()
            log(f"{system}: stopping")
            cluster.stop()
            cluster.wipe()

    def _idle(self, system: str, cluster: brokers.Cluster) -> None:
        """CPU of each process while the cluster has nothing to do (no topics, no clients)."""
        time.sleep(3)
        pids = cluster.processes()
        before = {n: procs.cpu_seconds(p) for n, p in pids.items()}
        t0 = time.monotonic()
        time.sleep(self.plan["idle_s"])
        secs = time.monotonic() - t0
        self.idle[system] = {n: round((procs.cpu_seconds(p) - before[n]) / secs, 3)
                             for n, p in pids.items()}
        self.idle[system]["seconds"] = round(secs, 1)
        try:
            self.idle[system]["controller"] = cluster.controller()
        except (OSError, kadmin.KafkaError, struct.error):
            pass
        log(f"{system}: idle CPU, cores: {self.idle[system]}")

    def _rate(self, system: str, comp: str) -> tuple[int, str]:
        ok = {(r["system"], r["compression"]): r["records_per_s"] for r in self.results
              if r["kind"] == "produce" and r.get("ok")}
        if ("kafka", comp) in ok:
            return max(int(ok[("kafka", comp)] / 2), 1), "half of Kafka's unthrottled rate"
        own = ok.get((system, comp), 2000)
        return max(int(own / 2), 1), f"half of {system}'s own unthrottled rate (no Kafka figure)"

    def _workload(self, system, cluster, samplers, kind: str, comp: str, records: int,
                  rate: int, basis: str = "", warmup: int = 0) -> None:
        """warmup: records sent first and left out of the "steady" percentiles (the client's
        JVM compiles its code then; both systems' first second has a tail of hundreds of ms)."""
        topic = f"{kind}-{comp}"
        boot = cluster.live_bootstrap()
        kadmin.create_topic(boot, topic, PARTITIONS, replication_factor=RF, configs=TOPIC_CONFIGS)
        kadmin.wait_full_isr(boot, topic, PARTITIONS, RF, 60)
        env.drop_page_cache(log)
        label = f"{kind} acks=all {comp}" + (f" at {rate:,}/s" if rate else "")
        log(f"{system}: {label} ({records:,} records)")
        for s in samplers.values():
            s.begin()
        r = self.gen.produce(cluster.bootstrap, topic, records, "all", comp, rate,
                             f"{system}-{topic}", payload_file=self.payload, warmup_records=warmup)
        r["processes"] = {name: s.end() for name, s in samplers.items()}
        cluster.check_alive(label)
        if kind == "warmup":
            return
        r["log_bytes"] = log_bytes(cluster, topic)
        r.update({"system": system, "kind": kind, "compression": comp, "records_planned": records,
                  "rate": rate, "rate_basis": basis})
        r.setdefault("ok", False)
        if r["ok"]:
            gb = r["records"] * RECORD_SIZE / 1e9
            for p in r["processes"].values():
                p["cpu_s_per_gb"] = round(p["broker_cpu_s"] / gb, 3)
            if rate:
                r["reached_rate"] = r["records_per_s"] >= REACHED * rate
                if "steady" in r:
                    r["steady"]["reached_rate"] = r["steady"]["records_per_s"] >= REACHED * rate
                    r["reached_rate"] = r["reached_rate"] and r["steady"]["reached_rate"]
            brokers_cpu = sum(p["broker_cpu_s"] for n, p in r["processes"].items()
                              if n.startswith("broker"))
            log(f"  -> {r['records_per_s']:,.0f} records/s, {r['mb_per_s']:.1f} MB/s, p50 "
                f"{r['p50_ms']:.0f} p99 {r['p99_ms']:.0f} p99.9 {r['p999_ms']:.0f} ms; brokers "
                f"{brokers_cpu / gb:.2f} CPU s/GB; RSS "
                + ", ".join(f"{n} {p['peak_rss_mib']:.0f}" for n, p in r["processes"].items())
                + " MiB")
            if "steady" in r:
                s = r["steady"]
                log(f"     after the {warmup:,}-record warm-up: {s['records_per_s']:,.0f} records/s, "
                    f"p50 {s['p50_ms']:.0f} p99 {s['p99_ms']:.0f} p99.9 {s['p999_ms']:.0f} ms")
        else:
            log(f"  -> FAILED: {str(r.get('error'))[:400]}")
        self.results.append(r)


class AckTail:
    """Follows ackprobe.py's output file as it grows."""

    def __init__(self, path: Path):
        self.path = path
        self._pos = 0
        self._partial = ""
        self.acks: list[tuple[int, float, float, int]] = []  # seq, send_t, ack_t, offset
        self.errors: list[str] = []

    def poll(self) -> None:
        try:
            with open(self.path) as f:
                f.seek(self._pos)
                data = f.read()
                self._pos = f.tell()
        except FileNotFoundError:
            return
        data = self._partial + data
        lines = data.split("\n")
        self._partial = lines.pop()
        for line in lines:
            parts = line.split()
            if parts and parts[0] == "A":
                self.acks.append((int(parts[1]), float(parts[2]), float(parts[3]), int(parts[4])))
            elif parts and parts[0] == "E":
                self.errors.append(line)

    def first_ack_sent_after(self, t: float, timeout: float) -> float | None:
        """ack_t of the first acknowledgement (in arrival order) of a record sent at or after
        monotonic time t; None if none came within `timeout` s."""
        deadline = time.monotonic() + timeout
        i = 0
        while True:
            self.poll()
            for a in self.acks[i:]:
                if a[1] >= t:
                    return a[2]
            i = len(self.acks)
            if time.monotonic() > deadline:
                return None
            time.sleep(0.02)

    def wait_acks_after(self, t: float, n: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.poll()
            if sum(1 for a in self.acks[-n:] if a[2] >= t) >= n:
                return True
            time.sleep(0.05)
        return False


def partition_state(cluster: brokers.Cluster, topic: str) -> dict:
    return kadmin.metadata(cluster.live_bootstrap(), [topic])["partitions"][topic][0]


def wait_isr(cluster: brokers.Cluster, topic: str, node: int, timeout: float) -> float | None:
    """Monotonic time at which `node` was seen back in the partition's full ISR, or None."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            st = partition_state(cluster, topic)
            if node in st["isr"] and len(st["isr"]) == RF and st["leader"] >= 0:
                return time.monotonic()
        except (OSError, kadmin.KafkaError, KeyError):
            pass
        time.sleep(0.1)
    return None


def failover(spec: dict, cluster: brokers.Cluster, plan: dict, workdir: Path) -> dict:
    """Phase 2 against one fresh cluster: SIGKILL the partition leader plan["kills"] times.
    spec: one of failover_runs(). A lost or misplaced acknowledged record, or a read-back that
    could not check every acknowledged record, is an error of the run (it then exits 1)."""
    topic = "failover"
    system = spec["system"]
    name = f"{system}-{spec['variant']}"
    out = {**spec, "kills": [], "errors": []}
    env.drop_page_cache(log)
    log(f"{spec['label']}: starting a fresh {RF}-node cluster for failover"
        + (f" ({', '.join(f'{k}={v}' for k, v in spec['settings'].items())})"
           if spec["settings"] else ""))
    cluster.start()
    probe = None
    try:
        boot = cluster.live_bootstrap()
        kadmin.create_topic(boot, topic, 1, replication_factor=RF, configs=TOPIC_CONFIGS)
        kadmin.wait_full_isr(boot, topic, 1, RF, 60)
        acks = workdir / f"{name}-acks.txt"
        cmd = [sys.executable, str(BENCH / "harness" / "ackprobe.py"), "produce", "--bootstrap",
               cluster.bootstrap, "--topic", topic, "--rate", str(plan["probe_rate"]),
               "--out", str(acks)]
        out["probe_command"] = cmd
        probe = procs.spawn(cmd, workdir / "logs" / f"{name}-ackprobe.log")
        tail = AckTail(acks)
        if not tail.wait_acks_after(0, 200, 60):
            raise RuntimeError(f"{system}: the probe got no acknowledgements: {tail.errors[:3]}")
        for k in range(plan["kills"]):
            out["kills"].append(one_kill(spec["label"], cluster, topic, tail, plan, k))
            if out["kills"][-1].get("aborted"):
                out["errors"].append(out["kills"][-1]["aborted"])
                break
        procs.stop(probe, grace=150)
        probe = None
        tail.poll()
        out["probe_errors"] = tail.errors[:20]
        verify_json = workdir / f"{name}-verify.json"
        rc, text = procs.run_logged(
            [sys.executable, str(BENCH / "harness" / "ackprobe.py"), "verify", "--bootstrap",
             cluster.live_bootstrap(), "--topic", topic, "--acks", str(acks),
             "--out", str(verify_json)], workdir / "logs" / f"{name}-verify.log", 400)
        try:
            out["verify"] = json.loads(verify_json.read_text())
        except (OSError, ValueError):
            out["verify"] = {"ok": False, "error": f"verify exit {rc}: {text[-800:]}"}
        v = out["verify"]
        log(f"{spec['label']}: read back: {v.get('acknowledged')} acknowledged, {v.get('read')} "
            f"read, lost {v.get('lost')}, misplaced {v.get('misplaced')}, duplicated "
            f"{v.get('duplicated')}, delivery errors {v.get('delivery_errors')}")
        loss = acked_loss(v)
        if loss:
            out["errors"].append(loss)
            out["lost_acknowledged"] = True
            log(f"{spec['label']}: FAILED: {loss}")
    except (RuntimeError, kadmin.KafkaError, OSError) as e:
        out["errors"].append(str(e))
        log(f"{spec['label']}: failover phase ABORTED: {e}")
    finally:
        if probe is not None:
            procs.stop(probe, grace=30)
        log(f"{spec['label']}: stopping")
        cluster.stop()
        cluster.wipe()
    return out


def acked_loss(v: dict) -> str | None:
    """Why the read-back shows (or cannot rule out) a lost acknowledged record, else None."""
    if "error" in v or "lost" not in v:
        return (f"the read-back could not check the acknowledged records: "
                f"{str(v.get('error'))[:300]}")
    if v["lost"] or v["misplaced"]:
        return (f"LOST ACKNOWLEDGED RECORDS: {v['lost']} of {v['acknowledged']:,} acknowledged "
                f"records not read back (first: {v.get('first_lost')}), {v['misplaced']} read at "
                f"another offset than acknowledged (first: {v.get('first_misplaced')})")
    if not v.get("complete_read"):
        return (f"the read-back stopped before the high watermark {v.get('high_watermark')} "
                f"({v.get('read')} records read): acknowledged records not all checked")
    return None


def one_kill(system: str, cluster: brokers.Cluster, topic: str, tail: AckTail, plan: dict,
             k: int) -> dict:
    st = partition_state(cluster, topic)
    victim = cluster.node(st["leader"])
    try:
        controller = cluster.controller()
    except (OSError, kadmin.KafkaError, struct.error) as e:
        controller = f"? ({e})"
    t_kill = victim.kill()
    ack = tail.first_ack_sent_after(t_kill, FAILOVER_TIMEOUT_S)
    r = {"kill": k + 1, "victim": victim.node_id, "controller": controller,
         "victim_was_controller": controller == victim.node_id,
         "failover_s": round(ack - t_kill, 3) if ack is not None else None}
    try:
        r["new_leader"] = partition_state(cluster, topic)["leader"]
    except (OSError, kadmin.KafkaError, KeyError):
        r["new_leader"] = None
    if ack is None:
        r["note"] = f"no acknowledgement within {FAILOVER_TIMEOUT_S} s of the kill"
    t_restart = time.monotonic()
    try:
        victim.restart(REJOIN_TIMEOUT_S)
    except (RuntimeError, kadmin.KafkaError) as e:
        r["aborted"] = f"{system} kill {k + 1}: broker {victim.node_id} did not restart: {e}"
        return r
    r["restart_to_listening_s"] = round(time.monotonic() - t_restart, 3)
    t_isr = wait_isr(cluster, topic, victim.node_id, REJOIN_TIMEOUT_S)
    r["restart_to_isr_s"] = round(t_isr - t_restart, 3) if t_isr else None
    role = "leader, controller" if r["victim_was_controller"] else "leader"
    log(f"{system} kill {k + 1}: broker {victim.node_id} ({role}) "
        f"SIGKILLed; first ack after {r['failover_s']} s, new leader {r['new_leader']}; restarted, "
        f"back in the ISR {r['restart_to_isr_s']} s after the restart")
    if t_isr is None:
        r["aborted"] = (f"{system} kill {k + 1}: broker {victim.node_id} not back in the ISR "
                        f"{REJOIN_TIMEOUT_S} s after its restart")
        return r
    if not tail.wait_acks_after(t_isr, plan["probe_rate"], 60):
        r["aborted"] = f"{system} kill {k + 1}: acknowledgements did not resume after the rejoin"
        return r
    time.sleep(plan["steady_s"])
    return r


# ---- report ---------------------------------------------------------------------------------

def _ratio(s, k, digits=2) -> str:
    if s is None or k is None or not k:
        return "n/a"
    return f"{s / k:.{digits}f}"


def _fmt(v, digits=1) -> str:
    return "n/a" if v is None else f"{v:,.{digits}f}"


def _cell(s, k, digits=1) -> str:
    text = f"{_fmt(s, digits)} / {_fmt(k, digits)}"
    if s is not None and k is not None and k:
        text += f" ({s / k:.2f})"
    return text


def _throughput_row(name: str, sr: dict | None, kr: dict | None, rate: int) -> str:
    """One table row, Strata / Kafka; a fixed-rate row either system did not hold is void."""
    void = ""
    if rate:
        short = [f"{x} achieved {r['records_per_s'] / rate:.0%} of the rate"
                 for x, r in (("Strata", sr), ("Kafka", kr))
                 if r and r.get("ok") and r["records_per_s"] < REACHED * rate]
        if short:
            void = "void: " + ", ".join(short)

    def g(r, key):
        return r.get(key) if r and r.get("ok") else None
    cells = []
    for key, d in (("mb_per_s", 1), ("records_per_s", 0), ("p50_ms", 0), ("p99_ms", 0),
                   ("p999_ms", 0)):
        if void and key.startswith("p"):
            cells.append(f"{_fmt(g(sr, key), d)} / {_fmt(g(kr, key), d)} ({void})")
        else:
            cells.append(_cell(g(sr, key), g(kr, key), d))
    return f"| {name} | " + " | ".join(cells) + " |"


def _find(results, system, kind, comp):
    for r in results:
        if r["system"] == system and r["kind"] == kind and r["compression"] == comp:
            return r
    return None


def _brokers(r: dict) -> list[dict]:
    return [p for n, p in sorted(r["processes"].items()) if n.startswith("broker")]


def failover_stats(f: dict | None) -> dict:
    if not f:
        return {}
    times = [k["failover_s"] for k in f["kills"] if k.get("failover_s") is not None]
    rejoin = [k["restart_to_isr_s"] for k in f["kills"] if k.get("restart_to_isr_s") is not None]
    return {"n": len(f["kills"]), "completed": len(times),
            "p50": statistics.median(times) if times else None, "max": max(times) if times else None,
            "min": min(times) if times else None,
            "rejoin_p50": statistics.median(rejoin) if rejoin else None,
            "rejoin_max": max(rejoin) if rejoin else None}


def _failover_sections(cfg: dict, fo: list) -> list[str]:
    lines = [
        "",
        "### Failover: SIGKILL of the partition leader to the first acknowledged produce after it",
        "",
        f"An idempotent acks=all producer (confluent-kafka {cfg['confluent_kafka_version']}, "
        f"librdkafka {cfg['librdkafka_client_version']}, client defaults; `harness/ackprobe.py`) "
        f"sends {cfg['probe_rate']} records/s of 100 B to a 1-partition RF=3 topic. The "
        f"partition's leader is SIGKILLed {cfg['kills']} times; failover = the acknowledgement "
        "time of the first record *sent* after the kill minus the kill time (one monotonic clock; "
        "records in flight at the kill are retried by the producer and acknowledged at about the "
        "same time). The killed broker is then restarted on its data and must be back in the ISR "
        "(Metadata) and acknowledgements flowing before the next kill. After the last kill the "
        "partition is read back from the start and every acknowledged record checked: a lost "
        "or misplaced acknowledged record fails the benchmark run.",
        "",
        "Runs, each on a fresh cluster:"
        + (" **defaults**, each system as it ships (Kafka fences a broker after "
           "`broker.session.timeout.ms` 9 s without a heartbeat; Strata's followers notice the "
           "failed fetches and the liveness probe revokes the dead broker's lease once its port "
           "refuses connections, else the lease expires after its TTL);"
           if "defaults" in cfg.get("failover_variants", ["defaults"]) else "")
        + (f" **tuned**, both set to the same detection time, {cfg.get('detection_ms', '?')} ms: "
           "Kafka's `broker.session.timeout.ms` = it and `broker.heartbeat.interval.ms` = a "
           "third of it, against Strata's `strata.etcd.lease.ttl.ms` = it (renewed every third "
           "of it) with the liveness probe on and, in another run, off (lease expiry only): "
           "these rows compare the mechanisms rather than the shipped settings."
           if "tuned" in cfg.get("failover_variants", []) else "")
        + " Strata÷Kafka = failover p50 against the Kafka run with the same settings.",
        "",
        "| run | settings | failover p50 s | max s | min s | Strata÷Kafka p50 | restart to "
        "back in the ISR p50 / max s | kills with a failover | acknowledged records read back |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    kafka_p50 = {f["variant"]: failover_stats(f)["p50"] for f in fo if f["system"] == "kafka"}

    def check(f):
        v = f.get("verify")
        if not v:
            return "n/a"
        if "error" in v:
            return "**verify failed**"
        text = (f"{v['acknowledged']:,} acked, {v['read']:,} read; lost {v['lost']}, misplaced "
                f"{v['misplaced']}, duplicated {v['duplicated']}, delivery errors "
                f"{v['delivery_errors']}")
        return f"**{text}**" if f.get("lost_acknowledged") else text
    for f in fo:
        st = failover_stats(f)
        settings = (", ".join(f"`{k}={v}`" for k, v in f["settings"].items())
                    or "defaults")
        ratio = ("" if f["system"] == "kafka" else
                 _ratio(st.get("p50"), kafka_p50.get("tuned" if f["variant"].startswith("tuned")
                                                     else f["variant"])))
        lines.append(
            f"| {f['label']} | {settings} | {_fmt(st.get('p50'), 2)} | {_fmt(st.get('max'), 2)} | "
            f"{_fmt(st.get('min'), 2)} | {ratio} | {_fmt(st.get('rejoin_p50'), 1)} / "
            f"{_fmt(st.get('rejoin_max'), 1)} | {st.get('completed', 'n/a')} / "
            f"{st.get('n', 'n/a')} | {check(f)} |")
    lines += ["", "Each kill (victim → new leader; `*` = the victim was also the active controller: "
              "Strata's etcd-elected controller, Kafka's KRaft quorum leader): failover s; restart "
              "to back in the ISR s.", "",
              "| kill | " + " | ".join(f["label"] for f in fo) + " |",
              "|---|" + "---|" * len(fo)]
    n = max((len(f["kills"]) for f in fo), default=0)
    for i in range(n):
        cells = []
        for f in fo:
            ks = f["kills"]
            if i >= len(ks):
                cells.append("n/a")
                continue
            x = ks[i]
            star = "*" if x.get("victim_was_controller") else ""
            note = f" ({x['note']})" if x.get("note") else ""
            cells.append(f"{x['victim']}{star} → {x.get('new_leader')}: "
                         f"{_fmt(x.get('failover_s'), 2)}; {_fmt(x.get('restart_to_isr_s'), 1)}{note}")
        lines.append(f"| {i + 1} | " + " | ".join(cells) + " |")
    for f in fo:
        for e in f.get("errors", []):
            lines.append(f"\n**{f['label']} failover run: {e}**")
    return lines


def _throughput_sections(cfg: dict, res: list) -> list[str]:
    """The throughput, latency and CPU/memory tables (absent when that phase did not run)."""
    lines: list[str] = []
    lines += [
        "",
        f"### Throughput and latency: RF=3, acks=all, {RECORD_SIZE} B records, {PARTITIONS} partitions",
        "",
        f"Load generator: Kafka's ProducerPerformance (Java client defaults: idempotent, 16 KiB "
        f"batches, linger 5 ms; 512 MiB heap) with `--payload-file`: {cfg['corpus']['lines']:,} "
        f"generated JSON events of exactly {RECORD_SIZE} B (timestamps, ids, IPs, URLs, user "
        f"agents, prices, item lists, and English text from `/usr/share/common-licenses` as "
        f"padding; seed {cfg['corpus']['seed']}; the whole file compresses "
        f"{cfg['corpus']['zlib1_ratio']:.1f}x with zlib -1), one picked at random per record. "
        f"`strata bench produce` was not used: it sends one buffer repeated and has no payload "
        f"option (its options are registered in src/app/main.cc). Bootstrap: all 3 brokers. "
        f"Unthrottled runs: {cfg['records']:,} records ({cfg['records'] * RECORD_SIZE / 1e9:.2f} GB) "
        f"each; fixed-rate runs: {cfg.get('latency_warmup_s', 0)} s of warm-up then "
        f"{cfg['latency_s']} s at half of Kafka's unthrottled rate for "
        f"the same compression, *void* when either system achieved less than "
        f"{REACHED:.0%} of the rate. The page cache is dropped before every workload. Each cell: "
        f"**Strata / Kafka (Strata÷Kafka)**; ProducerPerformance reports whole milliseconds. "
        f"The producing tool is {cfg.get('load_generator', 'kafka-tools')}'s, whose "
        f"`--warmup-records` (KIP-1052) gives the percentiles of the records sent after the "
        f"warm-up as well as of the whole run: a fresh client JVM sends its first second's "
        f"records with a tail of hundreds of milliseconds against either system.",
        "",
        "| workload | MB/s | records/s | p50 ms | p99 ms | p99.9 ms |",
        "|---|---|---|---|---|---|",
    ]
    for kind in ("produce", "latency"):
        for comp in COMPRESSIONS:
            sr, kr = _find(res, "strata", kind, comp), _find(res, "kafka", kind, comp)
            rate = (sr or kr or {}).get("rate", 0)
            if kind == "produce":
                lines.append(_throughput_row(f"acks=all {comp}, unthrottled", sr, kr, rate))
                continue
            name = f"acks=all {comp} at {rate:,} records/s"
            if (sr or {}).get("steady") or (kr or {}).get("steady"):
                lines.append(_throughput_row(
                    f"{name}, after a {cfg['latency_warmup_s']} s warm-up",
                    (sr or {}).get("steady") and {**sr, **sr["steady"]},
                    (kr or {}).get("steady") and {**kr, **kr["steady"]}, rate))
                name += ", whole run (warm-up included)"
            lines.append(_throughput_row(name, sr, kr, rate))

    lines += [
        "",
        "### Broker CPU and memory in RF=3 (the unthrottled runs above)",
        "",
        "CPU s/GB = user+system CPU seconds of the broker processes during the run per GB (1e9 B) "
        "of record values produced (each broker stores a replica of every record). Peak RSS = "
        "highest VmRSS sampled every 100 ms during the run. Kafka's controllers run inside its 3 "
        "nodes; Strata's metadata lives in etcd, listed separately and added in the last CPU and "
        "RSS rows. Each cell: **Strata / Kafka (Strata÷Kafka)**.",
        "",
        "| figure | " + " | ".join(f"acks=all {c}" for c in COMPRESSIONS) + " |",
        "|---|" + "---|" * len(COMPRESSIONS),
    ]
    rows = []
    for comp in COMPRESSIONS:
        sr, kr = _find(res, "strata", "produce", comp), _find(res, "kafka", "produce", comp)
        ok = {x: r for x, r in (("strata", sr), ("kafka", kr)) if r and r.get("ok")}
        col = {}

        def per(system, key):
            r = ok.get(system)
            return [p[key] for p in _brokers(r)] if r else None

        def etcd(system, key):
            r = ok.get(system)
            return r["processes"]["etcd"][key] if r and "etcd" in r["processes"] else None
        for key, name, d in (("cpu_s_per_gb", "CPU s/GB", 2), ("peak_rss_mib", "peak RSS MiB", 0)):
            sv, kv = per("strata", key), per("kafka", key)
            col[f"{name}, sum of the 3 brokers"] = _cell(sum(sv) if sv else None,
                                                          sum(kv) if kv else None, d)
            col[f"{name}, brokers 1 / 2 / 3"] = (
                f"{' / '.join(_fmt(x, d) for x in sv) if sv else 'n/a'} vs "
                f"{' / '.join(_fmt(x, d) for x in kv) if kv else 'n/a'}")
            e = etcd("strata", key)
            col[f"{name}, etcd"] = f"{_fmt(e, d)} / -"
            col[f"{name}, Strata brokers + etcd vs Kafka nodes"] = _cell(
                (sum(sv) + (e or 0)) if sv else None, sum(kv) if kv else None, d)
        sb = sr["log_bytes"] if sr and sr.get("ok") else None
        kb = kr["log_bytes"] if kr and kr.get("ok") else None
        vals = RECORD_SIZE * cfg["records"]
        col["segment bytes on disk per byte of record values (mean of the 3 brokers)"] = _cell(
            statistics.mean(sb.values()) / vals if sb else None,
            statistics.mean(kb.values()) / vals if kb else None, 3)
        rows.append(col)
    for name in rows[0]:
        lines.append(f"| {name} | " + " | ".join(c[name] for c in rows) + " |")
    return lines


def markdown(run: dict) -> str:
    cfg, res = run["config"], run["results"]
    fo = run["failover"]
    lost = [f for f in fo if f.get("lost_acknowledged")]
    ts = run["started_utc"]
    lines = [
        f"## {ts[:10]} {ts[11:16]} UTC — Replication: 3-broker Strata vs 3-node Apache Kafka "
        f"{cfg['kafka_version']}, RF=3, acks=all (`{run['command']}`)",
        "",
        *([f"**FAILED: acknowledged records were lost or could not be checked in "
            f"{', '.join(f['label'] for f in lost)}** (see the failover table).", ""]
          if lost else []),
        *report.command_and_machine(run),
        "",
        "Systems, one after the other, each phase on a fresh cluster (data under "
        "`bench/.work/replication-<ts>/`, deleted after), all on 127.0.0.1 with distinct ports:",
        f"- Apache Kafka {cfg['kafka_version']}: 3 KRaft nodes, each `process.roles=broker,"
        "controller` (combined), static `controller.quorum.voters`, storage formatted with one "
        "shared cluster id; JVM -Xmx1g -Xms1g G1 each; internal topics at Kafka's default RF 3; "
        "defaults otherwise (`broker.session.timeout.ms` 9 s, `broker.heartbeat.interval.ms` "
        "2 s) except in the tuned failover run.",
        "- Strata: one etcd (Debian's, scripts/cluster.sh's flags) + 3 brokers with "
        "`strata.metadata.backend=etcd`; defaults otherwise (`strata.etcd.lease.ttl.ms` "
        f"{cfg['strata_lease_ttl_ms']} ms, renewed every third of it; "
        "`strata.broker.liveness.probe.enable` true) except in the tuned failover runs.",
        f"- Topics: RF {RF}, `min.insync.replicas=2`; 1 GiB segments, no per-message fsync "
        "(both defaults).",
    ]
    if fo:
        lines += _failover_sections(cfg, fo)

    if res:
        lines += _throughput_sections(cfg, res)
    idle = run.get("idle", {})
    if idle:
        def cores(system):
            d = idle.get(system)
            if not d:
                return "n/a"
            text = ", ".join(f"{n} {v:.2f}" for n, v in d.items() if n.startswith(("broker", "etcd")))
            return text + (f" (controller: broker {d['controller']})" if "controller" in d else "")
        secs = next(iter(idle.values()))["seconds"]
        lines += ["", f"Idle cluster (just started, no topics, no clients; {secs:.0f} s), CPU cores "
                  f"used per process: Strata {cores('strata')}; Kafka {cores('kafka')}."]
    failed = [f"{r['system']} {r['kind']} {r['compression']}: {str(r.get('error'))[:200]}"
              for r in res if not r.get("ok")] + run["errors"]
    if failed:
        lines += ["", "Failed: " + "; ".join(failed)]
    lines += ["", f"Raw data: `{run['files']['json']}`.", ""]
    return "\n".join(lines)


# ---- main -----------------------------------------------------------------------------------

def lease_ttl_default() -> str:
    """strata.etcd.lease.ttl.ms's default, from src/config/config_tables.cc."""
    import re
    try:
        text = (REPO / "src/config/config_tables.cc").read_text()
        m = re.search(r'"strata\.etcd\.lease\.ttl\.ms",\s*T::\w+,\s*"(\d+)"', text)
        return m.group(1) if m else "?"
    except OSError:
        return "?"


def _first(v):
    return v[0] if isinstance(v, tuple) else v


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="3 kills per failover run, 0.2 GB and 8 s workloads (~15 min; full "
                         "~30-40 min)")
    ap.add_argument("--systems", help="comma-separated subset of kafka,strata")
    ap.add_argument("--kills", type=int, help="leader kills per failover run (overrides the mode)")
    ap.add_argument("--records", type=int, help="records per unthrottled workload (overrides the mode)")
    ap.add_argument("--phases", default="throughput,failover", help="subset of throughput,failover")
    ap.add_argument("--failover-variants", default=",".join(FAILOVER_VARIANTS),
                    help="failover runs: defaults (each system's own) and/or tuned (both at "
                         "--detection-ms; Strata with its liveness probe on and off); default both")
    ap.add_argument("--detection-ms", type=int,
                    help="the tuned runs' detection time: Kafka's broker.session.timeout.ms "
                         "(heartbeat a third of it) and Strata's strata.etcd.lease.ttl.ms; whole "
                         "seconds, at least 2000 (default: Strata's default lease TTL)")
    ap.add_argument("--strata-bin", default=os.environ.get("STRATA_BIN", str(REPO / "build/strata")))
    ap.add_argument("--kafka-lib", help="directory with Apache Kafka's jars")
    ap.add_argument("--workdir", help="where data dirs and logs go (default bench/.work/replication-<ts>)")
    ap.add_argument("--no-record", action="store_true", help="do not append to bench/RESULTS.md")
    args = ap.parse_args()

    mode = "quick" if args.quick else "full"
    plan = dict(MODES[mode])
    if args.kills is not None:
        plan["kills"] = args.kills
    if args.records:
        plan["records"] = args.records
    systems = [s for s in SYSTEMS if s in (args.systems or ",".join(SYSTEMS)).split(",")]
    phases = args.phases.split(",")
    variants = [v for v in args.failover_variants.split(",") if v]
    if set(variants) - set(FAILOVER_VARIANTS):
        log(f"--failover-variants: of {FAILOVER_VARIANTS}")
        return 2
    default_ttl = lease_ttl_default()
    detection_ms = args.detection_ms or (int(default_ttl) if default_ttl.isdigit() else 3000)
    if detection_ms < 2000 or detection_ms % 1000:
        log("--detection-ms: whole seconds, at least 2000 (strata.etcd.lease.ttl.ms's bounds)")
        return 2
    started = datetime.datetime.now(datetime.timezone.utc)
    ts = started.strftime("%Y%m%dT%H%M%SZ")
    workdir = Path(args.workdir) if args.workdir else BENCH / ".work" / f"replication-{ts}"
    strata_bin = Path(args.strata_bin).resolve()
    kafka_lib = env.find_kafka_lib(args.kafka_lib, log)
    if not strata_bin.exists():
        log(f"no Strata binary at {strata_bin}")
        return 2
    if kafka_lib is None:
        log("Apache Kafka jars not found (run bench/setup.sh, or pass --kafka-lib)")
        return 2
    for tool in ("etcd", "java"):
        if not shutil.which(tool):
            log(f"{tool} not found")
            return 2

    def on_term(signum, _frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, on_term)

    command = "bench/replication.sh" + (" --quick" if args.quick else "") + "".join(
        f" --{k} {v}" for k, v in (("systems", args.systems), ("kills", args.kills),
                                   ("records", args.records)) if v is not None)
    if args.phases != "throughput,failover":
        command += f" --phases {args.phases}"
    if variants != FAILOVER_VARIANTS and "failover" in phases:
        command += f" --failover-variants {','.join(variants)}"
    if args.detection_ms:
        command += f" --detection-ms {args.detection_ms}"
    workdir.mkdir(parents=True, exist_ok=True)
    need = 3 * RF * (2 * plan["records"] + plan["warmup"]) * RECORD_SIZE * 1.2 + (4 << 30)
    if shutil.disk_usage(workdir).free < need:
        log(f"not enough disk space in {workdir}: need {need / 1e9:.1f} GB")
        return 2
    log(f"mode {mode}; systems {systems}; work dir {workdir}; load average {limits.loadavg()}")
    other = limits.OtherLoad()
    t0 = time.time()
    payload = workdir / "payload.jsonl"
    corpus_info = corpus.write(payload, plan["corpus_lines"], RECORD_SIZE)
    log4j = workdir / "tools-log4j2.properties"
    log4j.write_text(brokers.LOG4J2)
    # The producing tool is the same Kafka's ProducerPerformance, whose --warmup-records
    # (KIP-1052, Kafka 4.2 on) leaves the client JVM's first records out of the steady figures.
    kv = env.versions(kafka_lib, strata_bin)["kafka_version"]
    try:
        has_warmup = tuple(int(x) for x in kv.split(".")[:2]) >= (4, 2)
    except ValueError:
        has_warmup = False
    if not has_warmup:
        log(f"Kafka {kv}'s ProducerPerformance has no --warmup-records (needs 4.2 or later)")
        return 2
    gen = loadgen.KafkaPerf(workdir / "logs", RECORD_SIZE, kafka_lib, log4j, kafka_lib)
    import confluent_kafka
    out_json = BENCH / "results" / f"replication-{ts}.json"
    run = {"kind": "replication", "mode": mode, "command": command,
           "started_utc": started.strftime("%Y-%m-%d %H:%M:%S"), "plan": plan,
           "config": {**plan, "partitions": PARTITIONS, "record_size": RECORD_SIZE, "rf": RF,
                      "topic_configs": TOPIC_CONFIGS, "compressions": COMPRESSIONS,
                      "reached_share": REACHED, "corpus": corpus_info,
                      "strata_bin": str(strata_bin), "strata_lease_ttl_ms": default_ttl,
                      "failover_variants": variants, "detection_ms": detection_ms,
                      "confluent_kafka_version": _first(confluent_kafka.version()),
                      "librdkafka_client_version": _first(confluent_kafka.libversion()),
                      "load_generator": next(kafka_lib.glob("kafka-tools-[0-9]*.jar")).stem,
                      **env.versions(kafka_lib, strata_bin)},
           "machine": limits.machine(workdir), "loadavg_start": limits.loadavg(),
           "clusters": {}, "results": [], "idle": {}, "failover": [], "errors": [],
           "files": {"json": str(out_json.relative_to(REPO))}}
    throughput = Throughput(plan, gen, payload, run["results"], run["idle"])
    try:
        if "throughput" in phases:
            for system in systems:
                c = make_cluster(system, workdir / system / "throughput", kafka_lib, strata_bin)
                run["clusters"][system] = {"config": c.config}
                try:
                    throughput.run(system, c)
                except (RuntimeError, kadmin.KafkaError, OSError) as e:
                    run["errors"].append(f"{system} throughput: {e}")
                    log(f"{system}: throughput phase ABORTED: {e}")
                run["clusters"][system]["commands"] = c.commands
        if "failover" in phases:
            for spec in failover_runs(variants, systems, detection_ms):
                system, name = spec["system"], f"failover-{spec['variant']}"
                c = make_cluster(system, workdir / system / name, kafka_lib, strata_bin,
                                 spec["settings"])
                run["clusters"].setdefault(system, {})[name] = {"config": c.config}
                run["failover"].append(failover(spec, c, plan, workdir))
    finally:
        procs.kill_all()
    run["elapsed_s"] = round(time.time() - t0, 1)
    run["loadavg_end"] = limits.loadavg()
    run["other_load"] = other.summary()
    md = markdown(run)
    out_json.parent.mkdir(parents=True, exist_ok=True)
    out_json.write_text(json.dumps(run, indent=1) + "\n")
    (workdir / "section.md").write_text(md)
    print("\n" + md)
    if not args.no_record:
        with open(BENCH / "RESULTS.md", "a") as f:
            f.write("\n" + md)
        log("appended to bench/RESULTS.md")
    payload.unlink(missing_ok=True)
    log(f"done in {run['elapsed_s'] / 60:.1f} min; JSON {out_json}; logs in {workdir}")
    failed = run["errors"] + [e for f in run["failover"] for e in f["errors"]] + [
        r["kind"] for r in run["results"] if not r.get("ok")]
    for f in run["failover"]:
        if f.get("lost_acknowledged"):
            log(f"FAILED: {f['label']}: {next(e for e in f['errors'] if 'acknowledged' in e)}")
    if failed:
        log(f"FAILED: {len(failed)} error(s); exit 1")
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        procs.kill_all()
