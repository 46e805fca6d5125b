"""Transactions side by side: Apache Kafka (3 KRaft nodes) and Strata (etcd + 3 brokers), each on
a fresh cluster, one after the other. Topics RF 3, min.insync.replicas 2, 16 partitions;
__transaction_state at each system's defaults (50 partitions, RF 3, min ISR 2).

Producing: one librdkafka transactional producer (confluent-kafka; the same client for both)
commits transactions of 1, 10 and 100 records of 1024 B, round-robin over the partitions, back
to back for a fixed time per workload; then eight producers at once (one thread and
transactional id each) commit transactions of 1 record. Per workload: transactions/s, records/s, the latency of
the commit (commit_transaction after the records were acknowledged: AddPartitionsToTxn,
EndTxn, the markers) and of the whole transaction (begin to committed), p50 and p99.

Reading: a topic of READ_TXNS transactions of READ_PER_TXN records, every fifth aborted, read
from the start by a consumer at read_committed (which must skip the aborted ones) and one at
read_uncommitted: records/s from the first record delivered to the last.

Usage: bench/transactions.sh [--seconds S] [--systems kafka,strata] [--no-record]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from harness import brokers, env, kadmin, limits  # noqa: E402

SYSTEMS = ["kafka", "strata"]
PARTITIONS = 16
RECORD = 1024
# (records per transaction, producers at once)
WORKLOADS = [(1, 1), (10, 1), (100, 1), (1, 8)]
READ_TXNS, READ_PER_TXN, ABORT_EVERY = 200, 1000, 5
READ_RUNS = 5  # reads per isolation level (the median is reported): each lasts about a second


def log(msg: str) -> None:
    print(f"[transactions {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def produce_loop(bootstrap: str, topic: str, tid: str, per_txn: int, seconds: float,
                 ready=None) -> tuple[list[float], list[float], float]:
    """One transactional producer committing back to back: (commit ms, transaction ms, s)."""
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid,
                  "linger.ms": 5, "acks": "all"})
    p.init_transactions(60)
    if ready is not None:
        ready.wait()
    payload = os.urandom(RECORD)
    commits, txns = [], []
    records = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        t0 = time.perf_counter()
        p.begin_transaction()
        for i in range(per_txn):
            p.produce(topic, payload, partition=(records + i) % PARTITIONS)
        assert p.flush(60) == 0, "records not acknowledged"
        t1 = time.perf_counter()
        p.commit_transaction(60)
        t2 = time.perf_counter()
        commits.append((t2 - t1) * 1000)
        txns.append((t2 - t0) * 1000)
        records += per_txn
    return commits, txns, time.perf_counter() - start


def produce_workload(bootstrap: str, topic: str, per_txn: int, seconds: float,
                     producers: int = 1) -> dict:
    """`producers` transactional producers at once (threads: librdkafka waits without the GIL)."""
    import threading
    ready = threading.Barrier(producers)
    results: list = [None] * producers

    def run(i: int) -> None:
        results[i] = produce_loop(bootstrap, topic, f"bench-{topic}-{i}", per_txn, seconds, ready)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(producers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(results), "a producer failed"
    commits = [c for r in results for c in r[0]]
    txns = [t for r in results for t in r[1]]
    elapsed = max(r[2] for r in results)
    n = len(txns)
    return {"records_per_txn": per_txn, "producers": producers, "transactions": n,
            "records": n * per_txn, "seconds": elapsed, "txn_per_s": n / elapsed,
            "records_per_s": n * per_txn / elapsed,
            "commit_p50_ms": percentile(commits, 0.5), "commit_p99_ms": percentile(commits, 0.99),
            "txn_p50_ms": percentile(txns, 0.5), "txn_p99_ms": percentile(txns, 0.99)}


def write_read_topic(bootstrap: str, topic: str) -> int:
    """READ_TXNS transactions, every ABORT_EVERY-th aborted; the committed records' count."""
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"bench-{topic}",
                  "linger.ms": 5, "acks": "all"})
    p.init_transactions(60)
    payload = os.urandom(RECORD)
    committed = 0
    for t in range(READ_TXNS):
        p.begin_transaction()
        for i in range(READ_PER_TXN):
            p.produce(topic, payload, partition=i % PARTITIONS)
            if i % 1000 == 999:
                p.poll(0)
        if t % ABORT_EVERY == ABORT_EVERY - 1:
            assert p.flush(60) == 0
            p.abort_transaction(60)
        else:
            p.commit_transaction(60)
            committed += READ_PER_TXN
    return committed


