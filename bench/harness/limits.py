"""What the machine can do, measured in the same run as the brokers: sequential write
bandwidth of the log-dir filesystem (dd ... conv=fdatasync) and loopback TCP bandwidth
(a Python sender/receiver pair, one stream), plus a description of the machine.
"""
from __future__ import annotations

import os
import platform
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

# Receiver run as a separate process (so sender and receiver do not share a GIL): accepts
# one connection, counts bytes until EOF, prints "<bytes> <seconds from first byte>".
_RECEIVER = r"""
import socket, sys, time
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
print(srv.getsockname()[1], flush=True)
conn, _ = srv.accept()
buf = bytearray(1 << 20); total = 0; t0 = None
while True:
    n = conn.recv_into(buf)
    if not n: break
    if t0 is None: t0 = time.perf_counter()
    total += n
print(total, time.perf_counter() - t0, flush=True)
"""


def disk_write(directory: Path, mib: int) -> dict:
    """dd `mib` MiB of zeroes into `directory` with one fdatasync at the end."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "dd-write-test.bin"
    try:
        t0 = time.perf_counter()
        r = subprocess.run(["dd", "if=/dev/zero", f"of={target}", "bs=1M", f"count={mib}",
                            "conv=fdatasync"], capture_output=True, text=True, timeout=600)
        seconds = time.perf_counter() - t0
    finally:
        target.unlink(missing_ok=True)
    if r.returncode != 0:
        raise RuntimeError(f"dd failed: {r.stderr}")
    # dd's own figure: "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 2.5 s, 430 MB/s"
    m = re.search(r"(\d+) bytes .* copied, ([\d.,]+) s", r.stderr)
    nbytes, secs = (int(m.group(1)), float(m.group(2).replace(",", "."))) if m else (mib << 20, seconds)
    return {"tool": f"dd bs=1M count={mib} conv=fdatasync", "bytes": nbytes,
            "seconds": round(secs, 3), "mb_per_s": round(nbytes / secs / 1e6, 1)}


def loopback_tcp(seconds: float) -> dict:
    """One TCP stream over 127.0.0.1 for `seconds`; MB/s as counted by the receiver."""
    rx = subprocess.Popen([sys.executable, "-c", _RECEIVER], stdout=subprocess.PIPE, text=True)
    try:
        port = int(rx.stdout.readline())
        chunk = memoryview(bytes(1 << 20))
        with socket.create_connection(("127.0.0.1", port)) as s:
            deadline = time.perf_counter() + seconds
            while time.perf_counter() < deadline:
                s.sendall(chunk)
        nbytes, secs = rx.stdout.readline().split()
        rx.wait(10)
    finally:
        if rx.poll() is None:
            rx.kill()
            rx.wait()
    nbytes, secs = int(nbytes), float(secs)
    return {"tool": "python socket pair, 1 stream, 1 MiB writes", "bytes": nbytes,
            "seconds": round(secs, 3), "mb_per_s": round(nbytes / secs / 1e6, 1)}


def machine(log_dir: Path) -> dict:
    """CPU model, cores, RAM, kernel, the filesystem holding the log dirs, load average."""
    model = ""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        m = re.search(r"^Model name:\s*(.+)$", out, re.M)
        model = m.group(1).strip() if m else ""
    except OSError:
        pass
    mem_kib = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
    fs = ""
    try:
        out = subprocess.run(["df", "--output=source,fstype,target", str(log_dir)],
                             capture_output=True, text=True).stdout.splitlines()
        fs = " ".join(out[-1].split()) if len(out) > 1 else ""
    except OSError:
        pass
    return {"cpu_model": model, "cores": os.cpu_count(), "ram_gib": round(mem_kib / 2**20, 1),
            "kernel": platform.release(), "log_dir_fs": fs,
            "loadavg_at_start": open("/proc/loadavg").read().split()[:3]}


def loadavg() -> list[str]:
    return open("/proc/loadavg").read().split()[:3]


# Process names that mean someone else is building or testing on this machine.
BUSY_NAMES = ("cc1plus", "cc1", "ld", "ninja", "cmake", "ctest", "pytest", "java", "strata",
              "etcd", "python3", "clang-tidy", "make")


class OtherLoad:
    """Samples, every `interval` s on a background thread, the CPU used by processes outside
    this process's tree (so the brokers and clients the harness started are not counted) and
    which of BUSY_NAMES (or `*_tests`) they are. `summary()` gives the mean and peak cores used
    by the others over the run (processes that start and end between two samples are missed,
    so it is a lower bound) and how often each name was seen."""

    def __init__(self, interval: float = 5.0):
        import threading
        self.interval = interval
        self._prev: dict[int, float] = {}
        self._samples: list[float] = []
        self._seen: dict[str, int] = {}
        self._n = 0
        self._t = time.monotonic()
        self._stop = threading.Event()
        self._scan()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._scan()

    def _scan(self) -> None:
        procs: dict[int, tuple[int, str, float]] = {}
        tck = os.sysconf("SC_CLK_TCK")
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open(f"/proc/{d}/stat") as f:
                    raw = f.read()
                comm = raw[raw.index("(") + 1:raw.rindex(")")]
                fields = raw.rpartition(")")[2].split()
                procs[int(d)] = (int(fields[1]), comm,
                                 (int(fields[11]) + int(fields[12])) / tck)
            except (OSError, ValueError, IndexError):
                continue
        ours = {os.getpid()}
        changed = True
        while changed:
            changed = False
            for pid, (ppid, _, _) in procs.items():
                if ppid in ours and pid not in ours:
                    ours.add(pid)
                    changed = True
        now = time.monotonic()
        cpu, names = 0.0, set()
        for pid, (_, comm, t) in procs.items():
            if pid in ours:
                continue
            cpu += t - self._prev.get(pid, t)
            if comm in BUSY_NAMES or comm.endswith("_tests"):
                names.add(comm)
        if self._prev and now > self._t:
            self._samples.append(cpu / (now - self._t))
            self._n += 1
            for n in names:
                self._seen[n] = self._seen.get(n, 0) + 1
        self._prev = {pid: t for pid, (_, _, t) in procs.items() if pid not in ours}
        self._t = now

    def summary(self) -> dict:
        self._stop.set()
        self._thread.join(self.interval + 5)
        s = self._samples
        return {"samples": self._n, "interval_s": self.interval,
                "mean_cores": round(sum(s) / len(s), 2) if s else 0.0,
                "peak_cores": round(max(s), 2) if s else 0.0,
                "seen": {k: v for k, v in sorted(self._seen.items(), key=lambda kv: -kv[1])}}
