"""A real S3-compatible server for integration tests: S3Proxy on its filesystem backend.

    s3 = S3Server(tmp_path / "s3").start()      # loopback, free port, fresh data dir
    s3.create_bucket("strata")
    s3.put("strata", "a/b", b"..."); s3.list_keys("strata", "a/")  # {"a/b": 3}
    s3.kill9(); s3.restart()                      # same port, same data
    s3.stop()

The jar comes from tests/s3/install.sh (or $STRATA_S3PROXY_JAR). Requests are path-style
(http://127.0.0.1:PORT/bucket/key) and SigV4-signed (service "s3", region `region`). The small
SigV4 signer below is for the tests' own checks only, not a pattern for the product.
"""
from __future__ import annotations

import datetime
import hashlib
import hmac
import http.client
import os
import re
import signal
import subprocess
import time
import urllib.parse
import xml.etree.ElementTree as ET
from pathlib import Path

from ports import free_port

REPO_ROOT = Path(__file__).resolve().parents[2]
S3PROXY_VERSION = "4.1.0"
S3PROXY_JAR = Path(os.environ.get("STRATA_S3PROXY_JAR") or REPO_ROOT / "tests" / "s3" / "target"
                   / f"s3proxy-{S3PROXY_VERSION}-jar-with-dependencies.jar")
_NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"


class S3Error(Exception):
    """A response with an unexpected status: .status, .code (the XML <Code>, if any), .body."""

    def __init__(self, status: int, body: bytes, what: str):
        self.status, self.body = status, body
        try:
            self.code = ET.fromstring(body).findtext("Code") if body else None
        except ET.ParseError:
            self.code = None
        super().__init__(f"{what}: HTTP {status} {self.code or body[:200]!r}")


