#!/usr/bin/env python3
"""Strata's balancer plan against `kafka-reassign-partitions --generate` (Kafka's only built-in
planner), both scored on the same measured load of a real 4-broker cluster under skew.

    bench/plan_vs_generate.sh [--topics 4] [--partitions 8] [--rates 400,200,100,50]

1. etcd and 4 Strata brokers (strata.balancer.enable=false: nothing moves by itself; every
   broker publishes its load every --metrics-ms to __strata_metrics).
2. --topics topics of --partitions partitions at RF 2, every partition with a replica on
   broker 1 and the other spread over brokers 2-4 (broker 1 leads them all); topic i is
   produced at --rates[i] kB/s (1 kB records, acks=all) for --load-s seconds, partition p
   of a topic getting a share proportional to 1/(p+1)^--partition-skew (hot keys).
3. With the load running: Strata's dry-run plan (`GET /v1/balancer/plan` on the active
   controller) and Kafka's proposal (`kafka-reassign-partitions --generate
   --topics-to-move-json-file <the topics> --broker-list 1,2,3,4`, run against the same
   cluster).
4. Each placement (now, Strata's, Kafka's) is scored on the load measured from
   __strata_metrics (each partition's rates over the last --window samples of each broker, as
   the balancer reads them) with the balancer's load model: a broker's network in is the bytes
   in of every replica it holds (produce and replication), its network out what it leads
   (consumer bytes plus the replication to its followers); the leader is the first replica.
   Reported: max/avg of network in, network out and leader count over the 4 brokers, and the
   replicas each plan adds (what it would copy).

Writes bench/results/plan-vs-generate-<ts>.json and .md and appends the section to
bench/RESULTS.md (not with --no-record).
"""
from __future__ import annotations

import argparse
import datetime
import json
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from harness import brokers, env  # noqa: E402

RECORD = 1000
REASSIGN = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"


def log(msg: str) -> None:
    print(f"[plan-vs-generate {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def get_json(b, path: str):
    with urllib.request.urlopen(f"http://{b.config['strata.admin.listener']}{path}",
                                timeout=60) as r:
        return json.load(r)


class Load:
    """Produces each topic at its rate (bytes/s), spread over its partitions, until stopped."""

    def __init__(self, bootstrap: str, rates: dict[str, int], partitions: int, skew: float):
        from confluent_kafka import Producer
        self.rates, self.partitions = rates, partitions
        # Within a topic, partition p gets a share proportional to 1 / (p + 1)^skew (hot keys).
        w = [1 / (p + 1) ** skew for p in range(partitions)]
        self.shares = [x / sum(w) for x in w]
        self.p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 20})
        self.stop = threading.Event()
        self.errors = 0
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        tick = 0.05
        carry = {(t, p): 0.0 for t in self.rates for p in range(self.partitions)}
        value = b"x" * RECORD

        def done(err, _msg):
            if err is not None:
                self.errors += 1
        while not self.stop.is_set():
            t0 = time.time()
            for topic, rate in self.rates.items():
                for p, share in enumerate(self.shares):
                    carry[(topic, p)] += rate * share * tick / RECORD
                    while carry[(topic, p)] >= 1:
                        carry[(topic, p)] -= 1
                        self.p.produce(topic, value, partition=p, on_delivery=done)
            self.p.poll(0)
            time.sleep(max(0.0, tick - (time.time() - t0)))
        self.p.flush(30)


def measured_load(bootstrap: str, window: int) -> dict[tuple[str, int], dict]:
    """Per partition: bytes in and out per second, summed over the brokers reporting it, each
    broker's averaged over its last `window` samples (the balancer's LoadWindow)."""
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "plan-vs-generate",
                  "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    tp = TopicPartition("__strata_metrics", 0, 0)
    end = c.get_watermark_offsets(tp, timeout=10)[1]
    c.assign([tp])
    per_broker: dict[int, list[dict]] = {}
    pos = 0
    while pos < end:
        for m in c.consume(500, timeout=1):
            if m.error():
                continue
            pos = m.offset() + 1
            s = json.loads(m.value())
            per_broker.setdefault(s["broker"], []).append(s)
    c.close()
    load: dict[tuple[str, int], dict] = {}
    for samples in per_broker.values():
        last = samples[-window:]
        for s in last:
            for p in s["partitions"]:
                d = load.setdefault((p["topic"], p["partition"]), {"in": 0.0, "out": 0.0})
                d["in"] += p["bytes_in_per_sec"] / len(last)
                d["out"] += p["bytes_out_per_sec"] / len(last)
    return load


