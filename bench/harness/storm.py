"""Connection storm: many clients opening TLS connections to a SASL_SSL listener and
authenticating with SCRAM at the same moment, as a fleet of clients does when a broker comes back
or an application restarts everywhere at once. Each client does what a Kafka client does before
its first real request, and nothing more:

1. TCP connect, then the TLS handshake (TLSv1.3 only, the server certificate checked against the
   benchmark's CA and the address it is reached at);
2. ApiVersions v3 (what the Java client and librdkafka send first);
3. SaslHandshake v1 with the mechanism (SCRAM-SHA-512);
4. SaslAuthenticate v2 twice: client-first (n,,n=user,r=nonce), then client-final with the proof;
   the server's final message (v=ServerSignature) is checked, so a broker that skipped the check
   of the proof would not pass as authenticated.

The client side is Python asyncio, one event loop per process (`run_storm` starts several, each
holding its share of the connections, released by one start time on CLOCK_MONOTONIC, the same
clock in every process). The expensive part of SCRAM on the client, SaltedPassword = PBKDF2 over
`iterations` rounds, is computed once per (password, salt, iterations) and reused: the broker
sends the same salt for a user every time, so with a handful of users the client computes a
handful of PBKDF2s in all, and per connection only the HMACs, as the broker does (both systems
keep StoredKey/ServerKey, never run PBKDF2 per login). The client's CPU time is measured
(getrusage) and reported with the figures, so a run whose client saturated a core can be seen.

Run as a script, this file is the client process (stdlib only): argv[1] is a JSON spec; it
prints "ready", waits for "go <monotonic time>" on stdin, runs, prints one JSON line of results,
then holds every connection open until "close" arrives on stdin, so the broker's memory can be
read with all of them open. Written from the public protocol descriptions (Kafka's protocol
guide, RFC 5802/7677).
"""
from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import os
import resource
import ssl
import struct
import subprocess
import sys
import time
from pathlib import Path

DIGESTS = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE = 18, 17, 36
CLIENT_ID = b"strata-bench-storm"


# ---- SCRAM (RFC 5802) ------------------------------------------------------------------------

class ScramKeys:
    """ClientKey, StoredKey and ServerKey per (password, salt, iterations), computed once each."""

    def __init__(self, mechanism: str):
        self.digest = DIGESTS[mechanism]
        self._cache: dict[tuple, tuple[bytes, bytes, bytes]] = {}
        self.pbkdf2_count = 0
        self.pbkdf2_seconds = 0.0

    def get(self, password: str, salt: bytes, iterations: int) -> tuple[bytes, bytes, bytes]:
        key = (password, salt, iterations)
        keys = self._cache.get(key)
        if keys is None:
            t0 = time.process_time()
            salted = hashlib.pbkdf2_hmac(self.digest, password.encode(), salt, iterations)
            self.pbkdf2_seconds += time.process_time() - t0
            self.pbkdf2_count += 1
            client_key = hmac.new(salted, b"Client Key", self.digest).digest()
            server_key = hmac.new(salted, b"Server Key", self.digest).digest()
            keys = (client_key, hashlib.new(self.digest, client_key).digest(), server_key)
            self._cache[key] = keys
        return keys