class S3Server:
    """One S3Proxy process (filesystem-nio2 backend under workdir/data) on 127.0.0.1.

    Attributes: port, endpoint ("http://127.0.0.1:PORT"), access_key, secret_key, region,
    data_dir, log_path (stdout+stderr of every start, appended). Not thread-safe."""

    def __init__(self, workdir: Path, access_key: str = "strata-test-ak",
                 secret_key: str = "strata-test-sk", region: str = "us-east-1",
                 port: int | None = None, virtual_host: str | None = None):
        self.workdir = Path(workdir)
        self.data_dir = self.workdir / "data"
        self.log_path = self.workdir / "s3proxy.log"
        self.access_key, self.secret_key, self.region = access_key, secret_key, region
        self.port = port or free_port()
        self.pid_path = self.workdir / "s3proxy.pid"
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        # With virtual_host ("localhost"), requests to BUCKET.localhost:PORT name the bucket by
        # their host (virtual-hosted style); path-style requests are still served.
        self.virtual_host = virtual_host

    def start(self, timeout: float = 30.0) -> "S3Server":
        """Start the server (same port and data on every call) and wait until it answers HTTP."""
        if self.proc is not None and self.proc.poll() is None:
            return self
        if not S3PROXY_JAR.is_file():
            raise RuntimeError(f"{S3PROXY_JAR} missing: run tests/s3/install.sh")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        props = self.workdir / "s3proxy.properties"
        props.write_text(f"s3proxy.endpoint={self.endpoint}\n"
                         "s3proxy.authorization=aws-v2-or-v4\n"
                         f"s3proxy.identity={self.access_key}\n"
                         f"s3proxy.credential={self.secret_key}\n"
                         "jclouds.provider=filesystem-nio2\n"
                         f"jclouds.filesystem.basedir={self.data_dir}\n"
                         + (f"s3proxy.virtual-host={self.virtual_host}\n"
                            if self.virtual_host else ""))
        java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") \
            if os.environ.get("JAVA_HOME") else "java"
        cmd = [java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
               "-Dlogback.statusListenerClass=ch.qos.logback.core.status.NopStatusListener",
               "-jar", str(S3PROXY_JAR), "--properties", str(props)]
        with open(self.log_path, "ab") as log:
            log.write(f"---- start {' '.join(cmd)}\n".encode())
            log.flush()
            offset = log.tell()
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        self.pid_path.write_text(str(self.proc.pid))
        # Ours is serving once its log (since this start) says its connector started on our
        # port, and it answers HTTP: an answer alone could come from another process.
        bound = re.compile(rb"Started \S*ServerConnector.*\{127\.0\.0\.1:%d\}" % self.port)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            with open(self.log_path, "rb") as log:
                log.seek(offset)
                if not bound.search(log.read()):
                    time.sleep(0.1)
                    continue
            try:  # any HTTP answer (an unsigned request gets 403) will do
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/")
                conn.getresponse().read()
                conn.close()
                return self
            except OSError:
                time.sleep(0.1)
        rc = self.proc.poll()
        self.kill9()
        tail = self.log_path.read_text(errors="replace").splitlines()[-40:]
        why = f"exited with code {rc}" if rc is not None else f"did not answer in {timeout}s"
        raise RuntimeError(f"S3Proxy on {self.endpoint} {why}; log tail:\n" + "\n".join(tail))

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM, then SIGKILL after `timeout` seconds; no-op when not running. A server
        restarted by the command line below (another process) is killed by its pid file."""
        if self.proc is None or self.proc.poll() is not None:
            self.proc = None
            kill_by_pid_file(self.workdir)
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def kill9(self) -> None:
        """SIGKILL the server and wait until it is gone (the data dir stays)."""
        if self.proc is not None:
            if self.proc.poll() is None:
                os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            self.proc = None

    def __enter__(self) -> "S3Server":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def restart(self, timeout: float = 30.0) -> "S3Server":
        """Stop (if running) and start again on the same port and data dir."""
        self.stop()
        return self.start(timeout)

    # ---- a small signed client, for the tests' own checks ----------------------------
    def request(self, method: str, bucket: str, key: str = "", query: dict | None = None,
                body: bytes = b"", headers: dict | None = None) -> tuple[int, dict, bytes]:
        """One SigV4-signed path-style request; returns (status, lower-cased headers, body)."""
        q = lambda s: urllib.parse.quote(s, safe="-_.~")  # noqa: E731 (RFC 3986 unreserved)
        path = "/" + bucket + ("/" + urllib.parse.quote(key, safe="/-_.~") if key else "")
        query_str = "&".join(f"{q(k)}={q(str(v))}" for k, v in sorted((query or {}).items()))
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        hdrs = {k.lower(): str(v).strip() for k, v in (headers or {}).items()}
        # (With a virtual host, any other Host names a bucket: the path-style host is it.)
        hdrs.update({"host": f"{self.virtual_host or '127.0.0.1'}:{self.port}", "x-amz-date": now,
                     "x-amz-content-sha256": hashlib.sha256(body).hexdigest()})
        names = sorted(hdrs)
        canonical = "\n".join([method, path, query_str, "".join(f"{n}:{hdrs[n]}\n" for n in names),
                               ";".join(names), hdrs["x-amz-content-sha256"]])
        scope = f"{now[:8]}/{self.region}/s3/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", now, scope,
                             hashlib.sha256(canonical.encode()).hexdigest()])
        k = ("AWS4" + self.secret_key).encode()
        for part in (now[:8], self.region, "s3", "aws4_request"):
            k = hmac.new(k, part.encode(), hashlib.sha256).digest()
        sig = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
        hdrs["authorization"] = (f"AWS4-HMAC-SHA256 Credential={self.access_key}/{scope}, "
                                 f"SignedHeaders={';'.join(names)}, Signature={sig}")
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(method, path + ("?" + query_str if query_str else ""), body=body,
                         headers=hdrs)
            resp = conn.getresponse()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
        finally:
            conn.close()

    def _ok(self, what: str, *args, **kwargs) -> tuple[int, dict, bytes]:
        status, hdrs, body = self.request(*args, **kwargs)
        if status // 100 != 2:
            raise S3Error(status, body, what)
        return status, hdrs, body

    def create_bucket(self, name: str) -> None:
        """Create bucket `name` (an existing one is fine)."""
        status, _, body = self.request("PUT", name)
        if status // 100 != 2 and not (status == 409 and b"BucketAlreadyOwnedByYou" in body):
            raise S3Error(status, body, f"create bucket {name}")

    def put(self, bucket: str, key: str, data: bytes) -> str:
        """PutObject; returns the ETag (quoted, as S3 sends it)."""
        return self._ok(f"put {bucket}/{key}", "PUT", bucket, key, body=data)[1].get("etag", "")

    def get(self, bucket: str, key: str) -> bytes:
        """GetObject: the whole object's bytes (S3Error with .status 404 if missing)."""
        return self._ok(f"get {bucket}/{key}", "GET", bucket, key)[2]

    def list_keys(self, bucket: str, prefix: str = "", page: int = 1000) -> dict[str, int]:
        """Every key under `prefix` -> its size (ListObjectsV2, `page` keys a request)."""
        out: dict[str, int] = {}
        query = {"list-type": "2", "prefix": prefix, "max-keys": str(page)}
        while True:
            root = ET.fromstring(self._ok(f"list {bucket}/{prefix}", "GET", bucket,
                                          query=query)[2])
            for c in root.iter(_NS + "Contents"):
                out[c.findtext(_NS + "Key")] = int(c.findtext(_NS + "Size"))
            token = root.findtext(_NS + "NextContinuationToken")
            if root.findtext(_NS + "IsTruncated") != "true" or not token:
                return out
            query["continuation-token"] = token


def kill_by_pid_file(workdir: Path) -> None:
    """SIGKILL the server whose pid workdir/s3proxy.pid holds, and wait until it is gone."""
    pid_path = Path(workdir) / "s3proxy.pid"
    if not pid_path.exists():
        return
    pid = int(pid_path.read_text())
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        try:  # reap it when it is our child; otherwise its parent does
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.05)


if __name__ == "__main__":
    # kill -9 and restart a server from another process (a test binary's outage commands):
    #   s3kit.py kill --workdir W      s3kit.py start --workdir W --port P
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("action", choices=["kill", "start"])
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--port", type=int)
    args = parser.parse_args()
    if args.action == "kill":
        kill_by_pid_file(Path(args.workdir))
    else:
        S3Server(Path(args.workdir), port=args.port).start()