def score(placement: dict[tuple[str, int], list[int]], load: dict, nodes: list[int]) -> dict:
    net_in = {b: 0.0 for b in nodes}
    net_out = {b: 0.0 for b in nodes}
    leaders = {b: 0 for b in nodes}
    for key, replicas in placement.items():
        d = load.get(key, {"in": 0.0, "out": 0.0})
        for r in replicas:
            net_in[r] += d["in"]
        net_out[replicas[0]] += d["out"] + (len(replicas) - 1) * d["in"]
        leaders[replicas[0]] += 1

    def ratio(v: dict) -> float:
        avg = sum(v.values()) / len(v)
        return round(max(v.values()) / avg, 3) if avg > 0 else 0.0
    return {"network_in_max_over_avg": ratio(net_in), "network_out_max_over_avg": ratio(net_out),
            "leaders_max_over_avg": ratio(leaders),
            "network_in_kBps": {b: round(v / 1000, 1) for b, v in net_in.items()},
            "leaders": leaders}


def added(before: dict, after: dict) -> int:
    return sum(len(set(after[k]) - set(before[k])) for k in before)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--topics", type=int, default=4)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--rates", default="400,200,100,50", help="kB/s per topic")
    ap.add_argument("--partition-skew", type=float, default=1.0,
                    help="zipf exponent of the load over a topic's partitions (0: even)")
    ap.add_argument("--load-s", type=int, default=30, help="load before planning")
    ap.add_argument("--metrics-ms", type=int, default=2000)
    ap.add_argument("--window", type=int, default=6)
    ap.add_argument("--strata-bin", default=str(REPO / "build/strata"))
    ap.add_argument("--kafka-lib")
    ap.add_argument("--no-record", action="store_true")
    args = ap.parse_args()
    rates_k = [int(x) for x in args.rates.split(",")]
    if len(rates_k) != args.topics:
        log("--rates needs one rate per topic")
        return 2
    started = datetime.datetime.now(datetime.timezone.utc)
    ts = started.strftime("%Y%m%dT%H%M%SZ")
    workdir = BENCH / ".work" / f"plan-vs-generate-{ts}"
    kafka_lib = env.find_kafka_lib(args.kafka_lib)
    strata_bin = Path(args.strata_bin).resolve()
    if kafka_lib is None or not strata_bin.exists() or not shutil.which("etcd"):
        log("needs Kafka's jars (bench/setup.sh), build/strata and etcd")
        return 2
    nodes = [1, 2, 3, 4]
    cluster = brokers.StrataCluster(workdir, strata_bin, len(nodes))
    for b in cluster.nodes:
        b.config.update({"strata.admin.listener": f"127.0.0.1:{brokers.free_port()}",
                         "strata.balancer.metrics.interval.ms": str(args.metrics_ms),
                         "strata.balancer.metrics.window.samples": str(args.window),
                         "strata.balancer.metrics.stale.ms": str(10 * args.metrics_ms),
                         "strata.balancer.traffic.floor.bytes.per.sec": "10000",
                         "strata.balancer.max.moves.per.cycle": "1000"})
    run: dict = {"started_utc": started.isoformat(timespec="seconds"), "config": vars(args),
                 "strata_version": env.versions(kafka_lib, strata_bin)}
    try:
        log("starting etcd and 4 brokers")
        cluster.start()
        from confluent_kafka.admin import AdminClient, NewTopic
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        topics = [f"skew-{i}" for i in range(args.topics)]
        others = [2, 3, 4]
        for i, t in enumerate(topics):
            assignment = [[1, others[(p + i) % 3]] for p in range(args.partitions)]
            admin.create_topics([NewTopic(t, args.partitions, replica_assignment=assignment,
                                          config={"min.insync.replicas": "1"})])[t].result(60)
        before = {(t, p): [1, others[(p + i) % 3]] for i, t in enumerate(topics)
                  for p in range(args.partitions)}
        load = Load(cluster.bootstrap, {t: r * 1000 for t, r in zip(topics, rates_k)},
                    args.partitions, args.partition_skew)
        load.thread.start()
        log(f"producing {args.rates} kB/s to {args.topics} topics for {args.load_s} s")
        time.sleep(args.load_s)
        ctl = next(b for b in cluster.nodes if get_json(b, "/v1/balancer")["active_controller"])
        plan = get_json(ctl, "/v1/balancer/plan")
        strata = dict(before)
        for m in plan["moves"]:
            if (m["topic"], m["partition"]) in strata:
                strata[(m["topic"], m["partition"])] = m["replicas_after"]
        tfile = workdir / "topics.json"
        tfile.write_text(json.dumps({"version": 1, "topics": [{"topic": t} for t in topics]}))
        out = subprocess.run(["java", "-Xmx512m", "-cp", f"{kafka_lib}/*", REASSIGN,
                              "--bootstrap-server", cluster.bootstrap, "--topics-to-move-json-file",
                              str(tfile), "--broker-list", "1,2,3,4", "--generate"],
                             capture_output=True, text=True, timeout=120).stdout
        proposed = [json.loads(line) for line in out.splitlines() if line.startswith("{")][-1]
        kafka = dict(before)
        for p in proposed["partitions"]:
            kafka[(p["topic"], p["partition"])] = p["replicas"]
        measured = measured_load(cluster.bootstrap, args.window)
        load.stop.set()
        load.thread.join(60)
        run["results"] = {
            "now": score(before, measured, nodes),
            "strata": {**score(strata, measured, nodes), "replicas_added": added(before, strata),
                       "plan_ms": plan.get("plan_ms")},
            "kafka_generate": {**score(kafka, measured, nodes),
                               "replicas_added": added(before, kafka)},
        }
        run["produce_errors"] = load.errors
        run["measured_kBps"] = {f"{t}-{p}": round(d["in"] / 1000, 1)
                                for (t, p), d in sorted(measured.items()) if t in topics}
        cluster.check_alive("the benchmark")
    finally:
        cluster.stop()
        cluster.wipe()
    run["strata_commit"] = env.git_head()
    out_dir = BENCH / "results"
    out_dir.mkdir(exist_ok=True)
    (out_dir / f"plan-vs-generate-{ts}.json").write_text(json.dumps(run, indent=1, default=str))
    md = markdown(run, f"bench/results/plan-vs-generate-{ts}.json")
    (out_dir / f"plan-vs-generate-{ts}.md").write_text(md)
    print(md)
    if not args.no_record:
        with open(BENCH / "RESULTS.md", "a") as f:
            f.write("\n" + md)
    return 0


