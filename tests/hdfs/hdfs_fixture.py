"""A real HDFS (MiniDFSCluster: 1 NameNode + 1 DataNode, WebHDFS on) for Strata's tests.

Use from pytest::

    from hdfs_fixture import MiniHdfs
    h = MiniHdfs(tmp_path / "hdfs")
    h.start(format=True)          # blocks until WebHDFS answers; returns self
    h.webhdfs_uri("/strata")      # "webhdfs://127.0.0.1:<http port>/strata"
    h.kill9(); h.restart()        # same storage, same ports
    h.hdfs_uri()                  # "hdfs://127.0.0.1:<namenode rpc port>"
    h.digest("/strata")           # {path: (length, sha256)} read with the Java client over RPC
    h.stop()

or from a shell (the state lives in <base-dir>/fixture.json, so any process can kill or
restart a cluster another process started)::

    python3 hdfs_fixture.py start   --base-dir DIR [--format]
    python3 hdfs_fixture.py kill    --base-dir DIR     # kill -9, waits until the JVM is gone
    python3 hdfs_fixture.py restart --base-dir DIR     # start again on the same storage/ports
    python3 hdfs_fixture.py stop    --base-dir DIR
    python3 hdfs_fixture.py digest  --base-dir DIR --dir /strata   # sha256 of every file (RPC)

The Java side is tests/hdfs/src/main/java/io/strata/hdfs/MiniHdfs.java (and HdfsDigest.java, the
independent reader), built by build.sh.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Hadoop 3.5 runs on Java 17; these keep reflective accesses of older code paths working.
JVM_OPENS = [
    f"--add-opens=java.base/{p}=ALL-UNNAMED"
    for p in ("java.io", "java.lang", "java.lang.reflect", "java.math", "java.net", "java.nio",
              "java.text", "java.util", "java.util.concurrent", "java.util.zip",
              "sun.nio.ch", "sun.security.util", "sun.security.x509")
]


def build() -> None:
    """Builds the MiniHdfs jar and its classpath (a no-op when up to date)."""
    subprocess.run([str(HERE / "build.sh")], check=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _alive(pid: int) -> bool:
    """True while pid runs (a zombie counts as dead: whoever started it may not reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


class MiniHdfs:
    """One MiniDFSCluster JVM whose storage lives in base_dir."""

    def __init__(self, base_dir, nn_port: int | None = None, http_port: int | None = None):
        self.base_dir = Path(base_dir).resolve()
        self.base_dir.mkdir(parents=True, exist_ok=True)
        self.state_file = self.base_dir / "fixture.json"
        self.log_file = self.base_dir / "minihdfs.log"
        state = self._load()
        self.nn_port = nn_port or state.get("nn_port") or free_port()
        self.http_port = http_port or state.get("http_port") or free_port()

    # ---- state shared between processes -------------------------------------------------
    def _load(self) -> dict:
        try:
            return json.loads(self.state_file.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return {}

    def _save(self, pid: int | None) -> None:
        self.state_file.write_text(json.dumps(
            {"pid": pid, "nn_port": self.nn_port, "http_port": self.http_port}))

    @property
    def pid(self) -> int | None:
        return self._load().get("pid")

    @property
    def running(self) -> bool:
        pid = self.pid
        return pid is not None and _alive(pid)

    def webhdfs_uri(self, root: str = "/") -> str:
        return f"webhdfs://127.0.0.1:{self.http_port}{root}"

    def hdfs_uri(self) -> str:
        """The NameNode's native RPC address (what the Java HDFS client talks to)."""
        return f"hdfs://127.0.0.1:{self.nn_port}"

    # ---- reading back with the Java client over RPC (HdfsDigest.java) -------------------
    def _java_client(self, *args: str, timeout: float = 300) -> bytes:
        jar = HERE / "target" / "strata-minihdfs.jar"
        cmd = ["java", "-Xmx256m", "-XX:+IgnoreUnrecognizedVMOptions", *JVM_OPENS,
               "-Djava.net.preferIPv4Stack=true", "-Dlog4j2.level=warn",
               "-cp", f"{jar}:{HERE / 'target' / 'lib'}/*", "io.strata.hdfs.HdfsDigest",
               self.hdfs_uri(), *args]
        r = subprocess.run(cmd, capture_output=True, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError(f"HdfsDigest {args} failed ({r.returncode}):\n"
                               f"{r.stderr.decode(errors='replace')[-4000:]}")
        return r.stdout

    def digest(self, directory: str) -> tuple[dict[str, tuple[int, str]], float]:
        """{path: (length, sha256 hex)} of every file under `directory` (recursive), read in full
        over hdfs:// RPC, plus the seconds the reads took (JVM start-up excluded)."""
        files: dict[str, tuple[int, str]] = {}
        secs = -1.0
        for line in self._java_client(directory).decode().splitlines():
            if line.startswith("TOTAL "):
                secs = float(line.split()[3])
                continue
            sha, length, path = line.split(" ", 2)
            files[path] = (int(length), sha)
        assert secs >= 0, "HdfsDigest printed no TOTAL line"
        return files, secs

    def list_files(self, directory: str) -> list[str]:
        """Paths of every file under `directory` (recursive), by WebHDFS LISTSTATUS: names only,
        so files being replaced meanwhile do not matter (digest reads them)."""
        import json
        out: list[str] = []
        url = f"http://127.0.0.1:{self.http_port}/webhdfs/v1{directory}?op=LISTSTATUS&user.name=strata"
        with urllib.request.urlopen(url, timeout=30) as r:
            entries = json.load(r)["FileStatuses"]["FileStatus"]
        for e in entries:
            path = f"{directory.rstrip('/')}/{e['pathSuffix']}"
            if e["type"] == "DIRECTORY":
                out += self.list_files(path)
            else:
                out.append(path)
        return out

    def cat(self, path: str) -> bytes:
        """The bytes of one file, read over hdfs:// RPC."""
        return self._java_client("--cat", path)

    # ---- lifecycle ----------------------------------------------------------------------
    def start(self, format: bool = False, timeout: float = 180) -> "MiniHdfs":
        """Starts the JVM (formatting the storage only when asked) and waits for WebHDFS."""
        if self.running:
            raise RuntimeError(f"MiniHdfs already running (pid {self.pid})")
        jar = HERE / "target" / "strata-minihdfs.jar"
        if not jar.exists():
            build()
        cmd = ["java", "-Xmx768m", "-XX:+IgnoreUnrecognizedVMOptions", *JVM_OPENS,
               "-Djava.net.preferIPv4Stack=true",
               "-cp", f"{jar}:{HERE / 'target' / 'lib'}/*", "io.strata.hdfs.MiniHdfs",
               "--base-dir", str(self.base_dir / "dfs"),
               "--nn-port", str(self.nn_port), "--http-port", str(self.http_port)]
        if format:
            cmd.append("--format")
        offset = self.log_file.stat().st_size if self.log_file.exists() else 0
        with open(self.log_file, "ab") as log:
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        self._save(proc.pid)
        self._wait_ready(proc.pid, offset, timeout)
        return self

    def _wait_ready(self, pid: int, offset: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(self.log_file, "rb") as f:
                f.seek(offset)
                out = f.read().decode(errors="replace")
            if any(line.startswith("READY ") for line in out.splitlines()) and self._answers():
                return
            if not _alive(pid):
                raise RuntimeError(f"MiniHdfs exited during start-up:\n{out[-4000:]}")
            time.sleep(0.2)
        self.kill9()
        raise TimeoutError(f"MiniHdfs not ready after {timeout}s; log: {self.log_file}")

    def _answers(self) -> bool:
        url = f"http://127.0.0.1:{self.http_port}/webhdfs/v1/?op=LISTSTATUS&user.name=strata-test"
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return r.status == 200 and b"FileStatuses" in r.read()
        except OSError:
            return False

    def _wait_dead(self, pid: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not _alive(pid):
                return True
            time.sleep(0.05)
        return False

    def kill9(self) -> None:
        """kill -9 the JVM and wait until it is gone (its ports are then free)."""
        pid = self.pid
        if pid is None or not _alive(pid):
            return
        os.kill(pid, signal.SIGKILL)
        if not self._wait_dead(pid, 30):
            raise RuntimeError(f"MiniHdfs pid {pid} survived SIGKILL")
        self._save(None)

    def stop(self, timeout: float = 30) -> None:
        """SIGTERM (clean MiniDFSCluster.shutdown), then SIGKILL after timeout."""
        pid = self.pid
        if pid is None or not _alive(pid):
            return
        os.kill(pid, signal.SIGTERM)
        if not self._wait_dead(pid, timeout):
            self.kill9()
        self._save(None)

    def restart(self, timeout: float = 180) -> "MiniHdfs":
        """Starts again on the same storage and ports (after kill9 or stop)."""
        self.stop()
        return self.start(format=False, timeout=timeout)

    def log_tail(self, n: int = 4000) -> str:
        try:
            return self.log_file.read_text(errors="replace")[-n:]
        except FileNotFoundError:
            return ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("command", choices=["build", "start", "stop", "kill", "restart", "status",
                                        "digest"])
    ap.add_argument("--dir", default="/", help="digest: the HDFS directory to hash")
    ap.add_argument("--base-dir", required=False)
    ap.add_argument("--format", action="store_true")
    ap.add_argument("--nn-port", type=int)
    ap.add_argument("--http-port", type=int)
    args = ap.parse_args()
    if args.command == "build":
        build()
        return 0
    if not args.base_dir:
        ap.error("--base-dir is required")
    h = MiniHdfs(args.base_dir, args.nn_port, args.http_port)
    if args.command == "start":
        h.start(format=args.format)
    elif args.command == "stop":
        h.stop()
    elif args.command == "kill":
        h.kill9()
    elif args.command == "restart":
        h.restart()
    elif args.command == "digest":
        files, secs = h.digest(args.dir)
        print(json.dumps({"files": files, "read_seconds": secs}))
        return 0
    print(json.dumps({"running": h.running, "pid": h.pid, "nn_port": h.nn_port,
                      "http_port": h.http_port, "uri": h.webhdfs_uri()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
