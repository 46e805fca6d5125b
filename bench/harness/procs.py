"""Child-process bookkeeping and /proc sampling.

Every process the harness starts goes through `spawn`, which puts it in its own session
(process group) and remembers it, so `kill_all` (called from a `finally` and from the
SIGINT/SIGTERM handlers) can end it and its children even when a step failed.
`ProcSampler` polls one pid's CPU time and resident memory. Not thread-safe except where
noted.
"""
from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")
_live: list[subprocess.Popen] = []


def spawn(cmd: list[str], log_path: Path, cwd: Path | None = None,
          env: dict | None = None) -> subprocess.Popen:
    """Starts `cmd` with stdout+stderr appended to log_path, in its own process group."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        log.write(f"==== {time.strftime('%H:%M:%S')} $ {' '.join(cmd)}\n".encode())
        log.flush()
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             cwd=cwd, env=env, start_new_session=True)
    _live.append(p)
    return p


def spawn_piped(cmd: list[str], log_path: Path) -> subprocess.Popen:
    """Like `spawn`, but with stdin and stdout as text pipes to talk to the process (its stderr
    goes to log_path), e.g. the connection-storm clients of harness/storm.py."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        log.write(f"==== {time.strftime('%H:%M:%S')} $ {' '.join(cmd)}\n".encode())
        log.flush()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.PIPE,
                             text=True, start_new_session=True)
    _live.append(p)
    return p


def stop(p: subprocess.Popen, grace: float = 15.0) -> int | None:
    """SIGTERM to the process group, then SIGKILL after `grace` seconds. Returns the exit code."""
    if p.poll() is None:
        _signal_group(p, signal.SIGTERM)
        try:
            p.wait(grace)
        except subprocess.TimeoutExpired:
            _signal_group(p, signal.SIGKILL)
            p.wait()
    if p in _live:
        _live.remove(p)
    return p.returncode


def stop_many(ps: list[subprocess.Popen], grace: float = 30.0) -> None:
    """SIGTERM to every process group at once, then SIGKILL to those still there after `grace`
    seconds (nodes of a cluster: stopping them one by one can leave the last waiting on a
    quorum that is gone)."""
    for p in ps:
        if p.poll() is None:
            _signal_group(p, signal.SIGTERM)
    deadline = time.monotonic() + grace
    for p in ps:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal_group(p, signal.SIGKILL)
            p.wait()
        if p in _live:
            _live.remove(p)


def kill9(p: subprocess.Popen) -> float:
    """SIGKILL to the process group (a crash, no shutdown work); waits until it is gone.
    Returns time.monotonic() taken just before the signal (CLOCK_MONOTONIC, the same clock
    in every process on the machine)."""
    t = time.monotonic()
    _signal_group(p, signal.SIGKILL)
    p.wait()
    if p in _live:
        _live.remove(p)
    return t


def _signal_group(p: subprocess.Popen, sig: int) -> None:
    # Only while the leader is unreaped: its pid (= the group id) cannot have been reused.
    if p.returncode is not None:
        return
    try:
        os.killpg(p.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def kill_all() -> None:
    """Ends every process started by `spawn` that is still around (idempotent)."""
    for p in list(_live):
        stop(p, grace=5.0)


def run_logged(cmd: list[str], log_path: Path, timeout: float) -> tuple[int, str]:
    """Runs cmd to completion (killed after `timeout` s); returns (exit code, its output)."""
    start = log_path.stat().st_size if log_path.exists() else 0
    p = spawn(cmd, log_path)
    try:
        rc = p.wait(timeout)
    except subprocess.TimeoutExpired:
        stop(p, grace=2.0)
        rc = -999
    finally:
        if p in _live:
            stop(p)
    with open(log_path, "rb") as f:
        f.seek(start)
        out = f.read().decode(errors="replace")
    if rc == -999:
        out += f"\n[harness] killed after {timeout:.0f}s timeout\n"
    return rc, out


def cpu_seconds(pid: int) -> float:
    """utime + stime of `pid` (all its threads) in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def memory_kib(pid: int) -> dict[str, int]:
    """VmRSS, VmHWM, RssAnon, RssFile of `pid` in KiB."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                out[key] = int(rest.split()[0])
    return out


class ProcSampler:
    """Polls a pid's memory every `interval` s on a background thread and keeps the peak
    RSS since the last `begin()`; `begin`/`end` bracket one workload and also take the
    CPU-time difference. begin/end are called from one thread; the poller only updates peaks.
    """

    def __init__(self, pid: int, interval: float = 0.1):
        self.pid = pid
        self.interval = interval
        self._lock = threading.Lock()
        self._peak = {"VmRSS": 0, "RssAnon": 0, "RssFile": 0}
        self._cpu0 = 0.0
        self._t0 = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._poll()

    def _poll(self) -> None:
        try:
            m = memory_kib(self.pid)
        except (OSError, ValueError):
            return
        with self._lock:
            for k in self._peak:
                self._peak[k] = max(self._peak[k], m.get(k, 0))

    def begin(self) -> None:
        with self._lock:
            self._peak = {k: 0 for k in self._peak}
        self._poll()
        self._cpu0 = cpu_seconds(self.pid)
        self._t0 = time.time()

    def end(self) -> dict:
        """CPU seconds and wall seconds since begin(), and peak RSS (MiB) over that span."""
        self._poll()
        cpu = cpu_seconds(self.pid) - self._cpu0
        with self._lock:
            peak = dict(self._peak)
        hwm = memory_kib(self.pid).get("VmHWM", 0)
        return {"broker_cpu_s": round(cpu, 3), "wall_s": round(time.time() - self._t0, 3),
                "peak_rss_mib": round(peak["VmRSS"] / 1024, 1),
                "peak_rss_anon_mib": round(peak["RssAnon"] / 1024, 1),
                "peak_rss_file_mib": round(peak["RssFile"] / 1024, 1),
                "hwm_mib": round(hwm / 1024, 1)}

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