def markdown(run: dict, raw: str) -> str:
    c, r = run["config"], run["results"]
    ts = run["started_utc"]
    rows = [("placement now", r["now"], ""), ("Strata's plan", r["strata"], r["strata"]),
            ("`kafka-reassign-partitions --generate`", r["kafka_generate"], r["kafka_generate"])]
    lines = [
        f"## {ts[:10]} {ts[11:16]} UTC — Balancer plan vs `kafka-reassign-partitions --generate` "
        f"on a skewed 4-broker cluster (`bench/plan_vs_generate.sh`, Strata "
        f"{run['strata_commit'][:7]})",
        "",
        f"{c['topics']} topics of {c['partitions']} partitions at RF 2, each partition with a "
        f"replica on broker 1 (which leads them all), produced at {c['rates']} kB/s per topic "
        f"(1 kB records, acks=all; within a topic partition p gets a share proportional to "
        f"1/(p+1)^{c['partition_skew']}, hot keys) for {c['load_s']} s; both plans asked for with the load "
        f"running and scored on the load measured from `__strata_metrics` (last {c['window']} "
        f"samples of {c['metrics_ms']} ms per broker) with the balancer's load model. Machine: "
        f"2 cores, everything on 127.0.0.1.",
        "",
        "| placement | network in max/avg | network out max/avg | leaders max/avg | replicas "
        "added | network in per broker (kB/s) |",
        "|---|---|---|---|---|---|",
    ]
    for name, s, extra in rows:
        add = extra.get("replicas_added", "") if extra else ""
        per = ", ".join(f"{b}: {v}" for b, v in s["network_in_kBps"].items())
        lines.append(f"| {name} | {s['network_in_max_over_avg']} | "
                     f"{s['network_out_max_over_avg']} | {s['leaders_max_over_avg']} | {add} | "
                     f"{per} |")
    lines += ["", "Kafka's `--generate` places replicas round-robin without looking at load, "
              "and proposes a new assignment for every partition of the topics; Strata's plan "
              "moves only what takes a broker outside the band (+-10 % of the average) and "
              "stops once every broker is within half of it. Leader counts here are over "
              "these topics only; Strata's leader-count goal balances every partition's "
              "leadership, internal topics included (`__consumer_offsets` has 50), after the "
              "network goals.", "", f"Raw data: `{raw}`.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