class ScramClient:
    """One SCRAM exchange: first() -> client-first; final(server_first) -> client-final;
    check(server_final) raises unless the server proved it holds the credential."""

    def __init__(self, user: str, password: str, keys: ScramKeys, nonce: str | None = None):
        self.user, self.password, self.keys = user, password, keys
        self.nonce = nonce or base64.b64encode(os.urandom(18)).decode()
        name = user.replace("=", "=3D").replace(",", "=2C")
        self.first_bare = f"n={name},r={self.nonce}"
        self.server_signature = b""

    def first(self) -> bytes:
        return ("n,," + self.first_bare).encode()

    def final(self, server_first: bytes) -> bytes:
        text = server_first.decode()
        attrs = dict(kv.split("=", 1) for kv in text.split(","))
        if not attrs.get("r", "").startswith(self.nonce) or "s" not in attrs or "i" not in attrs:
            raise ValueError(f"bad server-first message: {text!r}")
        client_key, stored_key, server_key = self.keys.get(
            self.password, base64.b64decode(attrs["s"]), int(attrs["i"]))
        without_proof = f"c=biws,r={attrs['r']}"
        auth_message = f"{self.first_bare},{text},{without_proof}".encode()
        signature = hmac.new(stored_key, auth_message, self.keys.digest).digest()
        proof = bytes(a ^ b for a, b in zip(client_key, signature))
        self.server_signature = hmac.new(server_key, auth_message, self.keys.digest).digest()
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def check(self, server_final: bytes) -> None:
        text = server_final.decode()
        if not text.startswith("v=") or base64.b64decode(text[2:]) != self.server_signature:
            raise ValueError(f"server signature does not match: {text!r}")


# ---- Kafka framing ---------------------------------------------------------------------------

def _uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def _read_uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def request(api_key: int, version: int, correlation_id: int, body: bytes,
            flexible: bool) -> bytes:
    """A size-prefixed request: header v1 (non-flexible) or v2 (flexible, no tagged fields)."""
    header = (struct.pack(">hhih", api_key, version, correlation_id, len(CLIENT_ID)) + CLIENT_ID
              + (b"\x00" if flexible else b""))
    return struct.pack(">i", len(header) + len(body)) + header + body


def api_versions_v3() -> bytes:
    name, version = b"strata-bench-storm", b"1"
    return _uvarint(len(name) + 1) + name + _uvarint(len(version) + 1) + version + b"\x00"


def sasl_handshake_v1(mechanism: str) -> bytes:
    m = mechanism.encode()
    return struct.pack(">h", len(m)) + m


def sasl_authenticate_v2(token: bytes) -> bytes:
    return _uvarint(len(token) + 1) + token + b"\x00"


def parse_sasl_authenticate_v2(body: bytes) -> tuple[int, str | None, bytes]:
    """(error code, error message, auth bytes) of a SaslAuthenticate v2 response body."""
    err = struct.unpack_from(">h", body, 0)[0]
    n, pos = _read_uvarint(body, 2)
    msg = body[pos:pos + n - 1].decode(errors="replace") if n else None
    pos += max(n - 1, 0)
    n, pos = _read_uvarint(body, pos)
    return err, msg, body[pos:pos + n - 1]


# ---- one client ------------------------------------------------------------------------------

