#!/usr/bin/env python3
"""Self-healing time: a broker holding half of a cluster's replicas is SIGKILLed, and the
balancer re-places them on the others once strata.balancer.broker.failure.timeout.ms passes.

    bench/heal.sh [--partitions 1000] [--failure-timeout-ms 60000]
                  [--execution-concurrency N] [--no-record]

1. etcd and 4 Strata brokers with the balancer's defaults (on; 10 s load samples; 60 s cycles
   are not waited for: a broker's death past the timeout wakes the controller).
2. --partitions partitions at RF 2 in topics of 100, tiered (file:// remote store), every
   even partition with a replica on broker 4 (half the partitions; a quarter led by it), one
   record in each; waits until every ISR is full and the controller has a load sample of
   every broker.
3. SIGKILLs broker 4 and polls Metadata every 0.5 s until every partition has 2 replicas on
   live brokers and a full ISR. Reported: when the controller first planned the heal (its
   /v1/balancer shows broker 4 dead), when the last partition was whole again, and how that
   compares with the goal (failure timeout + 30 s); then every record is read back.

Writes bench/results/heal-<ts>.json and .md and appends the section to bench/RESULTS.md (not
with --no-record).
"""
from __future__ import annotations

import argparse
import datetime
import json
import shutil
import sys
import time
import urllib.request
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from harness import brokers, env  # noqa: E402

TOPIC_PARTITIONS = 100
VICTIM = 4


