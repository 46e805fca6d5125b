#!/usr/bin/env python3
"""Tiered-storage measurements against a real HDFS (MiniDFSCluster, tests/hdfs) for issue 5.

(a) cold read: a topic whose rolled segments are only in HDFS (local.retention.bytes=1), read
    from offset 0 by a confluent-kafka consumer through a *fresh* Strata process (its on-disk
    remote chunk cache deleted first), versus reading the same .log objects straight from HDFS
    (WebHDFS OPEN from Python, and the Java client over native RPC: tests/hdfs HdfsDigest).
    Reported as MiB/s and as the ratio Strata / direct.
(b) upload vs a sustained produce rate: produce at a fixed rate for --duration seconds into
    1 MiB segments and sample strata_remote_upload_lag_{segments,bytes,seconds} every second,
    once with serial uploads (remote.log.manager.copier.thread.pool.size=1,
    strata.remote.upload.parallel.lag.segments huge) and once with the defaults (parallel once a
    partition lags). Also measures each mode's upload capacity: a backlog produced as fast as
    possible, then the time until the lag is 0.

Prints markdown tables (and writes them to --out if given). Needs the MiniHdfs jar
(tests/hdfs/build.sh) and the Python test deps (confluent-kafka).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "hdfs"))
from hdfs_fixture import MiniHdfs  # noqa: E402

MiB = 1024 * 1024


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Broker:
    """One Strata process with tiered storage to `remote_uri`; data dir survives restarts."""

    def __init__(self, binary: str, workdir: Path, remote_uri: str, extra: dict | None = None):
        self.binary = binary
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.admin_port = free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.data_dir = workdir / "data"
        self.config = {
            "node.id": "1",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "log.dirs": str(self.data_dir),
            "num.partitions": "1",
            "auto.create.topics.enable": "false",
            "strata.admin.listener": f"127.0.0.1:{self.admin_port}",
            "remote.log.storage.system.enable": "true",
            "strata.remote.storage.uri": remote_uri,
            "remote.log.manager.task.interval.ms": "500",
            "log.retention.check.interval.ms": "300",
        }
        self.config.update({k: str(v) for k, v in (extra or {}).items()})
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        cfg = self.workdir / "strata.properties"
        cfg.write_text("".join(f"{k}={v}\n" for k, v in self.config.items()))
        log = open(self.workdir / "broker.log", "ab")
        self.proc = subprocess.Popen([self.binary, "serve", "--config", str(cfg)], stdout=log,
                                     stderr=log, stdin=subprocess.DEVNULL, cwd=self.workdir)
        deadline = time.time() + 30
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"broker exited ({self.proc.returncode}); see {log.name}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                if time.time() > deadline:
                    raise RuntimeError("broker did not start")
                time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def metrics(self) -> dict[str, float]:
        text = urllib.request.urlopen(f"http://127.0.0.1:{self.admin_port}/metrics",
                                      timeout=10).read().decode()
        # Per-partition series ({partition="..."}) are summed under the bare name.
        out: dict[str, float] = {}
        for line in text.splitlines():
            if line.startswith("strata_remote_") and " " in line:
                name, value = line.rsplit(" ", 1)
                name = name.split("{", 1)[0]
                out[name] = out.get(name, 0.0) + float(value)
        return out

    def max_metric(self, name: str) -> float:
        """The largest value over the per-partition series of `name` (e.g. oldest lag)."""
        text = urllib.request.urlopen(f"http://127.0.0.1:{self.admin_port}/metrics",
                                      timeout=10).read().decode()
        vals = [float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                if line.startswith(name + "{") or line.startswith(name + " ")]
        return max(vals, default=0.0)

    def local_logs(self, topic: str, p: int) -> list[int]:
        return sorted(int(f.stem) for f in (self.data_dir / f"{topic}-{p}").glob("*.log"))


# ---- Kafka client helpers ------------------------------------------------------------------

def create_topic(bootstrap: str, topic: str, partitions: int, config: dict) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic
    a = AdminClient({"bootstrap.servers": bootstrap})
    a.create_topics([NewTopic(topic, partitions, 1, config=config)])[topic].result(30)
    deadline = time.time() + 30
    while True:
        md = a.list_topics(topic=topic, timeout=10).topics.get(topic)
        if md and md.error is None and len(md.partitions) == partitions and all(
                p.leader >= 0 for p in md.partitions.values()):
            return
        if time.time() > deadline:
            raise RuntimeError(f"topic {topic} not ready")
        time.sleep(0.2)


def producer(bootstrap: str):
    from confluent_kafka import Producer
    return Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 10,
                     "batch.num.messages": 2000, "message.timeout.ms": 120000})


def produce(p, topic: str, partitions: int, n: int, value: bytes, start: int = 0) -> None:
    for i in range(start, start + n):
        while True:
            try:
                p.produce(topic, value=value, key=str(i).encode(), partition=i % partitions)
                break
            except BufferError:
                p.poll(0.05)
        p.poll(0)


def tiered_ends(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    """ListOffsets -5 (remote log end) per partition, over the raw protocol."""
    sys.path.insert(0, str(ROOT / "tests" / "integration"))
    from test_tiered_localfs import list_offsets  # raw ListOffsets v4 helper
    return list_offsets(bootstrap, topic, -5, partitions)


def wait_all_tiered(b: Broker, topic: str, partitions: int, timeout: float) -> float:
    """Waits until every rolled segment is in HDFS and lag is 0; returns seconds waited."""
    t0 = time.monotonic()
    while True:
        ends = tiered_ends(b.bootstrap, topic, partitions)
        ok = all(ends[p] >= 0 and ends[p] + 1 == b.local_logs(topic, p)[-1]
                 for p in range(partitions))
        if ok and b.metrics().get("strata_remote_upload_lag_segments", 1) == 0:
            return time.monotonic() - t0
        if time.monotonic() - t0 > timeout:
            raise RuntimeError(f"uploads not done after {timeout}s: {ends}")
        time.sleep(0.25)


# ---- (a) cold read -----------------------------------------------------------------------

def webhdfs_read(h: MiniHdfs, paths: list[str]) -> tuple[int, float]:
    """Reads every path in full with WebHDFS OPEN (redirect to the DataNode followed)."""
    t0 = time.monotonic()
    total = 0
    for path in paths:
        url = f"http://127.0.0.1:{h.http_port}/webhdfs/v1{path}?op=OPEN&user.name=strata-bench"
        with urllib.request.urlopen(url, timeout=120) as r:
            while chunk := r.read(MiB):
                total += len(chunk)
    return total, time.monotonic() - t0


def strata_consume(bootstrap: str, topic: str, partitions: int,
                   until: dict[int, int]) -> tuple[int, int, float]:
    """Consumes every partition from offset 0 up to (excluding) until[p]; returns (records,
    value+key bytes, seconds from assign to the last record)."""
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-unused",
                  "enable.auto.commit": False, "auto.offset.reset": "earliest",
                  "fetch.max.bytes": 52428800, "max.partition.fetch.bytes": 8388608,
                  "queued.max.messages.kbytes": 262144})
    try:
        t0 = time.monotonic()
        c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        nxt = {p: 0 for p in range(partitions)}
        n = nbytes = 0
        while any(nxt[p] < until[p] for p in range(partitions)):
            if time.monotonic() - t0 > 600:
                raise RuntimeError(f"cold read stuck at {nxt} of {until}")
            for m in c.consume(num_messages=5000, timeout=0.5):
                if m.error():
                    raise RuntimeError(f"consume error: {m.error()}")
                if m.offset() < until[m.partition()]:
                    n += 1
                    nbytes += len(m.value() or b"") + len(m.key() or b"")
                nxt[m.partition()] = max(nxt[m.partition()], m.offset() + 1)
        return n, nbytes, time.monotonic() - t0
    finally:
        c.close()


def cold_read(args, h: MiniHdfs, work: Path) -> list[str]:
    parts = args.read_partitions
    seg = args.read_segment_mib * MiB
    b = Broker(args.strata_bin, work / "cold-broker", h.webhdfs_uri("/strata"))
    b.start()
    topic = f"cold-{random.getrandbits(32):08x}"
    try:
        create_topic(b.bootstrap, topic, parts, {
            "remote.storage.enable": "true", "segment.bytes": str(seg),
            "local.retention.bytes": "1", "retention.ms": "-1"})
        # Control: the same records in a topic that stays on local disk.
        local_topic = topic.replace("cold-", "local-")
        create_topic(b.bootstrap, local_topic, parts, {"segment.bytes": str(seg)})
        value = random.Random(5).randbytes(args.value_bytes)
        n = args.read_mib * MiB // args.value_bytes
        p = producer(b.bootstrap)
        t0 = time.monotonic()
        produce(p, topic, parts, n, value)
        assert p.flush(300) == 0
        produce(p, local_topic, parts, n, value)
        assert p.flush(300) == 0
        print(f"[a] produced {args.read_mib} MiB in {time.monotonic() - t0:.1f}s", flush=True)
        waited = wait_all_tiered(b, topic, parts, 900)
        print(f"[a] uploads done {waited:.1f}s after the produce", flush=True)
        # Only the active segment stays local; everything below is HDFS-only.
        deadline = time.time() + 60
        while not all(len(b.local_logs(topic, q)) == 1 for q in range(parts)):
            if time.time() > deadline:
                raise RuntimeError("local retention did not drop the tiered segments")
            time.sleep(0.2)
        until = {q: b.local_logs(topic, q)[0] for q in range(parts)}
    finally:
        b.stop()

    listing, rpc_secs_1 = h.digest("/strata")
    logs = sorted(f for f in listing if f.endswith(".log") and f"/{topic}-" in f)
    remote_bytes = sum(listing[f][0] for f in logs)
    web_bytes, web_secs_1 = webhdfs_read(h, logs)
    assert web_bytes == remote_bytes

    # Fresh broker process, remote chunk cache wiped: a cold read through Strata.
    shutil.rmtree(b.data_dir / ".remote-cache", ignore_errors=True)
    b.start()
    try:
        time.sleep(1.0)  # let the manifests load
        recs, payload, strata_secs = strata_consume(b.bootstrap, topic, parts, until)
        m = b.metrics()
        # (c) The same consumer again through the same process: old data re-read from the
        # on-disk chunk cache.
        _, _, warm_secs = strata_consume(b.bootstrap, topic, parts, until)
        m2 = b.metrics()
        hits = m2.get("strata_remote_cache_hits_total", 0) - m.get("strata_remote_cache_hits_total", 0)
        misses = (m2.get("strata_remote_cache_misses_total", 0)
                  - m.get("strata_remote_cache_misses_total", 0))
        hit_ratio = hits / max(hits + misses, 1)
        cold_hits = m.get("strata_remote_cache_hits_total", 0)
        cold_ratio = cold_hits / max(cold_hits + m.get("strata_remote_cache_misses_total", 0), 1)
        _, _, local_secs = strata_consume(b.bootstrap, local_topic, parts, until)
    finally:
        b.stop()
    assert recs == sum(until.values()), f"{recs} records read, {sum(until.values())} expected"
    # The same cold read with Strata's on-disk remote chunk cache turned off.
    shutil.rmtree(b.data_dir / ".remote-cache", ignore_errors=True)
    b.config["strata.remote.cache.bytes"] = "0"
    b.start()
    try:
        time.sleep(1.0)
        recs2, _, nocache_secs = strata_consume(b.bootstrap, topic, parts, until)
    finally:
        b.stop()
    assert recs2 == recs

    _, rpc_secs_2 = h.digest("/strata")
    web_bytes2, web_secs_2 = webhdfs_read(h, logs)
    rpc_secs = min(rpc_secs_1, rpc_secs_2) * remote_bytes / max(
        sum(v[0] for v in listing.values()), 1)  # digest reads every file: scale to the .logs
    web_secs = min(web_secs_1, web_secs_2)
    mib = remote_bytes / MiB
    strata_rate, web_rate, rpc_rate = mib / strata_secs, mib / web_secs, mib / rpc_secs
    return [
        "### (a) Cold read of HDFS-only data",
        "",
        f"{parts} partitions, segment.bytes {args.read_segment_mib} MiB, {len(logs)} remote "
        f"segments, {mib:.1f} MiB of .log objects ({recs} records of {args.value_bytes} B); "
        f"Strata read via {int(m.get('strata_remote_reads_total', 0))} remote reads, "
        f"{int(m.get('strata_remote_read_failures_total', 0))} failures.",
        "",
        "| reader | seconds | MiB/s | Strata / this |",
        "| --- | ---: | ---: | ---: |",
        f"| Strata, fresh process, consumer from offset 0 (confluent-kafka) | {strata_secs:.2f} "
        f"| {strata_rate:.1f} | 1.00 |",
        f"| Strata, same process, second read (chunk cache hit ratio {hit_ratio:.3f}; the first "
        f"read's was {cold_ratio:.3f}) | {warm_secs:.2f} | {mib / warm_secs:.1f} "
        f"| {strata_rate / (mib / warm_secs):.2f} |",
        f"| Strata, fresh process, strata.remote.cache.bytes=0 | {nocache_secs:.2f} | "
        f"{mib / nocache_secs:.1f} | {strata_rate / (mib / nocache_secs):.2f} |",
        f"| control: same client, same records from Strata's local disk (not tiered) | "
        f"{local_secs:.2f} | {mib / local_secs:.1f} | {strata_rate / (mib / local_secs):.2f} |",
        f"| WebHDFS OPEN, sequential, Python (best of 2) | {web_secs:.2f} | {web_rate:.1f} "
        f"| {strata_rate / web_rate:.2f} |",
        f"| Java HDFS client over RPC, sequential (HdfsDigest incl. SHA-256, best of 2) | "
        f"{rpc_secs:.2f} | {rpc_rate:.1f} | {strata_rate / rpc_rate:.2f} |",
        "",
    ]


# ---- (b) upload vs sustained produce -------------------------------------------------------

MODES = {
    "serial (copier pool 1, no parallel upload)": {
        "remote.log.manager.copier.thread.pool.size": "1",
        "strata.remote.upload.parallel.lag.segments": "1000000"},
    "defaults (copier pool 2, parallel when lag > 4 segments)": {},
}


def upload_run(args, h: MiniHdfs, work: Path, name: str, extra: dict) -> dict:
    parts = args.upload_partitions
    b = Broker(args.strata_bin, work / f"up-{len(list(work.iterdir()))}", h.webhdfs_uri("/strata"),
               extra)
    b.start()
    topic = f"up-{random.getrandbits(32):08x}"
    value = random.Random(6).randbytes(args.value_bytes)
    try:
        create_topic(b.bootstrap, topic, parts, {
            "remote.storage.enable": "true", "segment.bytes": str(MiB),
            "local.retention.bytes": str(4 * MiB), "retention.ms": "-1"})
        p = producer(b.bootstrap)
        # Sustained rate: records paced in 50 ms slices.
        per_sec = args.rate_mib * MiB / args.value_bytes
        samples = []
        t0 = time.monotonic()
        sent = 0
        next_sample = t0
        while (now := time.monotonic()) - t0 < args.duration:
            due = int(per_sec * (now - t0)) - sent
            if due > 0:
                produce(p, topic, parts, due, value, start=sent)
                sent += due
            if now >= next_sample:
                m = b.metrics()
                samples.append((now - t0, m.get("strata_remote_upload_lag_segments", -1),
                                m.get("strata_remote_upload_lag_bytes", -1),
                                b.max_metric("strata_remote_upload_lag_seconds")))
                next_sample += 1.0
            p.poll(0)
            time.sleep(0.05)
        assert p.flush(120) == 0
        produced_secs = time.monotonic() - t0
        drain_secs = wait_all_tiered(b, topic, parts, 600)
        m_after = b.metrics()
        # Capacity: a backlog as fast as the producer goes, then until lag is 0.
        backlog = args.backlog_mib * MiB // args.value_bytes
        up0 = m_after.get("strata_remote_uploaded_bytes_total", 0)
        t1 = time.monotonic()
        produce(p, topic, parts, backlog, value, start=sent)
        assert p.flush(300) == 0
        t_prod = time.monotonic() - t1
        wait_all_tiered(b, topic, parts, 900)
        t_total = time.monotonic() - t1
        up1 = b.metrics().get("strata_remote_uploaded_bytes_total", 0)
    finally:
        b.stop()
    lags = [s[1] for s in samples]
    half = len(lags) // 2
    return {
        "name": name, "sent_mib": sent * args.value_bytes / MiB, "produced_secs": produced_secs,
        "max_lag_segments": max(lags), "max_lag_bytes": max(s[2] for s in samples),
        "max_lag_seconds": max(s[3] for s in samples),
        "mean_lag_first_half": statistics.mean(lags[:half]) if half else 0,
        "mean_lag_second_half": statistics.mean(lags[half:]) if lags else 0,
        "final_lag": lags[-1] if lags else 0, "drain_secs": drain_secs,
        "capacity_mib_s": (up1 - up0) / MiB / t_total, "backlog_produce_secs": t_prod,
        "backlog_total_secs": t_total, "samples": samples,
    }


def upload_tables(args, results: list[dict]) -> list[str]:
    out = [
        "### (b) Upload vs a sustained produce rate",
        "",
        f"{args.upload_partitions} partitions, segment.bytes 1 MiB, produce {args.rate_mib} MiB/s "
        f"for {args.duration}s (acks=all), lag sampled every second from /metrics; then a "
        f"{args.backlog_mib} MiB backlog produced flat out to measure upload capacity.",
        "",
        "| mode | produced MiB | max lag segs | max lag MiB | max lag s | mean lag 1st half "
        "| mean lag 2nd half | drain after stop s | bounded? | upload capacity MiB/s |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |",
    ]
    for r in results:
        # Bounded: the lag does not keep growing over the run (2nd half not well above 1st).
        bounded = r["mean_lag_second_half"] <= max(1.5 * r["mean_lag_first_half"],
                                                   r["mean_lag_first_half"] + 4)
        out.append(
            f"| {r['name']} | {r['sent_mib']:.0f} | {r['max_lag_segments']:.0f} | "
            f"{r['max_lag_bytes'] / MiB:.1f} | {r['max_lag_seconds']:.1f} | "
            f"{r['mean_lag_first_half']:.1f} | {r['mean_lag_second_half']:.1f} | "
            f"{r['drain_secs']:.1f} | {'yes' if bounded else 'NO (growing)'} | "
            f"{r['capacity_mib_s']:.2f} |")
    out.append("")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--strata-bin", default=os.environ.get("STRATA_BIN",
                                                           str(ROOT / "build" / "strata")))
    ap.add_argument("--only", choices=["read", "upload"], help="run one part only")
    ap.add_argument("--value-bytes", type=int, default=4096)
    ap.add_argument("--read-mib", type=int, default=128, help="(a) data to tier and read back")
    ap.add_argument("--read-partitions", type=int, default=4)
    ap.add_argument("--read-segment-mib", type=int, default=8)
    ap.add_argument("--upload-partitions", type=int, default=4)
    ap.add_argument("--rate-mib", type=float, default=1.0, help="(b) sustained produce MiB/s")
    ap.add_argument("--duration", type=int, default=45, help="(b) seconds of sustained produce")
    ap.add_argument("--backlog-mib", type=int, default=32, help="(b) backlog for capacity")
    ap.add_argument("--out", help="also write the markdown here")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="strata-bench-tiered-"))
    h = MiniHdfs(work / "hdfs")
    lines = [f"## Tiered storage to HDFS (MiniDFSCluster, 1 DN) — {time.strftime('%Y-%m-%d %H:%M')}"
             f", {os.cpu_count()} cores, {args.strata_bin}", ""]
    try:
        t0 = time.monotonic()
        h.start(format=True)
        print(f"MiniHdfs up in {time.monotonic() - t0:.1f}s", flush=True)
        if args.only in (None, "read"):
            lines += cold_read(args, h, work)
            print("\n".join(lines), flush=True)
        if args.only in (None, "upload"):
            results = []
            for name, extra in MODES.items():
                r = upload_run(args, h, work, name, extra)
                print(f"[b] {name}: {json.dumps({k: v for k, v in r.items() if k != 'samples'})}",
                      flush=True)
                print("[b] lag samples (t, segments): " + " ".join(
                    f"{s[0]:.0f}:{s[1]:.0f}" for s in r["samples"]), flush=True)
                results.append(r)
            lines += upload_tables(args, results)
    finally:
        h.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    text = "\n".join(lines)
    print("\n" + text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
