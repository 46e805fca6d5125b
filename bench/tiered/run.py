#!/usr/bin/env python3
"""Tiered-storage measurements against a real HDFS (MiniDFSCluster, tests/hdfs) and a real S3
server (S3Proxy, tests/s3), for issues 5 and 32. --store picks the store(s); each gets its own
section with the same parts:

(a) cold read: a topic whose rolled segments are only in the store (local.retention.bytes=1),
    read from offset 0 by a confluent-kafka consumer through a *fresh* Strata process (its
    on-disk remote chunk cache deleted first), versus reading the same .log objects straight
    from the store: HDFS with WebHDFS OPEN from Python and the Java client over native RPC
    (tests/hdfs HdfsDigest); S3 with signed GETs from Python over one keep-alive connection,
    and N objects at once over N connections (--direct-parallel).
    Reported as MiB/s and as the ratio Strata / direct.
(b) upload vs a sustained produce rate: produce at a fixed rate for --duration seconds into
    1 MiB segments and sample strata_remote_upload_lag_{segments,bytes,seconds} every second,
    once with serial uploads (remote.log.manager.copier.thread.pool.size=1,
    strata.remote.upload.parallel.lag.segments huge) and once with the defaults (parallel once a
    partition lags). Also measures each mode's upload capacity: a backlog produced as fast as
    possible, then the time until the lag is 0.
(c) upload capacity per broker with large segments: a --capacity-backlog-mib backlog in
    --capacity-segment-mib segments produced into a topic without tiering, then
    remote.storage.enable=true (IncrementalAlterConfigs) and the time until every rolled segment
    is uploaded, from strata_remote_uploads_total / strata_remote_uploaded_bytes_total; versus
    writing the same .log files to the store directly from Python (one at a time, and N at once).

Prints markdown tables (and writes them to --out if given). Needs the MiniHdfs jar
(tests/hdfs/build.sh), the S3Proxy jar (tests/s3/install.sh) and the Python test deps
(confluent-kafka).
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import hmac
import http.client
import json
import os
import queue
import random
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "hdfs"))
sys.path.insert(0, str(ROOT / "tests" / "integration"))
from hdfs_fixture import MiniHdfs  # noqa: E402
from ports import free_port  # noqa: E402  (below the ephemeral range: safe across restarts)

MiB = 1024 * 1024
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


class Broker:
    """One Strata process with tiered storage to the store `store` (its strata.remote.* settings,
    then `extra`); data dir survives restarts."""

    def __init__(self, binary: str, workdir: Path, store: dict, extra: dict | None = None):
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
            "remote.log.manager.task.interval.ms": "500",
            "log.retention.check.interval.ms": "300",
        }
        self.config.update(store)
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

    def cpu_seconds(self) -> float:
        return proc_cpu_seconds(self.proc.pid) if self.proc else 0.0


def proc_cpu_seconds(pid: int | None) -> float:
    """User + system CPU seconds of process `pid` so far (every thread), from /proc."""
    if pid is None:
        return 0.0
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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


# ---- the stores, and reading/writing them directly (around Strata) ---------------------------

def read_all(resp) -> int:
    """Reads an HTTP response body to the end in 1 MiB reads; returns its length."""
    n = 0
    while chunk := resp.read(MiB):
        n += len(chunk)
    return n


def webhdfs_create(http_port: int, path: str, src: Path) -> None:
    """Writes local file `src` to HDFS `path` with WebHDFS CREATE (NameNode redirect, then the
    bytes to the DataNode), overwriting."""
    nn = http.client.HTTPConnection("127.0.0.1", http_port, timeout=120)
    try:
        nn.request("PUT", f"/webhdfs/v1{path}?op=CREATE&overwrite=true&user.name=strata-bench",
                   headers={"Content-Length": "0"})
        r = nn.getresponse()
        r.read()
        if r.status != 307:
            raise RuntimeError(f"WebHDFS CREATE {path}: HTTP {r.status}")
        loc = urllib.parse.urlsplit(r.getheader("Location"))
    finally:
        nn.close()
    dn = http.client.HTTPConnection(loc.hostname, loc.port, timeout=300, blocksize=MiB)
    try:
        with open(src, "rb") as f:
            dn.request("PUT", f"{loc.path}?{loc.query}", body=f, headers={
                "Content-Length": str(src.stat().st_size),
                "Content-Type": "application/octet-stream"})
        r = dn.getresponse()
        body = r.read()
        if r.status != 201:
            raise RuntimeError(f"WebHDFS CREATE {path} (DataNode): HTTP {r.status} {body[:200]!r}")
    finally:
        dn.close()


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


class S3Client:
    """SigV4-signed path-style requests to an s3kit.S3Server over ONE keep-alive connection
    (s3kit's signing; its own client opens a connection per request). Not thread-safe: one per
    thread."""

    def __init__(self, server):
        self.server = server
        self.conn: http.client.HTTPConnection | None = None

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def _headers(self, method: str, path: str, payload_sha256: str) -> dict:
        srv = self.server
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        hdrs = {"host": f"127.0.0.1:{srv.port}", "x-amz-date": now,
                "x-amz-content-sha256": payload_sha256}
        names = sorted(hdrs)
        canonical = "\n".join([method, path, "", "".join(f"{n}:{hdrs[n]}\n" for n in names),
                               ";".join(names), payload_sha256])
        scope = f"{now[:8]}/{srv.region}/s3/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", now, scope,
                             hashlib.sha256(canonical.encode()).hexdigest()])
        k = ("AWS4" + srv.secret_key).encode()
        for part in (now[:8], srv.region, "s3", "aws4_request"):
            k = hmac.new(k, part.encode(), hashlib.sha256).digest()
        sig = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
        hdrs["authorization"] = (f"AWS4-HMAC-SHA256 Credential={srv.access_key}/{scope}, "
                                 f"SignedHeaders={';'.join(names)}, Signature={sig}")
        return hdrs

    def _request(self, method: str, bucket: str, key: str, body=None, length: int = 0,
                 payload_sha256: str = EMPTY_SHA256):
        path = f"/{bucket}/" + urllib.parse.quote(key, safe="/-_.~")
        for attempt in (1, 2):  # once more on a fresh connection if the kept one was closed
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.server.port,
                                                       timeout=300, blocksize=MiB)
            hdrs = self._headers(method, path, payload_sha256)
            if method == "PUT":
                hdrs["content-length"] = str(length)
            try:
                if hasattr(body, "seek"):
                    body.seek(0)
                self.conn.request(method, path, body=body, headers=hdrs)
                return self.conn.getresponse()
            except (http.client.RemoteDisconnected, ConnectionError, BrokenPipeError):
                self.close()
                if attempt == 2:
                    raise

    def get(self, bucket: str, key: str) -> int:
        """GETs the whole object, streaming it in 1 MiB reads; returns its length."""
        r = self._request("GET", bucket, key)
        n = read_all(r)
        if r.status != 200:
            raise RuntimeError(f"GET {key}: HTTP {r.status}")
        if r.will_close:
            self.close()
        return n

    def put_file(self, bucket: str, key: str, src: Path) -> None:
        """PutObject of local file `src`, streamed (UNSIGNED-PAYLOAD, as Strata signs)."""
        with open(src, "rb") as f:
            r = self._request("PUT", bucket, key, body=f, length=src.stat().st_size,
                              payload_sha256="UNSIGNED-PAYLOAD")
        body = r.read()
        if r.status != 200:
            raise RuntimeError(f"PUT {key}: HTTP {r.status} {body[:200]!r}")
        if r.will_close:
            self.close()


def in_parallel(n: int, items: list, work) -> None:
    """Runs work(worker_state, item) for every item on n threads; each thread calls work with
    its own state dict (e.g. its own connection), items taken in order from a shared queue."""
    q: queue.Queue = queue.Queue()
    for it in items:
        q.put(it)
    errors: list[BaseException] = []

    def worker():
        state: dict = {}
        try:
            while not errors:
                try:
                    it = q.get_nowait()
                except queue.Empty:
                    return
                work(state, it)
        except BaseException as e:  # noqa: BLE001 (re-raised below)
            errors.append(e)
        finally:
            if "client" in state:
                state["client"].close()

    threads = [threading.Thread(target=worker) for _ in range(max(1, min(n, len(items))))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


class HdfsStore:
    """MiniDFSCluster (tests/hdfs), one DataNode; Strata on webhdfs://."""
    key = "hdfs"
    label = "HDFS"

    def __init__(self, args, work: Path):
        self.h = MiniHdfs(work / "hdfs")
        self.title = "HDFS (MiniDFSCluster, 1 DN)"
        self._listing: dict = {}
        self._first_digest: float | None = None

    def start(self) -> None:
        self.h.start(format=True)

    def stop(self) -> None:
        self.h.stop()

    def pid(self) -> int | None:
        return self.h.pid

    def settings(self) -> dict:
        return {"strata.remote.storage.uri": self.h.webhdfs_uri("/strata")}

    def read_rows(self, args) -> list[str]:
        return ["WebHDFS OPEN, sequential, Python (best of 2)",
                "Java HDFS client over RPC, sequential (HdfsDigest incl. SHA-256, best of 2)"]

    def list_logs(self, topic: str) -> dict[str, int]:
        """The topic's remote .log objects -> size (the first direct-read pass lists them)."""
        listing, secs = self.h.digest("/strata")
        self._listing, self._first_digest = listing, secs
        return {f: listing[f][0] for f in listing if f.endswith(".log") and f"/{topic}-" in f}

    def read_pass(self, args, logs: dict[str, int]) -> list[float]:
        """One pass of every direct reader over `logs`: seconds per reader, in read_rows order."""
        if self._first_digest is not None:
            rpc_secs, self._first_digest = self._first_digest, None
        else:
            _, rpc_secs = self.h.digest("/strata")
        web_bytes, web_secs = webhdfs_read(self.h, sorted(logs))
        assert web_bytes == sum(logs.values())
        # The digest reads every file: scale its time to the .logs.
        scale = sum(logs.values()) / max(sum(v[0] for v in self._listing.values()), 1)
        return [web_secs, rpc_secs * scale]

    def write_name(self, par: int) -> str:
        return ("WebHDFS CREATE, one file at a time, Python" if par == 1
                else f"WebHDFS CREATE, {par} files at once, Python")

    def write_once(self, files: list[Path], par: int) -> None:
        in_parallel(par, files, lambda _st, f: webhdfs_create(
            self.h.http_port, f"/bench-direct/{f.parent.name}/{f.name}", f))


S3PROXY_JVM_WRAPPER = """#!/usr/bin/env bash
# s3kit starts S3Proxy with the integration tests' JVM flags (C1 only, 256 MiB heap: quick to
# start); for a benchmark the store gets the JIT's top tier and a 1 GiB heap.
a=()
for x in "$@"; do
  case "$x" in
    -XX:TieredStopAtLevel=1) ;;
    -Xmx256m) a+=(-Xmx1g) ;;
    *) a+=("$x") ;;
  esac
done
exec {java} "${{a[@]}}"
"""


class S3Store:
    """S3Proxy (tests/s3, via tests/integration/s3kit.py) on its filesystem backend; Strata on
    s3://, configured as tests/integration/remote_stores.S3Store does."""
    key = "s3"
    label = "S3"

    def __init__(self, args, work: Path):
        from s3kit import S3PROXY_VERSION, S3Server
        self.work = work
        self.jvm = args.s3proxy_jvm
        self.server = S3Server(work / "s3")
        self.title = (f"S3 (S3Proxy {S3PROXY_VERSION}, filesystem-nio2 backend, JVM "
                      + ("C2 -Xmx1g" if self.jvm == "server" else "as the tests: C1 only, -Xmx256m")
                      + ")")

    def start(self) -> None:
        from remote_stores import S3Store as TestS3Store
        saved = os.environ.get("JAVA_HOME")
        if self.jvm == "server":
            real = (os.path.join(saved, "bin", "java") if saved else shutil.which("java"))
            wrapper = self.work / "s3-jvm" / "bin" / "java"
            wrapper.parent.mkdir(parents=True, exist_ok=True)
            wrapper.write_text(S3PROXY_JVM_WRAPPER.format(java=shlex.quote(real)))
            wrapper.chmod(0o755)
            os.environ["JAVA_HOME"] = str(wrapper.parent.parent)
        try:
            self.server.start()
        finally:
            if saved is None:
                os.environ.pop("JAVA_HOME", None)
            else:
                os.environ["JAVA_HOME"] = saved
        self.store = TestS3Store(self.server)  # creates the bucket
        import remote_stores
        self.bucket = remote_stores.BUCKET

    def stop(self) -> None:
        self.server.stop()

    def pid(self) -> int | None:
        return self.server.proc.pid if self.server.proc else None

    def settings(self) -> dict:
        return self.store.config("/strata")

    def read_rows(self, args) -> list[str]:
        return ["S3 GET, one object at a time, Python, one keep-alive connection (best of 2)",
                f"S3 GET, {args.direct_parallel} objects at once, Python, {args.direct_parallel} "
                "keep-alive connections (best of 2)"]

    def list_logs(self, topic: str) -> dict[str, int]:
        keys = self.server.list_keys(self.bucket, "strata/")
        return {k: n for k, n in keys.items() if k.endswith(".log") and f"/{topic}-" in k}

    def read_pass(self, args, logs: dict[str, int]) -> list[float]:
        out = []
        for par in (1, args.direct_parallel):
            got = [0]
            lock = threading.Lock()

            def one(state, key):
                client = state.setdefault("client", S3Client(self.server))
                n = client.get(self.bucket, key)
                with lock:
                    got[0] += n
            t0 = time.monotonic()
            in_parallel(par, sorted(logs), one)
            out.append(time.monotonic() - t0)
            assert got[0] == sum(logs.values()), (got[0], sum(logs.values()))
        return out

    def write_name(self, par: int) -> str:
        return ("S3 PUT (single request), one object at a time, Python, one keep-alive connection"
                if par == 1 else f"S3 PUT (single request), {par} objects at once, Python")

    def write_once(self, files: list[Path], par: int) -> None:
        def one(state, f):
            client = state.setdefault("client", S3Client(self.server))
            client.put_file(self.bucket, f"bench-direct/{f.parent.name}/{f.name}", f)
        in_parallel(par, files, one)


STORES = {"hdfs": HdfsStore, "s3": S3Store}


# ---- (a) cold read -----------------------------------------------------------------------

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
            # librdkafka's batch consume waits out its whole timeout unless the batch fills:
            # a short one, or the last call adds up to that much to the measured time.
            for m in c.consume(num_messages=5000, timeout=0.05):
                if m.error():
                    raise RuntimeError(f"consume error: {m.error()}")
                if m.offset() < until[m.partition()]:
                    n += 1
                    nbytes += len(m.value() or b"") + len(m.key() or b"")
                nxt[m.partition()] = max(nxt[m.partition()], m.offset() + 1)
        return n, nbytes, time.monotonic() - t0
    finally:
        c.close()


def cold_read(args, store, work: Path) -> tuple[list[str], dict]:
    parts = args.read_partitions
    seg = args.read_segment_mib * MiB
    b = Broker(args.strata_bin, work / f"cold-broker-{store.key}", store.settings(), args.set)
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
        print(f"[a/{store.key}] produced {args.read_mib} MiB in {time.monotonic() - t0:.1f}s",
              flush=True)
        waited = wait_all_tiered(b, topic, parts, 900)
        print(f"[a/{store.key}] uploads done {waited:.1f}s after the produce", flush=True)
        # Only the active segment stays local; everything below is in the store only.
        deadline = time.time() + 60
        while not all(len(b.local_logs(topic, q)) == 1 for q in range(parts)):
            if time.time() > deadline:
                raise RuntimeError("local retention did not drop the tiered segments")
            time.sleep(0.2)
        until = {q: b.local_logs(topic, q)[0] for q in range(parts)}
        # A broker's first consumer makes it create __consumer_offsets (~0.7 s here): done now,
        # not in the timed reads below.
        strata_consume(b.bootstrap, local_topic, parts, {q: 1 for q in range(parts)})
    finally:
        b.stop()

    logs = store.list_logs(topic)
    remote_bytes = sum(logs.values())
    direct_1 = store.read_pass(args, logs)
    cpu: dict[str, tuple[float, float, float]] = {}  # row -> (Strata, store, reader) CPU s

    def timed(row: str, read):
        """Runs `read`, noting the CPU seconds Strata, the store and this process spent."""
        s0, st0, c0 = b.cpu_seconds(), proc_cpu_seconds(store.pid()), time.process_time()
        out = read()
        cpu[row] = (b.cpu_seconds() - s0, proc_cpu_seconds(store.pid()) - st0,
                    time.process_time() - c0)
        return out

    # Fresh broker process, remote chunk cache wiped: a cold read through Strata.
    shutil.rmtree(b.data_dir / ".remote-cache", ignore_errors=True)
    b.start()
    try:
        time.sleep(1.0)  # let the manifests load
        recs, payload, strata_secs = timed(
            "cold", lambda: strata_consume(b.bootstrap, topic, parts, until))
        m = b.metrics()
        # The same consumer again through the same process: old data re-read from the
        # on-disk chunk cache.
        _, _, warm_secs = timed("warm", lambda: strata_consume(b.bootstrap, topic, parts, until))
        m2 = b.metrics()
        hits = m2.get("strata_remote_cache_hits_total", 0) - m.get("strata_remote_cache_hits_total", 0)
        misses = (m2.get("strata_remote_cache_misses_total", 0)
                  - m.get("strata_remote_cache_misses_total", 0))
        hit_ratio = hits / max(hits + misses, 1)
        cold_hits = m.get("strata_remote_cache_hits_total", 0)
        cold_ratio = cold_hits / max(cold_hits + m.get("strata_remote_cache_misses_total", 0), 1)
        _, _, local_secs = timed(
            "local", lambda: strata_consume(b.bootstrap, local_topic, parts, until))
    finally:
        b.stop()
    assert recs == sum(until.values()), f"{recs} records read, {sum(until.values())} expected"
    # The same cold read with Strata's on-disk remote chunk cache turned off.
    shutil.rmtree(b.data_dir / ".remote-cache", ignore_errors=True)
    b.config["strata.remote.cache.bytes"] = "0"
    b.start()
    try:
        time.sleep(1.0)
        recs2, _, nocache_secs = timed(
            "nocache", lambda: strata_consume(b.bootstrap, topic, parts, until))
    finally:
        b.stop()
    assert recs2 == recs

    direct_2 = timed("direct", lambda: store.read_pass(args, logs))
    direct = [min(x, y) for x, y in zip(direct_1, direct_2)]
    mib = remote_bytes / MiB
    strata_rate = mib / strata_secs
    lines = [
        f"### (a) Cold read of {store.label}-only data",
        "",
        f"{parts} partitions, segment.bytes {args.read_segment_mib} MiB, {len(logs)} remote "
        f"segments, {mib:.1f} MiB of .log objects ({recs} records of {args.value_bytes} B); "
        f"Strata read via {int(m.get('strata_remote_reads_total', 0))} remote reads, "
        f"{int(m.get('strata_remote_read_failures_total', 0))} failures.",
        "",
        "CPU seconds: Strata, the store's server, and the reader (this process: the consumer "
        "and librdkafka, or the direct client), for each read; the direct rows share one "
        "figure (both passes of the second round).",
        "",
        "| reader | seconds | MiB/s | Strata / this | Strata CPU s | store CPU s | reader CPU s |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]

    def row(name: str, secs: float, key: str) -> str:
        s, st, c = cpu.get(key, (0.0, 0.0, 0.0))
        return (f"| {name} | {secs:.2f} | {mib / secs:.1f} | {strata_rate / (mib / secs):.2f} "
                f"| {s:.1f} | {st:.1f} | {c:.1f} |")
    lines += [
        row("Strata, fresh process, consumer from offset 0 (confluent-kafka)", strata_secs, "cold"),
        row(f"Strata, same process, second read (chunk cache hit ratio {hit_ratio:.3f}; the "
            f"first read's was {cold_ratio:.3f})", warm_secs, "warm"),
        row("Strata, fresh process, strata.remote.cache.bytes=0", nocache_secs, "nocache"),
        row("control: same client, same records from Strata's local disk (not tiered)",
            local_secs, "local"),
    ]
    for name, secs in zip(store.read_rows(args), direct):
        lines.append(row(name, secs, "direct"))
    lines.append("")
    return lines, {"strata_mib_s": strata_rate, "direct_mib_s": mib / direct[0],
                   "direct_name": store.read_rows(args)[0]}


# ---- (b) upload vs sustained produce -------------------------------------------------------

MODES = {
    "serial (copier pool 1, no parallel upload)": {
        "remote.log.manager.copier.thread.pool.size": "1",
        "strata.remote.upload.parallel.lag.segments": "1000000"},
    "defaults (copier pool 2, parallel when lag > 4 segments)": {},
}
MODE_KEYS = dict(zip(["serial", "defaults"], MODES))


def upload_run(args, store, work: Path, name: str, extra: dict) -> dict:
    parts = args.upload_partitions
    b = Broker(args.strata_bin, work / f"up-{len(list(work.iterdir()))}", store.settings(),
               {**args.set, **extra})
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


def upload_tables(args, store, results: list[dict]) -> list[str]:
    out = [
        f"### (b) Upload to {store.label} vs a sustained produce rate",
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


# ---- (c) upload capacity with large segments ------------------------------------------------

def alter_topic(bootstrap: str, topic: str, key: str, value: str) -> None:
    from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry,
                                       ConfigResource)
    a = AdminClient({"bootstrap.servers": bootstrap})
    r = ConfigResource("topic", topic, incremental_configs=[
        ConfigEntry(key, value, incremental_operation=AlterConfigOpType.SET)])
    a.incremental_alter_configs([r])[r].result(30)


def capacity_run(args, store, work: Path, name: str, extra: dict) -> dict:
    """Backlog into a topic that does not tier yet, then tiering on; times the upload."""
    parts = args.capacity_partitions
    seg = args.capacity_segment_mib * MiB
    b = Broker(args.strata_bin, work / f"cap-{len(list(work.iterdir()))}", store.settings(),
               {**args.set, **extra})
    b.start()
    topic = f"cap-{random.getrandbits(32):08x}"
    value = random.Random(7).randbytes(args.value_bytes)
    try:
        create_topic(b.bootstrap, topic, parts, {"segment.bytes": str(seg), "retention.ms": "-1"})
        p = producer(b.bootstrap)
        t0 = time.monotonic()
        produce(p, topic, parts, args.capacity_backlog_mib * MiB // args.value_bytes, value)
        assert p.flush(600) == 0
        print(f"[c/{store.key}] produced {args.capacity_backlog_mib} MiB in "
              f"{time.monotonic() - t0:.1f}s", flush=True)
        files = [f for q in range(parts) for f in sorted(
            (b.data_dir / f"{topic}-{q}").glob("*.log"))[:-1]]  # the rolled segments
        if not files:
            raise RuntimeError("--capacity-backlog-mib fills no segment: no rolled segment")
        total = sum(f.stat().st_size for f in files)
        m0 = b.metrics()
        up0 = m0.get("strata_remote_uploaded_bytes_total", 0)
        n0 = m0.get("strata_remote_uploads_total", 0)
        fail0 = m0.get("strata_remote_upload_failures_total", 0)
        cpu0, store_cpu0 = b.cpu_seconds(), proc_cpu_seconds(store.pid())
        alter_topic(b.bootstrap, topic, "remote.storage.enable", "true")
        t0 = time.monotonic()
        t_first = t_last = None
        up_first = 0.0
        last = 0.0
        while True:
            m = b.metrics()
            now = time.monotonic()
            up, n = m.get("strata_remote_uploaded_bytes_total", 0) - up0, \
                m.get("strata_remote_uploads_total", 0) - n0
            if up != last:
                t_last, last = now, up
            if n > 0 and t_first is None:
                t_first, up_first = now, up
            if n >= len(files) and m.get("strata_remote_upload_lag_segments", 1) == 0:
                break
            if now - t0 > args.capacity_timeout:
                raise RuntimeError(f"(c) {len(files)} segments, {n} uploaded after "
                                   f"{args.capacity_timeout}s")
            time.sleep(0.1)
        cpu, store_cpu = b.cpu_seconds() - cpu0, proc_cpu_seconds(store.pid()) - store_cpu0
        fails = m.get("strata_remote_upload_failures_total", 0) - fail0
        wait_all_tiered(b, topic, parts, 120)  # the remote log end agrees (ListOffsets -5)
    finally:
        b.stop()
    secs = t_last - t0
    r = {"name": f"Strata, {name}", "segments": int(n), "bytes": up, "secs": secs,
         "first_secs": t_first - t0,
         # The rate once uploads run: without the wait for the first copier task.
         "steady_mib_s": (up - up_first) / MiB / (t_last - t_first) if t_last > t_first else None,
         "cpu": cpu, "store_cpu": store_cpu, "failures": fails,
         "files": files, "local_bytes": total}
    shown = {k: v for k, v in r.items() if k != "files"}
    print(f"[c/{store.key}] {name}: {json.dumps(shown)}", flush=True)
    return r


def direct_write(args, store, files: list[Path]) -> list[dict]:
    """The same .log files written to the store from Python, one at a time and N at once."""
    total = sum(f.stat().st_size for f in files)
    out = []
    for par in sorted({1, min(args.direct_parallel, len(files))}):
        scpu0, cpu0 = proc_cpu_seconds(store.pid()), time.process_time()
        t0 = time.monotonic()
        store.write_once(files, par)
        secs = time.monotonic() - t0
        out.append({"name": store.write_name(par), "segments": len(files), "bytes": total,
                    "secs": secs, "first_secs": None, "steady_mib_s": None,
                    "cpu": time.process_time() - cpu0,
                    "store_cpu": proc_cpu_seconds(store.pid()) - scpu0, "failures": 0})
        print(f"[c/{store.key}] {out[-1]['name']}: {total / MiB / secs:.1f} MiB/s", flush=True)
    return out


def capacity_tables(args, store, rows: list[dict]) -> list[str]:
    s3_note = ""
    if store.key == "s3":
        cfg = {**args.set}
        thr = int(cfg.get("strata.remote.s3.multipart.threshold.bytes", 64 * MiB))
        part = int(cfg.get("strata.remote.s3.multipart.part.bytes", 16 * MiB))
        par = cfg.get("strata.remote.s3.upload.parallelism", "4")
        seg = args.capacity_segment_mib * MiB
        s3_note = (f" Strata PUTs a .log over {thr / MiB:g} MiB "
                   f"(strata.remote.s3.multipart.threshold.bytes) as a multipart upload of "
                   f"{part / MiB:g} MiB parts, {par} at once: "
                   + (f"here {-(-seg // part)} parts per segment." if seg > thr
                      else "not here, one PUT per object."))
    strata = rows[0]
    out = [
        f"### (c) Upload capacity per broker to {store.label}, "
        f"{args.capacity_segment_mib} MiB segments",
        "",
        f"{args.capacity_partitions} partitions, segment.bytes {args.capacity_segment_mib} MiB: "
        f"a {args.capacity_backlog_mib} MiB backlog ({strata['segments']} rolled segments, "
        f"{strata['local_bytes'] / MiB:.0f} MiB of .log) produced into a topic without tiering, "
        "then remote.storage.enable=true (IncrementalAlterConfigs); seconds from the alter to the "
        "last segment uploaded (strata_remote_uploaded_bytes_total polled every 0.1 s; includes "
        "up to one remote.log.manager.task.interval.ms of 500 ms before the first upload starts; "
        "\"after the 1st\": MiB/s from the first segment done to the last, without that wait)."
        " The segments are in the page cache (just written). Direct rows: the same .log files "
        f"written to the store from this Python process.{s3_note}",
        "",
        "| uploader | segments | MiB | seconds | MiB/s | first segment done s "
        f"| MiB/s after the 1st | uploader CPU s | {store.label} server CPU s | Strata / this |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    ref = next((r for r in rows if r["name"].startswith("Strata, defaults")), strata)
    rate0 = ref["bytes"] / MiB / ref["secs"]
    for r in rows:
        rate = r["bytes"] / MiB / r["secs"]
        first = f"{r['first_secs']:.1f}" if r["first_secs"] is not None else "-"
        steady = f"{r['steady_mib_s']:.1f}" if r["steady_mib_s"] is not None else "-"
        fails = f" ({r['failures']:.0f} failed attempts)" if r["failures"] else ""
        out.append(f"| {r['name']}{fails} | {r['segments']} | {r['bytes'] / MiB:.0f} | "
                   f"{r['secs']:.2f} | {rate:.1f} | {first} | {steady} | {r['cpu']:.1f} | "
                   f"{r['store_cpu']:.1f} | {rate0 / rate:.2f} |")
    out.append("")
    return out


def summary_table(args, summaries: dict) -> list[str]:
    out = ["## Tiered storage, HDFS vs S3 (same run, figures from the sections above)", "",
           "| store | cold read, Strata MiB/s | cold read, direct sequential MiB/s "
           "| Strata / direct | upload capacity, 1 MiB segments, defaults MiB/s "
           f"| upload capacity, {args.capacity_segment_mib} MiB segments, defaults MiB/s "
           "| direct write of those, sequential MiB/s |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    f = lambda v: "-" if v is None else f"{v:.1f}"  # noqa: E731
    for label, s in summaries.items():
        ratio = (s["read"]["strata_mib_s"] / s["read"]["direct_mib_s"]) if "read" in s else None
        out.append(
            f"| {label} | {f(s.get('read', {}).get('strata_mib_s'))} | "
            f"{f(s.get('read', {}).get('direct_mib_s'))} | "
            f"{'-' if ratio is None else f'{ratio:.2f}'} | {f(s.get('upload'))} | "
            f"{f(s.get('capacity'))} | {f(s.get('direct_write'))} |")
    out.append("")
    return out


def parse_set(items: list[str]) -> dict:
    out = {}
    for it in items:
        k, sep, v = it.partition("=")
        if not sep:
            raise SystemExit(f"--set wants KEY=VALUE, not {it!r}")
        out[k.strip()] = v.strip()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--strata-bin", default=os.environ.get("STRATA_BIN",
                                                           str(ROOT / "build" / "strata")))
    ap.add_argument("--store", choices=["hdfs", "s3", "both"], default="both",
                    help="remote store(s) to run against, one section each (default both)")
    ap.add_argument("--only", choices=["read", "upload", "capacity"], action="append",
                    help="run these parts only (repeatable; default all three)")
    ap.add_argument("--value-bytes", type=int, default=4096)
    ap.add_argument("--read-mib", type=int, default=128, help="(a) data to tier and read back")
    ap.add_argument("--read-partitions", type=int, default=4)
    ap.add_argument("--read-segment-mib", type=int, default=8)
    ap.add_argument("--direct-parallel", type=int, default=8,
                    help="(a, c) objects read/written at once by the parallel direct rows")
    ap.add_argument("--upload-partitions", type=int, default=4)
    ap.add_argument("--rate-mib", type=float, default=1.0, help="(b) sustained produce MiB/s")
    ap.add_argument("--duration", type=int, default=45, help="(b) seconds of sustained produce")
    ap.add_argument("--backlog-mib", type=int, default=32, help="(b) backlog for capacity")
    ap.add_argument("--capacity-segment-mib", type=int, default=256,
                    help="(c) segment.bytes in MiB (1024 for the issue's 1 GiB segments)")
    ap.add_argument("--capacity-backlog-mib", type=int, default=1024,
                    help="(c) backlog in MiB (at least segment x partitions to roll one each)")
    ap.add_argument("--capacity-partitions", type=int, default=2,
                    help="(c) partitions (2 = the default copier pool, all busy)")
    ap.add_argument("--capacity-modes", default="defaults",
                    help="(c) comma-separated, of: " + ", ".join(MODE_KEYS) + " (as in (b))")
    ap.add_argument("--capacity-timeout", type=float, default=1800, help="(c) seconds")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="broker setting for every broker of the run (repeatable), e.g. "
                         "strata.remote.s3.upload.parallelism=8")
    ap.add_argument("--s3proxy-jvm", choices=["server", "tests"], default="server",
                    help="S3Proxy JVM: server = C2 JIT, 1 GiB heap (default); tests = s3kit's "
                         "flags as the integration tests run it (C1 only, 256 MiB heap)")
    ap.add_argument("--out", help="also write the markdown here")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    args.set = parse_set(args.set)
    parts = set(args.only or ["read", "upload", "capacity"])
    cap_modes = [m.strip() for m in args.capacity_modes.split(",") if m.strip()]
    for m in cap_modes:
        if m not in MODE_KEYS:
            ap.error(f"--capacity-modes: unknown mode {m!r} (have {', '.join(MODE_KEYS)})")
    stores = ["hdfs", "s3"] if args.store == "both" else [args.store]

    work = Path(tempfile.mkdtemp(prefix="strata-bench-tiered-"))
    built = time.strftime("%Y-%m-%d %H:%M", time.localtime(os.path.getmtime(args.strata_bin)))
    command = "bench/tiered.sh " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    lines: list[str] = []
    summaries: dict = {}
    t_run = time.monotonic()
    try:
        for key in stores:
            swork = work / key  # this store's server data and brokers, removed after its section
            swork.mkdir()
            store = STORES[key](args, swork)
            section = [f"## Tiered storage to {store.title} — {time.strftime('%Y-%m-%d %H:%M')}, "
                       f"{os.cpu_count()} cores, {args.strata_bin} (binary built {built})", "",
                       f"Command: `{command.strip()}`"
                       + ("; broker settings for every broker: "
                          + ", ".join(f"{k}={v}" for k, v in args.set.items())
                          if args.set else "") + ".", ""]
            summary = summaries.setdefault(store.label, {})
            t0 = time.monotonic()
            store.start()
            print(f"{store.title} up in {time.monotonic() - t0:.1f}s", flush=True)
            try:
                if "read" in parts:
                    rows, summary["read"] = cold_read(args, store, swork)
                    section += rows
                    print("\n".join(section), flush=True)
                if "upload" in parts:
                    results = []
                    for name, extra in MODES.items():
                        r = upload_run(args, store, swork, name, extra)
                        print(f"[b/{key}] {name}: "
                              f"{json.dumps({k: v for k, v in r.items() if k != 'samples'})}",
                              flush=True)
                        print(f"[b/{key}] lag samples (t, segments): " + " ".join(
                            f"{s[0]:.0f}:{s[1]:.0f}" for s in r["samples"]), flush=True)
                        results.append(r)
                    summary["upload"] = results[-1]["capacity_mib_s"]
                    section += upload_tables(args, store, results)
                if "capacity" in parts:
                    rows = [capacity_run(args, store, swork, MODE_KEYS[m], MODES[MODE_KEYS[m]])
                            for m in cap_modes]
                    direct = direct_write(args, store, rows[0]["files"])
                    if "defaults" in cap_modes:
                        d = rows[cap_modes.index("defaults")]
                        summary["capacity"] = d["bytes"] / MiB / d["secs"]
                    summary["direct_write"] = direct[0]["bytes"] / MiB / direct[0]["secs"]
                    section += capacity_tables(args, store, rows + direct)
            finally:
                store.stop()
                if not args.keep:
                    shutil.rmtree(swork, ignore_errors=True)
            lines += section
        if len(stores) > 1:
            lines += summary_table(args, summaries)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"whole run: {(time.monotonic() - t_run) / 60:.1f} min", flush=True)
    text = "\n".join(lines)
    print("\n" + text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
