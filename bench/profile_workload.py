#!/usr/bin/env python3
"""Profiles one workload against Strata alone: the broker under `perf record`, the broker's and
the load generator's CPU, and the workload's figures, appended to bench/profiles/<ts>.md.

    python3 bench/profile_workload.py --gen kafka-perf --acks 1 --compression none \\
        [--records 2000000] [--rate 0] [--kafka] [--strata-bin build/strata]

--kafka profiles Apache Kafka instead (same harness start-up as bench/run.py). The page cache is
dropped before the workload, as in run.py. Needs perf and root (for the drop).
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))
from harness import brokers, kadmin, loadgen, procs  # noqa: E402
import run as bench_run  # noqa: E402


def context_switches(pid: int) -> tuple[int, int]:
    """(voluntary, involuntary) context switches of all of pid's threads so far."""
    vol = inv = 0
    for status in Path(f"/proc/{pid}/task").glob("*/status"):
        try:
            for line in status.read_text().splitlines():
                if line.startswith("voluntary_ctxt_switches:"):
                    vol += int(line.split()[1])
                elif line.startswith("nonvoluntary_ctxt_switches:"):
                    inv += int(line.split()[1])
        except OSError:  # the thread ended
            pass
    return vol, inv


def children_cpu() -> float:
    """CPU seconds of this process's waited-for children (the load generator)."""
    t = os.times()
    return t.children_user + t.children_system


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--gen", choices=["strata-bench", "kafka-perf"], default="kafka-perf")
    ap.add_argument("--acks", default="1")
    ap.add_argument("--compression", default="none")
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--rate", type=int, default=0)
    ap.add_argument("--kafka", action="store_true", help="profile Apache Kafka instead")
    ap.add_argument("--strata-bin", default=str(REPO / "build/strata"))
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--network-threads", type=int, help="Strata's num.network.threads")
    ap.add_argument("--consume", action="store_true",
                    help="profile consuming the produced topic from the start instead")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="strata-profile-"))
    kafka_lib = bench_run.find_kafka_lib(None)
    strata_bin = Path(args.strata_bin).resolve()
    log4j = work / "tools-log4j2.properties"
    log4j.write_text(brokers.LOG4J2)
    gen = (loadgen.StrataBench(work / "logs", bench_run.RECORD_SIZE, strata_bin)
           if args.gen == "strata-bench"
           else loadgen.KafkaPerf(work / "logs", bench_run.RECORD_SIZE, kafka_lib, log4j))
    broker = (brokers.KafkaBroker(work / "kafka", kafka_lib) if args.kafka
              else brokers.StrataBroker(work / "strata", strata_bin))
    if args.network_threads and not args.kafka:
        broker.config["num.network.threads"] = str(args.network_threads)
    broker.start()
    try:
        sampler = procs.ProcSampler(broker.pid)
        warm = "warmup"
        kadmin.create_topic(broker.bootstrap, warm, bench_run.PARTITIONS)
        gen.produce(broker.bootstrap, warm, 200_000, "1", "none", 0, "warmup")
        topic = f"p-{args.acks}-{args.compression}"
        kadmin.create_topic(broker.bootstrap, topic, bench_run.PARTITIONS)
        bench_run.drop_page_cache()
        if args.consume:  # produce first (not profiled); the consume reads the page cache
            gen.produce(broker.bootstrap, topic, args.records, args.acks, args.compression, 0,
                        "produce")
            os.sync()
        perf_data = work / "perf.data"
        perf = subprocess.Popen(["perf", "record", "-F", "999", "-g", "-p", str(broker.pid),
                                 "-o", str(perf_data)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        c0 = children_cpu()
        cs0 = context_switches(broker.pid)
        sampler.begin()
        r = (gen.consume(broker.bootstrap, topic, args.records, "profiled") if args.consume
             else gen.produce(broker.bootstrap, topic, args.records, args.acks, args.compression,
                              args.rate, "profiled"))
        r.update(sampler.end())
        client_cpu = children_cpu() - c0
        cs1 = context_switches(broker.pid)
        vol, inv = cs1[0] - cs0[0], cs1[1] - cs0[1]
        perf.send_signal(2)
        perf.wait()
        report = subprocess.run(["perf", "report", "-i", str(perf_data), "--no-children",
                                 "--sort", "sym"], capture_output=True, text=True).stdout
        top = [ln for ln in report.splitlines() if re.match(r"^\s+[0-9.]+%", ln)]
        gb = r.get("records", 0) * bench_run.RECORD_SIZE / 1e9
        system = "kafka" if args.kafka else "strata"
        ts = time.strftime("%Y%m%dT%H%MZ", time.gmtime())
        what = "consume" if args.consume else f"produce acks={args.acks} {args.compression}"
        out = BENCH / "profiles" / f"{ts}-{system}-{args.gen}-{what.replace(' ', '-')}.md"
        lines = [
            f"# {system} broker profile: {what} with "
            f"{args.gen}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", "",
            f"Command: `python3 bench/profile_workload.py --gen {args.gen} --acks {args.acks} "
            f"--compression {args.compression} --records {args.records} --rate {args.rate}"
            f"{' --consume' if args.consume else ''}"
            f"{f' --network-threads {args.network_threads}' if args.network_threads else ''}"
            f"{' --kafka' if args.kafka else ''}` (Strata {bench_run.git_head()}, "
            f"{os.cpu_count()} cores); page cache dropped before the workload.", "",
            f"Result: {r.get('records_per_s', 0):,.0f} records/s, {r.get('mb_per_s', 0):.1f} MB/s, "
            f"p50 {r.get('p50_ms')} p99 {r.get('p99_ms')} p99.9 {r.get('p999_ms')} ms; "
            f"wall {r.get('wall_s')} s; broker CPU {r.get('broker_cpu_s')} s "
            f"({r.get('broker_cpu_s', 0) / gb if gb else 0:.2f} s/GB); load generator CPU "
            f"{client_cpu:.2f} s ({client_cpu / gb if gb else 0:.2f} s/GB); broker context "
            f"switches {vol:,} voluntary + {inv:,} involuntary (under perf).", "",
            "Top symbols (broker process, perf record -F 999 -g, --no-children):", "", "```",
            *top[:args.top], "```", ""]
        out.write_text("\n".join(lines))
        print("\n".join(lines))
        print(f"written to {out}")
    finally:
        broker.stop()
        procs.kill_all()
        subprocess.run(["rm", "-rf", str(work)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