def consume_all(bootstrap: str, topic: str, isolation: str, want: int) -> dict:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{isolation}-{time.time()}",
                  "isolation.level": isolation, "enable.auto.commit": False,
                  "fetch.max.bytes": 52428800,
                  # A full local queue (64 MiB) otherwise pauses fetching for 1 s: the broker
                  # that delivers faster than Python drains would be the one that waits.
                  "fetch.queue.backoff.ms": 10})
    c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
    got = 0
    start = None
    deadline = time.time() + 300
    while got < want and time.time() < deadline:
        n = sum(1 for m in c.consume(10000, 0.5) if m.error() is None)
        if n and start is None:
            start = time.perf_counter()  # timed from the first batch delivered on
        got += n
    elapsed = time.perf_counter() - (start or time.perf_counter())
    c.close()
    return {"isolation": isolation, "records": got, "seconds": elapsed,
            "records_per_s": got / elapsed, "complete": got == want}


def run_system(system: str, workdir: Path, kafka_lib: Path, strata_bin: Path,
               seconds: float) -> dict:
    cluster = (brokers.KafkaCluster(workdir / system, kafka_lib, 3) if system == "kafka"
               else brokers.StrataCluster(workdir / system, strata_bin, 3))
    cluster.start()
    out: dict = {"system": system, "produce": [], "consume": []}
    try:
        for per_txn, producers in WORKLOADS:
            topic = f"txn-{per_txn}x{producers}"
            kadmin.create_topic(cluster.live_bootstrap(), topic, PARTITIONS, replication_factor=3,
                                configs={"min.insync.replicas": "2"})
            kadmin.wait_full_isr(cluster.live_bootstrap(), topic, PARTITIONS, 3, timeout=60)
            # The first transactions create __transaction_state and find their coordinators:
            # not part of the figures.
            produce_workload(cluster.bootstrap, topic, per_txn, 0.5, producers)
            r = produce_workload(cluster.bootstrap, topic, per_txn, seconds, producers)
            log(f"{system}: {per_txn} records/txn x {producers} producers: "
                f"{r['txn_per_s']:.0f} txn/s, "
                f"commit p50 {r['commit_p50_ms']:.1f} ms p99 {r['commit_p99_ms']:.1f} ms")
            out["produce"].append(r)
            cluster.check_alive(f"{per_txn} records per transaction, {producers} producers")
        kadmin.create_topic(cluster.live_bootstrap(), "txn-read", PARTITIONS,
                            replication_factor=3, configs={"min.insync.replicas": "2"})
        kadmin.wait_full_isr(cluster.live_bootstrap(), "txn-read", PARTITIONS, 3, timeout=60)
        committed = write_read_topic(cluster.bootstrap, "txn-read")
        total = READ_TXNS * READ_PER_TXN
        for isolation, want in (("read_committed", committed), ("read_uncommitted", total)):
            runs = [consume_all(cluster.bootstrap, "txn-read", isolation, want)
                    for _ in range(READ_RUNS)]
            for r in runs:
                assert r["complete"], f"{system} {isolation}: read {r['records']} of {want}"
            r = sorted(runs, key=lambda x: x["records_per_s"])[READ_RUNS // 2]
            r["runs_records_per_s"] = [x["records_per_s"] for x in runs]
            log(f"{system}: {isolation}: {r['records']} records, median "
                f"{r['records_per_s']:.0f}/s of {r['runs_records_per_s']}")
            out["consume"].append(r)
    finally:
        cluster.stop()
        cluster.wipe()
    return out


def markdown(run: dict) -> str:
    by = {r["system"]: r for r in run["results"]}
    k, s = by.get("kafka"), by.get("strata")

    def cell(key, i, fmt, section="produce"):
        sv = s[section][i][key] if s else None
        kv = k[section][i][key] if k else None
        ratio = f" ({sv / kv:.2f})" if sv and kv else ""
        f = (lambda v: "-" if v is None else fmt.format(v))
        return f"{f(sv)} / {f(kv)}{ratio}"
    lines = [f"## Transactions ({run['started'][:10]}, `{run['command']}`)", "",
             f"Strata {run['versions'].get('strata_commit', '?')} vs Apache Kafka "
             f"{run['versions'].get('kafka_version', '?')}, each a fresh 3-broker cluster on "
             f"127.0.0.1 (Kafka: 3 KRaft combined nodes, 1 GiB heap each; Strata: etcd + 3 "
             f"brokers), topics of {PARTITIONS} partitions, RF 3, min.insync.replicas 2, "
             f"__transaction_state at defaults. confluent-kafka "
             f"{run['versions'].get('librdkafka', '?')} transactional producers (one, or "
             f"eight at once, each its own transactional id), "
             f"{RECORD} B random records, {run['seconds']:.0f} s per workload after a 0.5 s "
             f"warm-up. Commit = commit_transaction after every record was acknowledged; "
             f"transaction = begin to committed. Load average {' '.join(run['load'][0])} at the "
             f"start, {' '.join(run['load'][1])} at the end. Each cell: **Strata / Kafka "
             f"(Strata÷Kafka)**.", "",
             "| records per transaction × producers | transactions/s | records/s | "
             "commit p50 ms | commit p99 ms | transaction p50 ms | transaction p99 ms |",
             "|---|---|---|---|---|---|---|"]
    for i, (n, producers) in enumerate(WORKLOADS):
        lines.append(f"| {n} × {producers} | {cell('txn_per_s', i, '{:,.0f}')} | "
                     f"{cell('records_per_s', i, '{:,.0f}')} | "
                     f"{cell('commit_p50_ms', i, '{:.1f}')} | {cell('commit_p99_ms', i, '{:.1f}')} | "
                     f"{cell('txn_p50_ms', i, '{:.1f}')} | {cell('txn_p99_ms', i, '{:.1f}')} |")
    lines += ["", f"Reading {READ_TXNS} transactions of {READ_PER_TXN} records, every "
              f"{ABORT_EVERY}th aborted, from the start (one confluent-kafka consumer, every "
              f"partition assigned; records/s from the first record delivered to the last, median "
              f"of {READ_RUNS} reads; "
              "read_committed delivers the committed 80%; fetch.queue.backoff.ms 10, so a full "
              "client queue does not pause fetching for librdkafka's default 1 s):", "",
              "| isolation | records/s |", "|---|---|"]
    for i, iso in enumerate(("read_committed", "read_uncommitted")):
        lines.append(f"| {iso} | {cell('records_per_s', i, '{:,.0f}', 'consume')} |")
    lines += ["", "A transaction's time beyond its commit is the producer waiting for its "
              "records' acknowledgements (acks=all, linger.ms 5). The reads are bounded by the "
              "Python client (about a million records/s here), so their ratios say little "
              "beyond that neither level is slow.", "",
              f"Raw data: `bench/results/{run['file']}`.", ""]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10.0, help="per workload (default 10)")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--strata-bin", default=os.environ.get("STRATA_BIN", str(REPO / "build/strata")))
    ap.add_argument("--kafka-lib")
    ap.add_argument("--no-record", action="store_true", help="do not append to bench/RESULTS.md")
    args = ap.parse_args()
    systems = [s for s in SYSTEMS if s in args.systems.split(",")]
    strata_bin = Path(args.strata_bin).resolve()
    kafka_lib = env.find_kafka_lib(args.kafka_lib, log)
    if "kafka" in systems and kafka_lib is None:
        log("Apache Kafka jars not found (run bench/setup.sh, or pass --kafka-lib)")
        return 2
    for tool in ("etcd", "java"):
        if not shutil.which(tool):
            log(f"{tool} not found")
            return 2

    def on_term(signum, _frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, on_term)

    started = datetime.datetime.now(datetime.timezone.utc)
    ts = started.strftime("%Y%m%dT%H%M%SZ")
    workdir = BENCH / ".work" / f"transactions-{ts}"
    workdir.mkdir(parents=True, exist_ok=True)
    import confluent_kafka
    versions = env.versions(kafka_lib, strata_bin)
    versions["librdkafka"] = confluent_kafka.libversion()[0]
    versions["strata_commit"] = env.git_head()
    load_start = limits.loadavg()
    results = []
    try:
        for system in systems:
            log(f"{system}: starting a 3-broker cluster")
            results.append(run_system(system, workdir, kafka_lib, strata_bin, args.seconds))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    command = "bench/transactions.sh" + (f" --seconds {args.seconds:g}"
                                         if args.seconds != 10.0 else "")
    if systems != SYSTEMS:
        command += f" --systems {','.join(systems)}"
    run = {"started": started.isoformat(), "command": command, "seconds": args.seconds,
           "versions": versions, "load": [load_start, limits.loadavg()], "results": results,
           "file": f"transactions-{ts}.json"}
    (BENCH / "results" / run["file"]).write_text(json.dumps(run, indent=1))
    md = markdown(run)
    print(md)
    if not args.no_record:
        with open(BENCH / "RESULTS.md", "a") as f:
            f.write("\n" + md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
