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
