"""Consumer group rebalances side by side: Apache Kafka (one KRaft node) and Strata (one
broker), each with the classic protocol (kafka-clients' default assignors: eager range) and
KIP-848's consumer protocol (the broker's uniform assignor). bench/java/RebalanceProbe.java
(kafka-clients of bench/kafka/pom.xml's version, the same client for both) runs MEMBERS
consumers of a PARTITIONS-partition topic in one JVM while TRICKLE records/s trickle into every
partition; once the group has settled, one more member joins. Per run: the rebalance time
(until every partition is held, spread within one, the new member included) and the longest
stall of the original members (their longest time without records from the join until 2 s
after the rebalance). ROUNDS runs per system and protocol; the medians are reported.

Usage: bench/rebalance.sh [--rounds N] [--systems kafka,strata] [--no-record]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from harness import brokers, env, kadmin, limits  # noqa: E402

SYSTEMS = ["kafka", "strata"]
PROTOCOLS = ["classic", "consumer"]
PARTITIONS = 60
MEMBERS = 6
TRICKLE = 1200  # records/s over all partitions


def log(msg: str) -> None:
    print(f"[rebalance {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def compile_probe(kafka_lib: Path, out: Path) -> str:
    out.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["javac", "-d", str(out), "-cp", f"{kafka_lib}/*",
                        str(BENCH / "java" / "RebalanceProbe.java")],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"javac RebalanceProbe: {r.stderr[-3000:]}")
    return f"{out}:{kafka_lib}/*"


class Trickle:
    """Produces `rate` records/s of 100 bytes round-robin over every partition until stopped."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, rate: int):
        from confluent_kafka import Producer
        self.p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
        self.topic, self.partitions, self.rate = topic, partitions, rate
        self.stop_flag = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        i = 0
        while not self.stop_flag.is_set():
            for _ in range(self.rate // 20):
                self.p.produce(self.topic, value=b"x" * 100, partition=i % self.partitions)
                i += 1
            self.p.poll(0)
            time.sleep(0.05)
        self.p.flush(30)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop_flag.set()
        self.thread.join(60)


def one_rebalance(broker, classpath: str, protocol: str, round_no: int) -> dict:
    topic = f"rebalance-{protocol}-{round_no}-{int(time.time() * 1000)}"
    kadmin.create_topic(broker.bootstrap, topic, PARTITIONS, timeout=120)
    cmd = ["java", "-Xmx512m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", classpath,
           "RebalanceProbe", broker.bootstrap, topic, str(PARTITIONS), f"g-{topic}", protocol,
           str(MEMBERS)]
    with Trickle(broker.bootstrap, topic, PARTITIONS, TRICKLE):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    m = re.search(r"RESULT (.*)", r.stdout)
    if r.returncode != 0 or not m:
        raise RuntimeError(f"RebalanceProbe failed ({r.returncode}):\n{(r.stdout + r.stderr)[-4000:]}")
    return {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", m.group(1))}


def run_system(system: str, workdir: Path, kafka_lib: Path, strata_bin: Path, classpath: str,
               rounds: int) -> list[dict]:
    wd = workdir / system
    b = brokers.KafkaBroker(wd, kafka_lib) if system == "kafka" else brokers.StrataBroker(wd, strata_bin)
    b.start()
    out = []
    try:
        for protocol in PROTOCOLS:
            runs = []
            for i in range(rounds):
                runs.append(one_rebalance(b, classpath, protocol, i))
                log(f"{system} {protocol} round {i}: {runs[-1]}")
            out.append({"system": system, "protocol": protocol, "runs": runs,
                        **{k: statistics.median(r[k] for r in runs) for k in runs[0]}})
        b.check_alive("the measurement")
    finally:
        b.stop()
    return out


def markdown(run: dict) -> str:
    v = run["versions"]
    lines = [f"## Consumer group rebalance: a 7th member joins 6 on {PARTITIONS} partitions "
             f"({run['started'][:10]})", "",
             f"Command: `{run['command']}`. Apache Kafka {v['kafka_version']} (one KRaft node) and "
             f"Strata {v['strata_version']} (one broker), one after the other, default group "
             f"settings; the members are kafka-clients {v['kafka_version']} in one JVM, "
             f"{TRICKLE} records/s trickling into every partition. Classic: the client's default "
             f"assignors (eager range); consumer: KIP-848, the broker's uniform assignor. Median "
             f"of {run['rounds']} rounds each. Load average {run['load'][0]} before, "
             f"{run['load'][1]} after.", "",
             "| system | protocol | rebalance ms | longest stall ms (worst member) | "
             "stall ms (median member) |", "|---|---|---|---|---|"]
    for r in run["results"]:
        lines.append(f"| {r['system']} | {r['protocol']} | {r['rebalance_ms']:.0f} | "
                     f"{r['max_stall_ms']:.0f} | {r['median_stall_ms']:.0f} |")
    by = {(r["system"], r["protocol"]): r for r in run["results"]}
    notes = []
    for protocol in PROTOCOLS:
        k, s = by.get(("kafka", protocol)), by.get(("strata", protocol))
        if k and s:
            notes.append(f"{protocol}: Strata's rebalance time "
                         f"{s['rebalance_ms'] / max(k['rebalance_ms'], 1e-9):.2f}x Kafka's, worst stall "
                         f"{s['max_stall_ms'] / max(k['max_stall_ms'], 1e-9):.2f}x")
    lines += ["", "; ".join(notes) + ". (A rebalance's time is mostly the members' heartbeat "
              "interval, 3 s in the classic client and 5 s from a KIP-848 broker, before they "
              "learn of the change; the stall is what they feel: a poll-sized gap when members "
              "keep consuming through it, the revoke-to-assign time of an eager rebalance "
              "otherwise.)", "", f"Raw data: `bench/results/{run['file']}`.", ""]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--strata-bin", default=os.environ.get("STRATA_BIN", str(REPO / "build/strata")))
    ap.add_argument("--kafka-lib")
    ap.add_argument("--no-record", action="store_true", help="do not append to bench/RESULTS.md")
    args = ap.parse_args()
    systems = [s for s in SYSTEMS if s in args.systems.split(",")]
    strata_bin = Path(args.strata_bin).resolve()
    kafka_lib = env.find_kafka_lib(args.kafka_lib, log)
    if kafka_lib is None:
        log("Apache Kafka jars not found (run bench/setup.sh, or pass --kafka-lib)")
        return 2

    def on_term(signum, _frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, on_term)

    started = datetime.datetime.now(datetime.timezone.utc)
    ts = started.strftime("%Y%m%dT%H%M%SZ")
    workdir = BENCH / ".work" / f"rebalance-{ts}"
    workdir.mkdir(parents=True, exist_ok=True)
    load_start = limits.loadavg()
    results = []
    try:
        classpath = compile_probe(kafka_lib, workdir / "classes")
        for system in systems:
            results += run_system(system, workdir, kafka_lib, strata_bin, classpath, args.rounds)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    command = "bench/rebalance.sh" + (f" --rounds {args.rounds}" if args.rounds != 3 else "")
    run = {"started": started.isoformat(), "command": command, "rounds": args.rounds,
           "versions": env.versions(kafka_lib, strata_bin), "load": [load_start, limits.loadavg()],
           "results": results, "file": f"rebalance-{ts}.json"}
    (BENCH / "results" / run["file"]).write_text(json.dumps(run, indent=1))
    md = markdown(run)
    print(md)
    if not args.no_record:
        with open(BENCH / "RESULTS.md", "a") as f:
            f.write("\n" + md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
