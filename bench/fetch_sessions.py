"""Fetch sessions (KIP-227) side by side: Apache Kafka (one KRaft node) and Strata (one broker),
each with fetch sessions on (max.incremental.fetch.session.cache.slots=1000, the default) and off
(0), one after the other. One Java consumer (bench/java/FetchProbe.java, kafka-clients of
bench/kafka/pom.xml's version: the same client for both) assigns all PARTITIONS partitions of
a topic at their end while a producer trickles TRICKLE records/s into random partitions; over
the measured window: the consumer's requests/s and request bytes/s to the broker (its own node
metrics), bytes per request, and the broker's CPU (user+system, from /proc) per second.

Usage: bench/fetch_sessions.sh [--seconds S] [--partitions N] [--systems kafka,strata]
       [--no-record]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from harness import brokers, env, kadmin, limits, procs  # noqa: E402

SYSTEMS = ["kafka", "strata"]
TRICKLE = 200  # records/s
WARMUP = 5


def log(msg: str) -> None:
    print(f"[fetch-sessions {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def compile_probe(kafka_lib: Path, out: Path) -> str:
    out.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["javac", "-d", str(out), "-cp", f"{kafka_lib}/*",
                        str(BENCH / "java" / "FetchProbe.java")],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"javac FetchProbe: {r.stderr[-3000:]}")
    return f"{out}:{kafka_lib}/*"


class Trickle:
    """Produces `rate` records/s of 100 bytes into random partitions until stopped."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, rate: int):
        from confluent_kafka import Producer
        self.p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
        self.topic, self.partitions, self.rate = topic, partitions, rate
        self.stop_flag = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        rnd = random.Random(7)
        while not self.stop_flag.is_set():
            for _ in range(self.rate // 10):
                self.p.produce(self.topic, value=b"x" * 100,
                               partition=rnd.randrange(self.partitions))
            self.p.poll(0)
            time.sleep(0.1)
        self.p.flush(30)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop_flag.set()
        self.thread.join(60)


def measure(broker, classpath: str, partitions: int, seconds: float) -> dict:
    topic = f"sessions-{int(time.time() * 1000)}"
    kadmin.create_topic(broker.bootstrap, topic, partitions, timeout=300)
    cmd = ["java", "-Xmx512m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", classpath,
           "FetchProbe", broker.bootstrap, topic, str(partitions), str(WARMUP), str(int(seconds))]
    with Trickle(broker.bootstrap, topic, partitions, TRICKLE):
        probe = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        cpu0 = t0 = None
        result = None
        output = []
        for line in probe.stdout:
            output.append(line)
            if line.startswith("MEASURING"):
                cpu0, t0 = procs.cpu_seconds(broker.pid), time.monotonic()
            elif line.startswith("RESULT"):
                cpu1, t1 = procs.cpu_seconds(broker.pid), time.monotonic()
                result = dict((k, float(v)) for k, v in re.findall(r"(\w+)=([\d.]+)", line))
        probe.wait(120)
    if result is None or cpu0 is None:
        raise RuntimeError("FetchProbe gave no result:\n" + "".join(output[-40:]))
    window = t1 - t0
    return {"requests_per_s": result["requests"] / window,
            "request_bytes_per_s": result["request_bytes"] / window,
            "bytes_per_request": result["request_bytes"] / max(result["requests"], 1),
            "records_per_s": result["records"] / window,
            "broker_cpu_ms_per_s": 1000 * (cpu1 - cpu0) / window}


def run_system(system: str, sessions: bool, workdir: Path, kafka_lib: Path, strata_bin: Path,
               classpath: str, partitions: int, seconds: float) -> dict:
    slots = {"max.incremental.fetch.session.cache.slots": "1000" if sessions else "0"}
    wd = workdir / f"{system}-{'on' if sessions else 'off'}"
    if system == "kafka":
        b = brokers.KafkaBroker(wd, kafka_lib)
        b.config.update(slots)
    else:
        b = brokers.StrataBroker(wd, strata_bin, extra=slots)
    b.start()
    try:
        r = measure(b, classpath, partitions, seconds)
        b.check_alive("the measurement")
    finally:
        b.stop()
    return {"system": system, "sessions": sessions, **r}


def markdown(run: dict) -> str:
    v = run["versions"]
    lines = [f"## Fetch sessions: one consumer of {run['partitions']} partitions "
             f"({run['started'][:10]})", "",
             f"Command: `{run['command']}`. Apache Kafka {v['kafka_version']} (one KRaft node) and "
             f"Strata {v['strata_version']} (one broker), one after the other; the consumer is "
             f"kafka-clients {v['kafka_version']}, assigned every partition at its end while "
             f"{TRICKLE} records/s trickle in; {run['seconds']:g} s measured after {WARMUP} s. "
             f"Sessions off: max.incremental.fetch.session.cache.slots=0. Load average "
             f"{run['load'][0]} before, {run['load'][1]} after.", "",
             "| system | sessions | fetches/s | request KB/s | bytes/request | records/s | "
             "broker CPU ms/s | broker CPU ms/fetch |", "|---|---|---|---|---|---|---|---|"]
    for r in run["results"]:
        lines.append(f"| {r['system']} | {'on' if r['sessions'] else 'off'} | "
                     f"{r['requests_per_s']:.1f} | {r['request_bytes_per_s'] / 1024:.1f} | "
                     f"{r['bytes_per_request']:.0f} | {r['records_per_s']:.0f} | "
                     f"{r['broker_cpu_ms_per_s']:.0f} | "
                     f"{r['broker_cpu_ms_per_s'] / max(r['requests_per_s'], 1e-9):.1f} |")
    by = {(r["system"], r["sessions"]): r for r in run["results"]}
    notes = []
    for system in ("kafka", "strata"):
        on, off = by.get((system, True)), by.get((system, False))
        if on and off:
            per_fetch = [r["broker_cpu_ms_per_s"] / max(r["requests_per_s"], 1e-9) for r in (on, off)]
            notes.append(f"{system}: sessions take request bytes/s to "
                         f"{on['request_bytes_per_s'] / off['request_bytes_per_s']:.2f}x, broker "
                         f"CPU/s to {on['broker_cpu_ms_per_s'] / max(off['broker_cpu_ms_per_s'], 1e-9):.2f}x "
                         f"and broker CPU per fetch to {per_fetch[0] / max(per_fetch[1], 1e-9):.2f}x")
    for sessions in (True, False):
        k, s = by.get(("kafka", sessions)), by.get(("strata", sessions))
        if k and s:
            notes.append(f"sessions {'on' if sessions else 'off'}: Strata's broker CPU/s "
                         f"{s['broker_cpu_ms_per_s'] / max(k['broker_cpu_ms_per_s'], 1e-9):.2f}x "
                         f"Kafka's")
    lines += ["", "; ".join(notes) + ". (With sessions, fetches are smaller and answered sooner, so "
              "they come more often: CPU per second can rise while CPU per fetch falls. An "
              "incremental fetch still reads every partition of its session, on both systems.)",
              "", f"Raw data: `bench/results/{run['file']}`.", ""]
    return "\n".join(lines)


def rerender(json_path: Path) -> str:
    """The markdown of an earlier run (bench/results/fetch-sessions-*.json)."""
    return markdown(json.loads(json_path.read_text()))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seconds", type=float, default=20.0, help="measured (default 20)")
    ap.add_argument("--partitions", type=int, default=2000)
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
    workdir = BENCH / ".work" / f"fetch-sessions-{ts}"
    workdir.mkdir(parents=True, exist_ok=True)
    load_start = limits.loadavg()
    results = []
    try:
        classpath = compile_probe(kafka_lib, workdir / "classes")
        for system in systems:
            for sessions in (True, False):
                log(f"{system}, sessions {'on' if sessions else 'off'}")
                results.append(run_system(system, sessions, workdir, kafka_lib, strata_bin,
                                          classpath, args.partitions, args.seconds))
                log(json.dumps(results[-1]))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    command = "bench/fetch_sessions.sh"
    if args.seconds != 20.0:
        command += f" --seconds {args.seconds:g}"
    if args.partitions != 2000:
        command += f" --partitions {args.partitions}"
    run = {"started": started.isoformat(), "command": command, "seconds": args.seconds,
           "partitions": args.partitions, "versions": env.versions(kafka_lib, strata_bin),
           "load": [load_start, limits.loadavg()], "results": results,
           "file": f"fetch-sessions-{ts}.json"}
    (BENCH / "results" / run["file"]).write_text(json.dumps(run, indent=1))
    md = markdown(run)
    print(md)
    if not args.no_record:
        with open(BENCH / "RESULTS.md", "a") as f:
            f.write("\n" + md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
