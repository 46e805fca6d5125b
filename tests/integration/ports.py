"""Listening ports for test processes, taken below the kernel's ephemeral range.

A port the kernel hands out for bind(0) comes from the ephemeral range, which outgoing
connections use too: while a broker is stopped, a client's connection may take its port, and
the restart fails with "Address already in use". Ports below the range are only ever taken by
a bind that asks for them."""
from __future__ import annotations

import os
import random
import socket


def _ephemeral_low() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _worker_slice(low: int, high: int) -> tuple[int, int]:
    """Under pytest-xdist each worker (PYTEST_XDIST_WORKER gw0, gw1, ... of
    PYTEST_XDIST_WORKER_COUNT) takes its own part of [low, high), so that two workers never
    hand out the same port."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    if not worker.startswith("gw") or count <= 1:
        return low, high
    index = int(worker[2:])
    size = (high - low) // count
    return low + index * size, low + (index + 1) * size


_LOW, _HIGH = _worker_slice(10000, max(11000, _ephemeral_low()))
# Handed out by this process: a port is free until its taker binds it, so two calls before
# that (a broker's admin port, then its listener port) could otherwise get the same one.
_handed_out: set[int] = set()


def free_port() -> int:
    """A port nobody listens on now, outside the ephemeral range, never handed out before by
    this process."""
    for _ in range(200):
        port = random.randrange(_LOW, _HIGH)
        if port in _handed_out:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            _handed_out.add(port)
            return port
    raise RuntimeError(f"no free port in [{_LOW}, {_HIGH})")
