#!/usr/bin/env python3
"""Scaling onto a standby broker: how long from the start of a load surge until a standby
broker is active and the load balanced onto it, and from the end of the surge until it is
drained back to standby.

    bench/surge.sh [--capacity 1000000] [--rate 1500000] [--sustain-ms 30000] [--no-record]

1. etcd, brokers 1-3 active and broker 4 standby (strata.broker.standby=true), each declaring
   --capacity bytes/s of network in and out; the balancer on with scaling
   (strata.balancer.scaling.enable=true, the default thresholds 0.8 and 0.3, sustain
   --sustain-ms), load samples every 2 s over a window of 3, a cycle every 5 s, and a hook
   command that records each scale event with its time.
2. A tiered topic of 12 partitions at RF 2 on brokers 1-3. An idempotent producer (acks=all,
   1 kB records; retries through leader moves add no duplicates)
   sends --rate bytes/s: at RF 2 that is 2 x rate of network in over 3 x capacity.
3. Reported from the start of the surge: the scale_out event (the hook ran), and "balanced":
   broker 4 holds replicas, no move is in flight and the controller's plan has no move.
   Then the producer stops; from then: drain_started and scale_in (broker 4 standby again,
   holding nothing). Every acknowledged record is read back at the end.

Writes bench/results/surge-<ts>.json and .md and appends the section to bench/RESULTS.md (not
with --no-record).
"""
from __future__ import annotations

import argparse
import datetime
import json
import shutil
import sys
import threading
import time
import urllib.request
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from harness import brokers, env  # noqa: E402

RECORD = 1000
PARTITIONS = 12


