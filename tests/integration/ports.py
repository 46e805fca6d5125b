"""Listening ports for test processes, taken below the kernel's ephemeral range.

A port the kernel hands out for bind(0) comes from the ephemeral range, which outgoing
connections use too: while a broker is stopped, a client's connection may take its port, and
the restart fails with "Address already in use". Ports below the range are only ever taken by
a bind that asks for them."""
from __future__ import annotations

import random
import socket


def _ephemeral_low() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


_LOW = 10000
_HIGH = max(_LOW + 1000, _ephemeral_low())


def free_port() -> int:
    """A port nobody listens on now, outside the ephemeral range."""
    for _ in range(200):
        port = random.randrange(_LOW, _HIGH)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in [{_LOW}, {_HIGH})")