class Conn:
    """One client connection; `times` holds CLOCK_MONOTONIC stamps of each stage reached."""

    def __init__(self, spec: dict, ctx: ssl.SSLContext, keys: ScramKeys, index: int):
        self.spec, self.ctx, self.keys = spec, ctx, keys
        users = spec["users"]
        self.user, self.password = users[index % len(users)]
        self.times: dict[str, float] = {}
        self.writer: asyncio.StreamWriter | None = None
        self.error: str | None = None
        self.stage = "tcp"
        self.cipher = ""
        self._cid = 0

    async def _call(self, reader, api_key: int, version: int, body: bytes,
                    flexible_request: bool, flexible_response: bool) -> bytes:
        self._cid += 1
        self.writer.write(request(api_key, version, self._cid, body, flexible_request))
        size = struct.unpack(">i", await reader.readexactly(4))[0]
        frame = await reader.readexactly(size)
        if struct.unpack_from(">i", frame, 0)[0] != self._cid:
            raise ValueError("correlation id mismatch")
        pos = 4
        if flexible_response:  # response header v1: tagged fields
            tags, pos = _read_uvarint(frame, pos)
            for _ in range(tags):
                _, pos = _read_uvarint(frame, pos)
                n, pos = _read_uvarint(frame, pos)
                pos += n
        return frame[pos:]

    async def run(self) -> None:
        s = self.spec
        self.times["start"] = time.monotonic()
        reader, self.writer = await asyncio.open_connection(s["host"], s["port"])
        self.times["tcp"] = time.monotonic()
        self.stage = "tls"
        await self.writer.start_tls(self.ctx, server_hostname=s["host"])
        self.times["tls"] = time.monotonic()
        self.cipher = (self.writer.get_extra_info("cipher") or ("?",))[0]
        self.stage = "ApiVersions"
        body = await self._call(reader, API_VERSIONS, 3, api_versions_v3(), True, False)
        if (err := struct.unpack_from(">h", body, 0)[0]) != 0:
            raise ValueError(f"ApiVersions error {err}")
        self.stage = "SaslHandshake"
        body = await self._call(reader, SASL_HANDSHAKE, 1, sasl_handshake_v1(s["mechanism"]),
                                False, False)
        if (err := struct.unpack_from(">h", body, 0)[0]) != 0:
            raise ValueError(f"SaslHandshake error {err}")
        self.stage = "SaslAuthenticate"
        scram = ScramClient(self.user, self.password, self.keys)
        body = await self._call(reader, SASL_AUTHENTICATE, 2, sasl_authenticate_v2(scram.first()),
                                True, True)
        err, msg, server_first = parse_sasl_authenticate_v2(body)
        if err:
            raise ValueError(f"SaslAuthenticate (first) error {err}: {msg}")
        body = await self._call(reader, SASL_AUTHENTICATE, 2,
                                sasl_authenticate_v2(scram.final(server_first)), True, True)
        err, msg, server_final = parse_sasl_authenticate_v2(body)
        if err:
            raise ValueError(f"SaslAuthenticate (final) error {err}: {msg}")
        scram.check(server_final)
        self.times["auth"] = time.monotonic()
        self.stage = "done"

    async def run_guarded(self, timeout: float) -> None:
        try:
            await asyncio.wait_for(self.run(), timeout)
        except asyncio.TimeoutError:
            self.error = f"timeout after {timeout:.0f} s in {self.stage}"
        except (OSError, ssl.SSLError, ValueError, asyncio.IncompleteReadError, struct.error,
                IndexError) as e:
            self.error = f"{self.stage}: {type(e).__name__}: {str(e)[:160]}"

    def close(self) -> None:
        if self.writer is not None:
            try:
                self.writer.close()
            except (OSError, RuntimeError):
                pass

    def summary(self) -> list:
        t = self.times
        r = lambda a, b: round((t[b] - t[a]) * 1000, 3) if a in t and b in t else None  # noqa: E731
        return [t.get("start"), r("start", "tcp"), r("tcp", "tls"), r("tls", "auth"),
                r("start", "auth"), self.error]


def client_context(ca: str) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=ca)
    ctx.minimum_version = ctx.maximum_version = ssl.TLSVersion.TLSv1_3
    return ctx


async def _storm(spec: dict, ctx: ssl.SSLContext, keys: ScramKeys, go: float) -> list[Conn]:
    conns = [Conn(spec, ctx, keys, spec["first_index"] + i) for i in range(spec["connections"])]
    await asyncio.sleep(max(0.0, go - time.monotonic()))
    await asyncio.gather(*(c.run_guarded(spec["timeout"]) for c in conns))
    return conns


