#!/usr/bin/env python3
"""Side-by-side benchmark of Strata and Apache Kafka 4.x on this machine.

    bench/run.sh [--quick|--smoke]      (run.sh installs what is needed, then runs this)

One run: measure the machine's limits (disk write, loopback TCP), then in each of --reps
rounds, for each system in turn (never both at once; fresh data dir each; Kafka first in
round 1, the order alternating after that) start the broker, run the same workloads with two
load generators (`strata bench` and Kafka's ProducerPerformance/ConsumerPerformance) while
sampling the broker's CPU time and RSS, stop it. The report gives medians over the rounds. Writes bench/results/<ts>.json and .png and appends a section to bench/RESULTS.md
(--smoke: Strata only, tiny volumes, everything in a temp dir, and asserts the outputs).
See bench/README.md.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from harness import brokers, env, kadmin, limits, loadgen, procs, report, test_loadgen  # noqa: E402

PARTITIONS = 16
RECORD_SIZE = 1024
PRODUCE_CONFIGS = [(acks, comp) for acks in ("1", "all") for comp in ("none", "lz4", "zstd")]
CONSUME_CONFIG = ("1", "none")  # the topic this config wrote is then consumed from the start

# Sizes per mode. records: per produce workload; warmup: records produced (and discarded)
# right after each broker starts; latency_s: length of each fixed-rate run (shortened so
# that it produces at most LATENCY_MAX_BYTES); reps: rounds of the whole plan per system.
MODES = {
    "full": dict(records=2_000_000, warmup=200_000, latency_s=20, dd_mib=1024, loopback_s=3, reps=3,
                 produce=PRODUCE_CONFIGS, latency=[("1", "none"), ("all", "none")],
                 systems=["kafka", "strata"], fixed_rate=None),
    "quick": dict(records=250_000, warmup=50_000, latency_s=6, dd_mib=512, loopback_s=2, reps=1,
                  produce=PRODUCE_CONFIGS, latency=[("1", "none"), ("all", "none")],
                  systems=["kafka", "strata"], fixed_rate=None),
    "smoke": dict(records=5_000, warmup=0, latency_s=1, dd_mib=16, loopback_s=0.5, reps=1,
                  produce=[("1", "none"), ("all", "zstd")], latency=[("1", "none")],
                  systems=["strata"], fixed_rate=1000),
}
# A fixed-rate run stops after this many bytes of record values even if latency_s has not
# passed: see drop_page_cache for why a workload should stay within a few GB.
LATENCY_MAX_BYTES = 3_000_000_000


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", flush=True)


find_kafka_lib, versions, git_head = env.find_kafka_lib, env.versions, env.git_head


def settle_page_cache() -> None:
    env.settle_page_cache(log)


def drop_page_cache() -> None:
    env.drop_page_cache(log)  # see there for why (it matters a lot on this VM)


class Runner:
    """Runs every workload against one system and collects result dicts. Not thread-safe."""

    def __init__(self, plan: dict, gens: list, workdir: Path):
        self.plan = plan
        self.gens = gens
        self.workdir = workdir
        self.results: list[dict] = []
        self.rep = 0
        # (generator, acks, compression) -> (records/s, basis): fixed by the first round, so
        # every round and both systems run the latency workloads at the same rate.
        self.latency_rates: dict[tuple, tuple[int, str]] = {}

    def run_system(self, broker: brokers.Broker, rep: int) -> None:
        self.rep = rep
        drop_page_cache()
        log(f"{broker.name}: starting (data in {broker.data_dir})")
        broker.start()
        sampler = procs.ProcSampler(broker.pid)
        try:
            log(f"{broker.name}: up on {broker.bootstrap}, pid {broker.pid}")
            if self.plan["warmup"]:
                self._warmup(broker, sampler)
            for acks, comp in self.plan["produce"]:
                for gen in self.gens:
                    topic = self._workload(broker, sampler, gen, "produce", acks, comp,
                                           self.plan["records"], 0)
                    if (acks, comp) == CONSUME_CONFIG:
                        self._consume(broker, sampler, gen, topic)
            for acks, comp in self.plan["latency"]:
                for gen in self.gens:
                    rate, basis = self._latency_rate(broker.name, gen.name, acks, comp)
                    seconds = min(self.plan["latency_s"], LATENCY_MAX_BYTES / RECORD_SIZE / rate)
                    n = max(int(rate * seconds), 1)
                    self._workload(broker, sampler, gen, "latency", acks, comp, n, rate,
                                   rate_basis=basis)
        finally:
            sampler.close()
            log(f"{broker.name}: stopping")
            broker.stop()
            broker.wipe()

    def _warmup(self, broker, sampler) -> None:
        """Not reported: warms JIT and page cache, and has a consumer group read a little so
        that creating the group-offsets topic is not charged to the first consume."""
        topic = self._workload(broker, sampler, self.gens[0], "warmup", "1", "none",
                               self.plan["warmup"], 0, record=False)
        for gen in self.gens:
            gen.consume(broker.bootstrap, topic, 1000, f"{broker.name}-warmup-consume-{gen.name}")

    def _latency_rate(self, system: str, gen: str, acks: str, comp: str) -> tuple[int, str]:
        """Half of Kafka's unthrottled produce rate for this generator and config, measured
        earlier in this run (Kafka runs first in round 1); the same rate in every round."""
        key = (gen, acks, comp)
        if key not in self.latency_rates:
            self.latency_rates[key] = self._first_latency_rate(system, gen, acks, comp)
        return self.latency_rates[key]

    def _first_latency_rate(self, system: str, gen: str, acks: str, comp: str) -> tuple[int, str]:
        if self.plan["fixed_rate"]:
            return self.plan["fixed_rate"], "fixed (smoke)"
        rates = produce_rates(self.results)
        kafka_max = rates.get(("kafka", gen, acks, comp))
        if kafka_max:
            return max(int(kafka_max / 2), 1), "half of Kafka's max"
        own = rates.get((system, gen, acks, comp)) or 2000
        return max(int(own / 2), 1), f"half of {system}'s own max (no Kafka figure)"

    def _workload(self, broker, sampler, gen, kind: str, acks: str, comp: str, records: int,
                  rate: int, record: bool = True, rate_basis: str = "") -> str:
        # Topics are never deleted during a run (each workload gets its own; the data dir
        # goes when the system stops): no background deletion work overlaps a measurement.
        topic = f"{kind}-{gen.name}-acks{acks}-{comp}"
        label = f"{kind} acks={acks} {comp}"
        kadmin.create_topic(broker.bootstrap, topic, PARTITIONS)
        drop_page_cache()
        log(f"{broker.name} (round {self.rep + 1}): {label} ({records:,} records{f' at {rate:,}/s' if rate else ''}) "
            f"with {gen.name}")
        sampler.begin()
        r = gen.produce(broker.bootstrap, topic, records, acks, comp, rate,
                        f"{broker.name}-{topic}")
        r.update(sampler.end())
        broker.check_alive(label)
        if record:
            self._add(broker.name, gen.name, {"kind": kind, "label": label, "acks": acks,
                                              "compression": comp, "records": records,
                                              "rate": rate, "rate_basis": rate_basis}, r)
        return topic

    def _consume(self, broker, sampler, gen, topic: str) -> None:
        label = "consume from start"
        settle_page_cache()
        log(f"{broker.name} (round {self.rep + 1}): {label} ({self.plan['records']:,} records) "
            f"with {gen.name}")
        sampler.begin()
        r = gen.consume(broker.bootstrap, topic, self.plan["records"],
                        f"{broker.name}-consume-{gen.name}")
        r.update(sampler.end())
        broker.check_alive(label)
        self._add(broker.name, gen.name, {"kind": "consume", "label": label, "acks": "",
                                          "compression": "", "records": self.plan["records"],
                                          "rate": 0, "rate_basis": ""}, r)

    def _add(self, system: str, gen: str, workload: dict, r: dict) -> None:
        r.setdefault("ok", False)
        if r.get("ok") and r.get("records"):
            gb = r["records"] * RECORD_SIZE / 1e9
            r["cpu_s_per_gb"] = round(r["broker_cpu_s"] / gb, 3)
        entry = {"system": system, "generator": gen, "rep": self.rep, "workload": workload, **r}
        self.results.append(entry)
        if r["ok"]:
            lat = (f", p50 {r['p50_ms']:.2f} p99 {r['p99_ms']:.2f} p99.9 {r['p999_ms']:.2f} ms"
                   if "p99_ms" in r else "")
            log(f"  -> {r['records_per_s']:,.0f} records/s, {r['mb_per_s']:.1f} MB/s{lat}; broker "
                f"{r.get('cpu_s_per_gb', 0):.2f} CPU s/GB, peak RSS {r['peak_rss_mib']:.0f} MiB")
        else:
            what = f"UNSUPPORTED: {r['unsupported']}" if r.get("unsupported") else \
                f"FAILED: {str(r.get('error'))[:400]}"
            log(f"  -> {what}")


def produce_rates(results: list[dict]) -> dict:
    return {(r["system"], r["generator"], r["workload"]["acks"], r["workload"]["compression"]):
            r["records_per_s"] for r in results
            if r["workload"]["kind"] == "produce" and r.get("ok")}


def smoke_checks(run: dict, out_dir: Path, md: str) -> list[str]:
    """What --smoke asserts: every workload ran and produced sane numbers, and every output
    file exists and parses."""
    problems = []
    expected = (len(run["plan"]["produce"]) + 1 + len(run["plan"]["latency"])) * 2 * \
        run["plan"]["reps"] * len(run["plan"]["systems"])
    if len(run["results"]) != expected:
        problems.append(f"{len(run['results'])} results, expected {expected}")
    for r in run["results"]:
        name = f"{r['system']} {r['workload']['label']} {r['generator']}"
        if not r.get("ok"):
            if r.get("unsupported") and r["workload"]["kind"] == "consume":
                print(f"[bench] WARNING: {name} unsupported by this Strata build: {r['unsupported']}")
            else:
                problems.append(f"{name}: {r.get('error')}")
            continue
        if not (r["records"] >= r["workload"]["records"] and r["records_per_s"] > 0
                and r["mb_per_s"] > 0 and r["peak_rss_mib"] > 0 and r["broker_cpu_s"] >= 0
                and r.get("cpu_s_per_gb") is not None):
            problems.append(f"{name}: implausible numbers {r}")
        if r["workload"]["kind"] != "consume" and not all(
                isinstance(r.get(k), (int, float)) for k in ("p50_ms", "p99_ms", "p999_ms")):
            problems.append(f"{name}: no latency percentiles")
    js = json.loads((out_dir / Path(run["files"]["json"]).name).read_text())
    if js["results"] != run["results"]:
        problems.append("JSON file does not round-trip")
    png = (out_dir / Path(run["files"]["png"]).name).read_bytes()
    if not png.startswith(b"\x89PNG") or len(png) < 5000:
        problems.append("chart PNG missing or empty")
    if md.count("\n| ") < len({(r["workload"]["label"], r["generator"]) for r in run["results"]}):
        problems.append("markdown table is missing rows")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="~3-4 minutes, smaller volumes")
    g.add_argument("--smoke", action="store_true",
                   help="Strata only, tiny volumes, output to a temp dir; checks the pipeline")
    ap.add_argument("--systems", help="comma-separated subset of kafka,strata")
    ap.add_argument("--records", type=int, help="records per produce workload (overrides mode)")
    ap.add_argument("--reps", type=int, help="rounds of every workload per system (overrides mode)")
    ap.add_argument("--strata-bin", default=os.environ.get("STRATA_BIN", str(REPO / "build/strata")))
    ap.add_argument("--kafka-lib", help="directory with Apache Kafka's jars")
    ap.add_argument("--workdir", help="where data dirs and logs go (default bench/.work/<ts>)")
    ap.add_argument("--out-dir", help="where <ts>.json/.png go (default bench/results)")
    ap.add_argument("--no-record", action="store_true", help="do not append to bench/RESULTS.md")
    args = ap.parse_args()

    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    plan = dict(MODES[mode])
    if args.records:
        plan["records"] = args.records
    if args.reps:
        plan["reps"] = args.reps
    if args.systems:
        plan["systems"] = [s for s in ("kafka", "strata") if s in args.systems.split(",")]
    started = datetime.datetime.now(datetime.timezone.utc)
    ts = started.strftime("%Y%m%dT%H%M%SZ")
    tmp = Path(tempfile.mkdtemp(prefix="strata-bench-smoke-")) if mode == "smoke" else None
    workdir = Path(args.workdir) if args.workdir else (tmp / "work" if tmp else BENCH / ".work" / ts)
    out_dir = Path(args.out_dir) if args.out_dir else (tmp if tmp else BENCH / "results")
    record_md = mode != "smoke" and not args.no_record
    strata_bin = Path(args.strata_bin).resolve()
    kafka_lib = find_kafka_lib(args.kafka_lib)
    if not strata_bin.exists():
        log(f"no Strata binary at {strata_bin} (run bench/run.sh, which builds it)")
        return 2
    if kafka_lib is None:
        log("Apache Kafka jars not found (run bench/setup.sh, or pass --kafka-lib)")
        return 2

    def on_term(signum, _frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, on_term)

    command = "bench/run.sh" + {"full": "", "quick": " --quick", "smoke": " --smoke"}[mode]
    if args.records:
        command += f" --records {args.records}"
    if args.reps:
        command += f" --reps {args.reps}"
    if args.systems:
        command += f" --systems {args.systems}"
    workdir.mkdir(parents=True, exist_ok=True)
    log(f"mode {mode}; work dir {workdir}; results to {out_dir}")
    t0 = time.time()
    gens_logdir = workdir / "logs"
    log4j = workdir / "tools-log4j2.properties"
    log4j.write_text(brokers.LOG4J2)
    gens = [loadgen.StrataBench(gens_logdir, RECORD_SIZE, strata_bin),
            loadgen.KafkaPerf(gens_logdir, RECORD_SIZE, kafka_lib, log4j)]
    runner = Runner(plan, gens, workdir)
    run = {"mode": mode, "command": command, "started_utc": started.strftime("%Y-%m-%d %H:%M:%S"),
           "plan": {k: v for k, v in plan.items()},
           "config": {"records": plan["records"], "record_size": RECORD_SIZE,
                      "partitions": PARTITIONS, "latency_seconds": plan["latency_s"],
                      "latency_max_bytes": LATENCY_MAX_BYTES, "reps": plan["reps"],
                      "latency_rate_rule": (f"a fixed {plan['fixed_rate']:,} records/s"
                                            if plan["fixed_rate"] else "half of Kafka's "
                                            "unthrottled rate for the same config and generator"),
                      **versions(kafka_lib, strata_bin)},
           "machine": limits.machine(workdir), "limits": {}, "brokers": {}, "results": runner.results,
           "files": {"json": str(env.repo_relative(out_dir / f"{ts}.json")),
                     "png": str(env.repo_relative(out_dir / f"{ts}.png"))}}
    errors = []
    need = (len(plan["produce"]) * len(gens) + 1) * plan["records"] * RECORD_SIZE * 1.2 + (6 << 30)
    free = shutil.disk_usage(workdir).free
    if free < need:
        log(f"not enough disk space in {workdir}: {free / 1e9:.1f} GB free, need {need / 1e9:.1f} GB")
        return 2
    if mode == "smoke":
        log(f"output parsers: {test_loadgen.run_all()} checks passed")
    try:
        log(f"machine limits: dd {plan['dd_mib']} MiB into {workdir} ...")
        run["limits"]["disk"] = limits.disk_write(workdir, plan["dd_mib"])
        run["limits"]["loopback"] = limits.loopback_tcp(plan["loopback_s"])
        log(f"  disk {run['limits']['disk']['mb_per_s']} MB/s, "
            f"loopback {run['limits']['loopback']['mb_per_s']} MB/s")
        for rep in range(plan["reps"]):
            order = plan["systems"] if rep % 2 == 0 else list(reversed(plan["systems"]))
            for system in order:
                errors += run_round(run, runner, system, rep, workdir, kafka_lib, strata_bin)
    finally:
        procs.kill_all()
    run["elapsed_s"] = round(time.time() - t0, 1)
    run["errors"] = errors

    report.write_json(run, out_dir / f"{ts}.json")
    report.chart(run, out_dir / f"{ts}.png")
    md = report.markdown(run)
    (workdir / "section.md").write_text(md)
    print("\n" + md)
    failed = errors + [f"{r['system']} {r['workload']['label']} {r['generator']}"
                       for r in runner.results if not r.get("ok") and not r.get("unsupported")]
    if mode == "smoke":
        problems = smoke_checks(run, out_dir, md) + errors
        if problems:
            log(f"SMOKE FAILED (outputs kept in {tmp}):\n  " + "\n  ".join(problems))
            return 1
        shutil.rmtree(tmp, ignore_errors=True)
        log(f"smoke OK: {len(run['results'])} workloads, outputs checked ({run['elapsed_s']} s)")
        return 0
    if failed:
        log("FAILED: " + "; ".join(failed) + " — not appended to bench/RESULTS.md")
        return 1
    if record_md:
        with open(BENCH / "RESULTS.md", "a") as f:
            f.write("\n" + md)
        log("appended to bench/RESULTS.md")
    shutil.rmtree(workdir / "kafka" / "data", ignore_errors=True)
    log(f"done in {run['elapsed_s'] / 60:.1f} min; logs in {workdir}")
    return 0


def run_round(run: dict, runner: Runner, system: str, rep: int, workdir: Path,
              kafka_lib: Path, strata_bin: Path) -> list[str]:
    """One round of every workload against one freshly started system; returns errors."""
    sysdir = workdir / system
    broker = (brokers.KafkaBroker(sysdir, kafka_lib) if system == "kafka"
              else brokers.StrataBroker(sysdir, strata_bin))
    info = run["brokers"].setdefault(system, {"config": broker.config, "rounds": []})
    this = {"round": rep + 1, "loadavg_before": limits.loadavg()}
    info["rounds"].append(this)
    errors = []
    try:
        runner.run_system(broker, rep)
    except (RuntimeError, kadmin.KafkaError, OSError) as e:
        errors.append(f"{system} round {rep + 1}: {e}")
        log(f"{system}: ABORTED: {e}")
    info["command"] = getattr(broker, "command", [])
    this["exit_code"] = broker.exit_code
    this["log"] = str(broker.log_path)
    return errors


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        procs.kill_all()