def log(msg: str) -> None:
    print(f"[heal {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def get_json(b, path: str):
    url = f"http://{b.config['strata.admin.listener']}{path}"
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


def whole(admin, topics: list[str], live: set[int]) -> int:
    """Partitions with 2 replicas, all on live brokers and all in the ISR."""
    md = admin.list_topics(timeout=30)
    n = 0
    for t in topics:
        for p in md.topics[t].partitions.values():
            if len(p.replicas) == 2 and set(p.replicas) <= live and set(p.isrs) == set(p.replicas):
                n += 1
    return n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--strata-bin", default=str(BENCH.parent / "build" / "strata"))
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--failure-timeout-ms", type=int, default=60000)
    ap.add_argument("--execution-concurrency", type=int, default=0,
                    help="strata.balancer.execution.concurrency (0: the broker's default)")
    ap.add_argument("--deadline-s", type=float, default=900)
    ap.add_argument("--no-record", action="store_true")
    args = ap.parse_args()
    strata_bin = Path(args.strata_bin).resolve()
    if not strata_bin.exists() or not shutil.which("etcd"):
        log("needs build/strata and etcd (scripts/install-test-deps.sh)")
        return 2
    started = datetime.datetime.now(datetime.timezone.utc)
    ts = started.strftime("%Y%m%dT%H%M%SZ")
    workdir = BENCH / ".work" / f"heal-{ts}"
    remote = workdir / "remote"
    remote.mkdir(parents=True)
    cluster = brokers.StrataCluster(workdir, strata_bin, 4)
    for b in cluster.nodes:
        b.config.update({"strata.admin.listener": f"127.0.0.1:{brokers.free_port()}",
                         "strata.balancer.broker.failure.timeout.ms": str(args.failure_timeout_ms),
                         "remote.log.storage.system.enable": "true",
                         "strata.remote.storage.uri": f"file://{remote}"})
        if args.execution_concurrency:
            b.config["strata.balancer.execution.concurrency"] = str(args.execution_concurrency)
    run: dict = {"started_utc": started.isoformat(timespec="seconds"), "config": vars(args),
                 "strata_version": env.versions(None, strata_bin)}
    try:
        log("starting etcd and 4 brokers")
        cluster.start()
        from confluent_kafka import Consumer, Producer, TopicPartition
        from confluent_kafka.admin import AdminClient, NewTopic
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        others = [1, 2, 3]
        topics = [f"heal-{i}" for i in range((args.partitions + TOPIC_PARTITIONS - 1)
                                             // TOPIC_PARTITIONS)]
        on_victim = 0
        for i, t in enumerate(topics):
            n = min(TOPIC_PARTITIONS, args.partitions - i * TOPIC_PARTITIONS)
            assignment = []
            for p in range(n):
                a, b = others[(p + i) % 3], others[(p + i + 1) % 3]
                assignment.append([VICTIM, a] if p % 4 == 0 else [a, VICTIM] if p % 2 == 0
                                  else [a, b])
                on_victim += p % 2 == 0
            admin.create_topics([NewTopic(t, n, replica_assignment=assignment, config={
                "remote.storage.enable": "true", "retention.ms": "-1",
                "min.insync.replicas": "1"})])[t].result(120)
        log(f"{len(topics)} topics, {args.partitions} partitions, {on_victim} replicas on "
            f"broker {VICTIM}")
        producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all",
                             "linger.ms": 20})
        md = admin.list_topics(timeout=60)
        for t in topics:
            for p in md.topics[t].partitions:
                producer.produce(t, value=f"{t}-{p}".encode(), partition=p)
        assert producer.flush(120) == 0
        live = {1, 2, 3, 4}
        deadline = time.monotonic() + 300
        while whole(admin, topics, live) < args.partitions:
            assert time.monotonic() < deadline, "ISRs not full"
            time.sleep(1)
        ctl_id = cluster.controller()
        ctl = cluster.node(ctl_id)
        while len(get_json(ctl, "/v1/balancer").get("broker_load", [])) < 4:
            assert time.monotonic() < deadline, "no load sample of every broker"
            time.sleep(1)
        log(f"ready; controller is broker {ctl_id}; killing broker {VICTIM}")
        killed = cluster.node(VICTIM).kill()
        live = {1, 2, 3}
        if ctl_id == VICTIM:
            ctl = None
        planned_s = healed_s = None
        progress = []
        while True:
            now = time.monotonic() - killed
            if ctl is None:
                try:
                    ctl = cluster.node(cluster.controller())
                except Exception:  # noqa: BLE001 (no controller yet)
                    pass
            if ctl is not None and planned_s is None:
                status = get_json(ctl, "/v1/balancer")
                if VICTIM in (status.get("last_plan") or {}).get("dead_brokers", []):
                    planned_s = now
                    log(f"heal planned at {now:.1f} s: "
                        f"{len(status['last_plan'].get('moves', []))} moves")
            done = whole(admin, topics, live)
            progress.append((round(now, 1), done))
            if done == args.partitions:
                healed_s = now
                break
            if now > args.deadline_s:
                break
            time.sleep(0.5)
        log(f"healed at {healed_s} s" if healed_s else f"not healed within {args.deadline_s} s")
        c = Consumer({"bootstrap.servers": cluster.live_bootstrap(), "group.id": "heal-check",
                      "enable.auto.commit": False})
        read = 0
        for t in topics:
            for p in md.topics[t].partitions:
                lo, hi = c.get_watermark_offsets(TopicPartition(t, p), timeout=30)
                read += hi - lo
        c.close()
        goal_s = args.failure_timeout_ms / 1000 + 30
        run.update({"replicas_on_killed_broker": on_victim, "controller": ctl_id,
                    "planned_s": planned_s, "healed_s": healed_s, "goal_s": goal_s,
                    "records_readable": read, "progress": progress[::10]})
        log(f"records readable: {read} of {args.partitions}")
    finally:
        cluster.stop()
    out = BENCH / "results" / f"heal-{ts}.json"
    out.write_text(json.dumps(run, indent=2) + "\n")
    conc = args.execution_concurrency or "the default (50)"
    md_text = (
        f"\n## Self-healing: broker with {run['replicas_on_killed_broker']} of "
        f"{args.partitions} RF 2 partitions SIGKILLed ({started:%Y-%m-%d %H:%M} UTC)\n\n"
        f"`bench/heal.sh --partitions {args.partitions} --failure-timeout-ms "
        f"{args.failure_timeout_ms}"
        + (f" --execution-concurrency {args.execution_concurrency}" if args.execution_concurrency
           else "") + "` (4 brokers, 1 etcd, tiered topics on a file:// store, balancer "
        f"defaults, execution concurrency {conc}; controller broker {run['controller']}).\n\n"
        f"| failure timeout | heal planned | every partition whole again | goal (timeout + 30 s) "
        f"| records readable |\n|---|---|---|---|---|\n"
        f"| {args.failure_timeout_ms / 1000:.0f} s | {run['planned_s'] or float('nan'):.1f} s "
        f"| {run['healed_s'] or float('nan'):.1f} s | {run['goal_s']:.0f} s "
        f"({'met' if run['healed_s'] and run['healed_s'] <= run['goal_s'] else 'missed'}) "
        f"| {run['records_readable']} of {args.partitions} |\n")
    (BENCH / "results" / f"heal-{ts}.md").write_text(md_text)
    if not args.no_record:
        with open(BENCH / "RESULTS.md", "a") as f:
            f.write(md_text)
    print(md_text)
    return 0 if run["healed_s"] else 1


if __name__ == "__main__":
    sys.exit(main())