def authenticate_once(host: str, port: int, ca: str, user: str, password: str,
                      mechanism: str = "SCRAM-SHA-512", timeout: float = 10.0) -> str | None:
    """One connection through every step; None if it authenticated, else the error."""
    spec = {"host": host, "port": port, "users": [[user, password]], "mechanism": mechanism}
    c = Conn(spec, client_context(ca), ScramKeys(mechanism), 0)

    async def go():
        await c.run_guarded(timeout)
        c.close()
    asyncio.run(go())
    return c.error


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def client_main() -> int:
    """The client process; its CPU time is counted from the release on (not its start-up)."""
    spec = json.loads(sys.argv[1])
    ctx = client_context(spec["ca"])
    keys = ScramKeys(spec["mechanism"])
    loop = asyncio.new_event_loop()
    print("ready", flush=True)
    line = sys.stdin.readline().split()
    if not line or line[0] != "go":
        return 1
    cpu0 = _cpu()
    conns = loop.run_until_complete(_storm(spec, ctx, keys, float(line[1])))
    print(json.dumps({"connections": [c.summary() for c in conns],
                      "ciphers": sorted({c.cipher for c in conns if c.cipher}),
                      "client_cpu_s": round(_cpu() - cpu0, 3),
                      "pbkdf2_count": keys.pbkdf2_count,
                      "pbkdf2_cpu_s": round(keys.pbkdf2_seconds, 4)}), flush=True)
    sys.stdin.readline()  # "close": every connection stays open until then
    for c in conns:
        c.close()
    loop.run_until_complete(asyncio.sleep(0.5))  # let the close_notify alerts go out
    loop.close()
    return 0


# ---- the driver (bench/security.py) ----------------------------------------------------------

def _percentile(xs: list[float], q: float) -> float | None:
    s = sorted(xs)
    return round(s[min(len(s) - 1, int(q * len(s)))], 2) if s else None


def _readline(p, timeout: float) -> str:
    import select
    ready, _, _ = select.select([p.stdout], [], [], timeout)
    if not ready:
        raise RuntimeError(f"storm client {p.pid}: no answer within {timeout:.0f} s")
    line = p.stdout.readline()
    if not line:
        raise RuntimeError(f"storm client {p.pid} exited (code {p.poll()})")
    return line


def listen_counters() -> dict[str, int]:
    """The kernel's TcpExt ListenOverflows / ListenDrops (this network namespace): a SYN or
    handshake-completing ACK dropped because a listener's accept queue (its listen backlog) was
    full. The client's kernel then retransmits after 1 s, 2 s, 4 s, ..., so an overflowing
    backlog shows as connections seconds late, or never established within the timeout."""
    try:
        lines = [ln.split() for ln in open("/proc/net/netstat") if ln.startswith("TcpExt:")]
        row = dict(zip(lines[0][1:], lines[1][1:]))
        return {k: int(row[k]) for k in ("ListenOverflows", "ListenDrops") if k in row}
    except (OSError, IndexError, ValueError):
        return {}