def log(msg: str) -> None:
    print(f"[surge {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def get_json(b, path: str):
    url = f"http://{b.config['strata.admin.listener']}{path}"
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


class Load(threading.Thread):
    """Produces `rate` bytes/s of RECORD-byte records round robin until stopped; counts acks."""

    def __init__(self, bootstrap: str, topic: str, rate: int):
        super().__init__(daemon=True)
        from confluent_kafka import Producer
        self.producer = Producer({"bootstrap.servers": bootstrap, "acks": "all",
                                  "enable.idempotence": True, "linger.ms": 5, "message.timeout.ms": 120000})
        self.topic, self.rate = topic, rate
        self.stop_event = threading.Event()
        self.acked = 0
        self.errors: list[str] = []

    def run(self) -> None:
        def done(err, _msg):
            if err is None:
                self.acked += 1
            elif len(self.errors) < 20:
                self.errors.append(str(err))
        per_s = self.rate / RECORD
        start, sent = time.monotonic(), 0
        value = b"x" * RECORD
        while not self.stop_event.is_set():
            due = int((time.monotonic() - start) * per_s)
            while sent < due:
                try:
                    self.producer.produce(self.topic, value=value, partition=sent % PARTITIONS,
                                          on_delivery=done)
                    sent += 1
                except BufferError:
                    self.producer.poll(0.05)
            self.producer.poll(0.01)
        self.producer.flush(120)


def events(path: Path) -> list[tuple[float, str, int]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        t, event, broker = line.split()
        out.append((float(t), event, int(broker)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--strata-bin", default=str(BENCH.parent / "build" / "strata"))
    ap.add_argument("--capacity", type=int, default=1_000_000, help="declared bytes/s per broker")
    ap.add_argument("--rate", type=int, default=1_500_000, help="produced bytes/s")
    ap.add_argument("--sustain-ms", type=int, default=30_000)
    ap.add_argument("--deadline-s", type=float, default=600)
    ap.add_argument("--no-record", action="store_true")
    args = ap.parse_args()
    strata_bin = Path(args.strata_bin).resolve()
    if not strata_bin.exists() or not shutil.which("etcd"):
        log("needs build/strata and etcd (scripts/install-test-deps.sh)")
        return 2
    started = datetime.datetime.now(datetime.timezone.utc)
    ts = started.strftime("%Y%m%dT%H%M%SZ")
    workdir = BENCH / ".work" / f"surge-{ts}"
    remote = workdir / "remote"
    remote.mkdir(parents=True)
    hook_log = workdir / "scale-events"
    cluster = brokers.StrataCluster(workdir, strata_bin, 4)
    for b in cluster.nodes:
        b.config.update({
            "strata.admin.listener": f"127.0.0.1:{brokers.free_port()}",
            "remote.log.storage.system.enable": "true",
            "strata.remote.storage.uri": f"file://{remote}",
            "strata.balancer.enable": "true",
            "strata.balancer.metrics.interval.ms": "2000",
            "strata.balancer.metrics.window.samples": "3",
            "strata.balancer.cycle.interval.ms": "5000",
            "strata.balancer.scaling.enable": "true",
            "strata.balancer.scale.sustain.ms": str(args.sustain_ms),
            "strata.balancer.scale.hook.command":
                f'echo "$(date +%s.%N) $STRATA_SCALE_EVENT $STRATA_SCALE_BROKER" >> {hook_log}',
            "strata.broker.capacity.network.in.bytes.per.sec": str(args.capacity),
            "strata.broker.capacity.network.out.bytes.per.sec": str(args.capacity),
            "strata.broker.capacity.cpu.cores": "64"})
    cluster.node(4).config["strata.broker.standby"] = "true"
    utilization = 2 * args.rate / (3 * args.capacity)
    run: dict = {"started_utc": started.isoformat(timespec="seconds"), "config": vars(args),
                 "utilization_of_active_capacity": round(utilization, 3),
                 "strata_version": env.versions(None, strata_bin)}
    try:
        log("starting etcd, 3 active brokers and standby broker 4")
        cluster.start()
        from confluent_kafka import Consumer, TopicPartition
        from confluent_kafka.admin import AdminClient, NewTopic
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        topic = "surge"
        admin.create_topics([NewTopic(topic, PARTITIONS, 2, config={
            "remote.storage.enable": "true", "retention.ms": "-1",
            "min.insync.replicas": "1"})])[topic].result(60)

        def on_4() -> int:
            md = admin.list_topics(topic, timeout=30).topics[topic]
            return sum(4 in p.replicas for p in md.partitions.values())
        assert on_4() == 0, "the standby broker got replicas at creation"
        load = Load(cluster.bootstrap, topic, args.rate)
        log(f"surge: {args.rate} B/s at RF 2 = {utilization:.2f} of the active brokers' capacity")
        t0_wall, t0 = time.time(), time.monotonic()
        load.start()
        scale_out = balanced = None
        while time.monotonic() - t0 < args.deadline_s:
            ev = events(hook_log)
            if scale_out is None and any(e == "scale_out" for _, e, _ in ev):
                scale_out = next(t for t, e, _ in ev if e == "scale_out") - t0_wall
                log(f"scale_out at {scale_out:.1f} s")
            if scale_out is not None:
                ctl = cluster.node(cluster.controller())
                status = get_json(ctl, "/v1/balancer")
                if (on_4() > 0 and status["moves_in_flight"] == 0
                        and not (status.get("last_plan") or {}).get("moves")):
                    balanced = time.monotonic() - t0
                    log(f"balanced at {balanced:.1f} s ({on_4()} replicas on broker 4)")
                    break
            time.sleep(1)
        replicas_on_4 = on_4()
        load.stop_event.set()
        load.join(180)
        t1_wall, t1 = time.time(), time.monotonic()
        log(f"surge stopped; {load.acked} records acknowledged, {len(load.errors)} errors")
        drain = scale_in = None
        while time.monotonic() - t1 < args.deadline_s:
            ev = [(t - t1_wall, e) for t, e, _ in events(hook_log) if t >= t1_wall]
            drain = next((t for t, e in ev if e == "drain_started"), None)
            scale_in = next((t for t, e in ev if e == "scale_in"), None)
            if scale_in is not None:
                break
            time.sleep(1)
        log(f"drain started at {drain} s, scale_in at {scale_in} s after the surge")
        c = Consumer({"bootstrap.servers": cluster.live_bootstrap(), "group.id": "surge-check",
                      "enable.auto.commit": False})
        readable = 0
        for p in range(PARTITIONS):
            lo, hi = c.get_watermark_offsets(TopicPartition(topic, p), timeout=30)
            readable += hi - lo
        c.close()
        run.update({"scale_out_s": scale_out, "balanced_s": balanced,
                    "replicas_on_broker_4": replicas_on_4, "drain_started_s": drain,
                    "scale_in_s": scale_in, "acked": load.acked, "readable": readable,
                    "producer_errors": load.errors, "events": events(hook_log)})
    finally:
        cluster.stop()
    out = BENCH / "results" / f"surge-{ts}.json"
    out.write_text(json.dumps(run, indent=2) + "\n")

    def s(v):
        return f"{v:.1f} s" if v is not None else "not within the deadline"
    md_text = (
        f"\n## Scaling onto a standby broker under a surge ({started:%Y-%m-%d %H:%M} UTC)\n\n"
        f"`bench/surge.sh --capacity {args.capacity} --rate {args.rate} --sustain-ms "
        f"{args.sustain_ms}`: brokers 1-3 active and 4 standby, each declaring "
        f"{args.capacity / 1e6:.1f} MB/s of network in and out; {args.rate / 1e6:.1f} MB/s "
        f"produced at RF 2 into 12 tiered partitions ({utilization:.2f} of the active brokers' "
        f"capacity; scale-out threshold 0.8, scale-in 0.3, sustain {args.sustain_ms / 1000:.0f} s, "
        f"samples every 2 s over a window of 3, a cycle every 5 s).\n\n"
        f"| from the surge's start: scale_out | balanced (broker 4 holds {run['replicas_on_broker_4']} "
        f"replicas, no move left) | from its end: drain started | scale_in (back to standby) "
        f"| acknowledged / readable |\n|---|---|---|---|---|\n"
        f"| {s(run['scale_out_s'])} | {s(run['balanced_s'])} | {s(run['drain_started_s'])} "
        f"| {s(run['scale_in_s'])} | {run['acked']} / {run['readable']} |\n\n"
        f"Both waits are mostly the sustain time by design: utilization must stay past a "
        f"threshold that long before the balancer acts.\n")
    (BENCH / "results" / f"surge-{ts}.md").write_text(md_text)
    if not args.no_record:
        with open(BENCH / "RESULTS.md", "a") as f:
            f.write(md_text)
    print(md_text)
    ok = run["balanced_s"] is not None and run["scale_in_s"] is not None
    return 0 if ok and run["readable"] == run["acked"] and not run["producer_errors"] else 1


if __name__ == "__main__":
    sys.exit(main())
