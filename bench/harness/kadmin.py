"""A minimal Kafka admin client over the wire protocol (stdlib only), so that creating a
topic costs milliseconds instead of a JVM start per call.

Speaks only non-flexible versions that both Apache Kafka 4.x and Strata accept:
Metadata v4 and CreateTopics v4 (request header v1, response header v0).
Written from the public protocol description. Not thread-safe; one connection per call.
"""
from __future__ import annotations

import socket
import struct
import time

API_METADATA, API_CREATE_TOPICS = 3, 19
ERR_NONE, ERR_TOPIC_EXISTS = 0, 36


class KafkaError(RuntimeError):
    pass


def _str(s: str) -> bytes:
    b = s.encode()
    return struct.pack(">h", len(b)) + b


class _Reader:
    def __init__(self, buf: bytes):
        self.buf, self.pos = buf, 0

    def _take(self, fmt: str):
        v = struct.unpack_from(fmt, self.buf, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return v

    def i8(self): return self._take(">b")
    def i16(self): return self._take(">h")
    def i32(self): return self._take(">i")

    def string(self):
        n = self.i16()
        if n < 0:
            return None
        s = self.buf[self.pos:self.pos + n].decode()
        self.pos += n
        return s


def _call(bootstrap: str, api_key: int, version: int, body: bytes, timeout: float = 30.0) -> _Reader:
    host, port = bootstrap.rsplit(":", 1)
    header = struct.pack(">hhi", api_key, version, 1) + _str("strata-bench-admin")
    frame = header + body
    with socket.create_connection((host, int(port)), timeout=timeout) as s:
        s.sendall(struct.pack(">i", len(frame)) + frame)
        size = struct.unpack(">i", _recv_exact(s, 4))[0]
        r = _Reader(_recv_exact(s, size))
    if r.i32() != 1:
        raise KafkaError("correlation id mismatch")
    return r


def _recv_exact(s: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise KafkaError("connection closed by broker")
        buf += chunk
    return bytes(buf)


def metadata(bootstrap: str, topics: list[str] | None) -> dict:
    """Returns {"brokers": [node ids], "topics": {name: (error, {partition: (error, leader)})}}."""
    if topics is None:
        body = struct.pack(">i", -1)
    else:
        body = struct.pack(">i", len(topics)) + b"".join(_str(t) for t in topics)
    r = _call(bootstrap, API_METADATA, 4, body + b"\x00")  # allow_auto_topic_creation=false
    r.i32()  # throttle
    brokers = []
    for _ in range(r.i32()):
        brokers.append(r.i32())
        r.string(), r.i32(), r.string()  # host, port, rack
    r.string(), r.i32()  # cluster id, controller id
    out = {}
    for _ in range(r.i32()):
        terr, name, _internal = r.i16(), r.string(), r.i8()
        parts = {}
        for _ in range(r.i32()):
            perr, idx, leader = r.i16(), r.i32(), r.i32()
            for _ in range(2):  # replicas, isr
                for _ in range(r.i32()):
                    r.i32()
            parts[idx] = (perr, leader)
        out[name] = (terr, parts)
    return {"brokers": brokers, "topics": out}


def create_topic(bootstrap: str, topic: str, partitions: int, timeout: float = 60.0) -> None:
    """Creates `topic` (replication factor 1) and waits until every partition has a leader."""
    body = (struct.pack(">i", 1) + _str(topic) + struct.pack(">ihii", partitions, 1, 0, 0)
            + struct.pack(">i", 30000) + b"\x00")
    deadline = time.time() + timeout
    while True:
        r = _call(bootstrap, API_CREATE_TOPICS, 4, body)
        r.i32()
        r.i32()  # one topic
        r.string()
        err, msg = r.i16(), r.string()
        if err in (ERR_NONE, ERR_TOPIC_EXISTS):
            break
        if time.time() > deadline:
            raise KafkaError(f"CreateTopics {topic}: error {err} {msg}")
        time.sleep(0.5)  # e.g. controller not ready yet
    wait_leaders(bootstrap, topic, partitions, deadline)


def wait_leaders(bootstrap: str, topic: str, partitions: int, deadline: float) -> None:
    while True:
        md = metadata(bootstrap, [topic])["topics"].get(topic)
        if md and md[0] == ERR_NONE and len(md[1]) == partitions and all(
                e == ERR_NONE and leader >= 0 for e, leader in md[1].values()):
            return
        if time.time() > deadline:
            raise KafkaError(f"topic {topic}: partitions without a leader: {md}")
        time.sleep(0.1)


def wait_ready(bootstrap: str, timeout: float) -> None:
    """Waits until the broker answers Metadata with at least one broker."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            if metadata(bootstrap, None)["brokers"]:
                return
        except (OSError, KafkaError, struct.error) as e:
            last = e
        time.sleep(0.2)
    raise KafkaError(f"broker at {bootstrap} not ready after {timeout:.0f}s: {last}")