def _fd_count(pid: int) -> int | None:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def run_storm(host: str, port: int, ca: Path, users: list[tuple[str, str]], connections: int,
              processes: int, broker_pid: int, log_dir: Path, name: str,
              mechanism: str = "SCRAM-SHA-512", timeout: float = 120.0,
              settle_s: float = 2.0) -> dict:
    """`connections` clients across `processes` client processes, all released at one instant.
    Returns the figures: time from the release until the last client authenticated, per-stage
    and per-connection percentiles, failures (by stage), and the broker's VmRSS before, with
    every connection open (after), its peak, and `settle_s` after they closed, its CPU time over
    the storm and its open file descriptors before and with every connection open."""
    from . import procs
    processes = max(1, min(processes, connections))
    share = [connections // processes + (1 if i < connections % processes else 0)
             for i in range(processes)]
    mem0, fds0, cpu0 = procs.memory_kib(broker_pid), _fd_count(broker_pid), \
        procs.cpu_seconds(broker_pid)
    sampler = procs.ProcSampler(broker_pid, interval=0.05)
    listen0 = listen_counters()
    children = []
    try:
        first = 0
        for i, n in enumerate(share):
            spec = {"host": host, "port": port, "ca": str(ca), "users": [list(u) for u in users],
                    "mechanism": mechanism, "connections": n, "first_index": first,
                    "timeout": timeout}
            first += n
            children.append(procs.spawn_piped([sys.executable, str(Path(__file__).resolve()),
                                               json.dumps(spec)], log_dir / f"{name}-{i}.log"))
        for p in children:
            if _readline(p, 60).strip() != "ready":
                raise RuntimeError(f"storm client {p.pid} did not start")
        sampler.begin()
        go = time.monotonic() + 0.3
        for p in children:
            p.stdin.write(f"go {go!r}\n")
            p.stdin.flush()
        outs = [json.loads(_readline(p, timeout + 60)) for p in children]
        cpu1 = procs.cpu_seconds(broker_pid)
        mem1, fds1 = procs.memory_kib(broker_pid), _fd_count(broker_pid)
        listen1 = listen_counters()
        peak = sampler.end()
        for p in children:
            p.stdin.write("close\n")
            p.stdin.flush()
        for p in children:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                pass
            procs.stop(p, grace=2.0)
    finally:
        sampler.close()
        for p in children:
            if p.poll() is None:
                procs.stop(p, grace=2.0)
    time.sleep(settle_s)
    mem2 = procs.memory_kib(broker_pid)
    conns = [c for o in outs for c in o["connections"]]
    ok = [c for c in conns if c[5] is None]
    failures: dict[str, int] = {}
    for c in conns:
        if c[5] is not None:
            kind = c[5].split(":")[0] if not c[5].startswith("timeout") else c[5]
            failures[kind] = failures.get(kind, 0) + 1
    last = max((c[0] + c[4] / 1000 for c in ok), default=None)
    mib = lambda m: round(m.get("VmRSS", 0) / 1024, 1)  # noqa: E731
    return {
        "connections": connections, "client_processes": processes, "users": len(users),
        "mechanism": mechanism, "authenticated": len(ok), "failed": len(conns) - len(ok),
        "failures": failures, "failure_examples": sorted({c[5] for c in conns if c[5]})[:5],
        "all_authenticated_s": round(last - go, 3) if last is not None and len(ok) == connections
        else None,
        "last_authenticated_s": round(last - go, 3) if last is not None else None,
        "start_spread_ms": round((max(c[0] for c in conns) - go) * 1000, 1) if conns else None,
        "per_connection_ms": {"p50": _percentile([c[4] for c in ok], 0.5),
                              "p99": _percentile([c[4] for c in ok], 0.99),
                              "max": _percentile([c[4] for c in ok], 1.0)},
        "tcp_connect_ms": {"p50": _percentile([c[1] for c in ok], 0.5),
                           "p99": _percentile([c[1] for c in ok], 0.99),
                           "max": _percentile([c[1] for c in ok], 1.0)},
        "tls_handshake_ms": {"p50": _percentile([c[2] for c in ok], 0.5),
                             "p99": _percentile([c[2] for c in ok], 0.99)},
        "sasl_ms": {"p50": _percentile([c[3] for c in ok], 0.5),
                    "p99": _percentile([c[3] for c in ok], 0.99)},
        "ciphers": sorted({x for o in outs for x in o["ciphers"]}),
        "client_cpu_s": round(sum(o["client_cpu_s"] for o in outs), 3),
        "client_pbkdf2": {"count": sum(o["pbkdf2_count"] for o in outs),
                          "cpu_s": round(sum(o["pbkdf2_cpu_s"] for o in outs), 4)},
        "broker_cpu_s": round(cpu1 - cpu0, 3),
        "broker_rss_mib": {"before": mib(mem0), "all_open": mib(mem1),
                           "peak": peak["peak_rss_mib"], "after_close": mib(mem2)},
        "broker_rss_per_connection_kib": round((mem1.get("VmRSS", 0) - mem0.get("VmRSS", 0))
                                               / max(len(ok), 1), 1),
        "broker_fds": {"before": fds0, "all_open": fds1},
        "listen_queue_drops": {k: v - listen0.get(k, 0) for k, v in listen1.items()},
        "per_connection_total_ms": sorted(round(c[4], 2) for c in ok),
    }


if __name__ == "__main__":
    sys.exit(client_main())
