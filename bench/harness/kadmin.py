"""A minimal Kafka admin client over the wire protocol (stdlib only), so that creating a
topic costs milliseconds instead of a JVM start per call.

Speaks only non-flexible versions that both Apache Kafka 4.x and Strata accept:
Metadata v4 and CreateTopics v4 (request header v1, response header v0); and DescribeQuorum v0
(flexible: request header v2, response header v1), only to find KRaft's active controller; and
AlterUserScramCredentials v0 (flexible), to create the SCRAM users of bench/security.py in one
request instead of a kafka-configs JVM per user.
Written from the public protocol description. Not thread-safe; one connection per call.
"""
from __future__ import annotations

import socket
import struct
import time

API_METADATA, API_CREATE_TOPICS, API_DESCRIBE_QUORUM = 3, 19, 55
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

    def uvarint(self) -> int:
        shift = value = 0
        while True:
            b = self.buf[self.pos]
            self.pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7

    def skip_tags(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()
            self.pos += self.uvarint()

    def compact_string(self):
        n = self.uvarint() - 1
        if n < 0:
            return None
        s = self.buf[self.pos:self.pos + n].decode()
        self.pos += n
        return s

    def string(self):
        n = self.i16()
        if n < 0:
            return None
        s = self.buf[self.pos:self.pos + n].decode()
        self.pos += n
        return s


def _call(bootstrap: str, api_key: int, version: int, body: bytes, timeout: float = 30.0,
          flexible: bool = False) -> _Reader:
    host, port = bootstrap.rsplit(":", 1)
    header = struct.pack(">hhi", api_key, version, 1) + _str("strata-bench-admin")
    if flexible:
        header += b"\x00"  # request header v2: no tagged fields
    frame = header + body
    with socket.create_connection((host, int(port)), timeout=timeout) as s:
        s.sendall(struct.pack(">i", len(frame)) + frame)
        size = struct.unpack(">i", _recv_exact(s, 4))[0]
        r = _Reader(_recv_exact(s, size))
    if r.i32() != 1:
        raise KafkaError("correlation id mismatch")
    if flexible:
        r.skip_tags()  # response header v1
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
    """Returns {"brokers": [node ids], "controller": id, "topics": {name: (error, {partition:
    (error, leader)})}, "partitions": {name: {partition: {"leader", "replicas", "isr"}}}}."""
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
    r.string()  # cluster id
    controller = r.i32()
    out, full = {}, {}
    for _ in range(r.i32()):
        terr, name, _internal = r.i16(), r.string(), r.i8()
        parts, states = {}, {}
        for _ in range(r.i32()):
            perr, idx, leader = r.i16(), r.i32(), r.i32()
            replicas = [r.i32() for _ in range(r.i32())]
            isr = [r.i32() for _ in range(r.i32())]
            parts[idx] = (perr, leader)
            states[idx] = {"error": perr, "leader": leader, "replicas": replicas, "isr": isr}
        out[name] = (terr, parts)
        full[name] = states
    return {"brokers": brokers, "controller": controller, "topics": out, "partitions": full}


def describe_quorum_leader(bootstrap: str) -> int:
    """KRaft's active controller (the leader of __cluster_metadata), by DescribeQuorum v0. Kafka
    only: its Metadata names a random broker as controller."""
    name = b"__cluster_metadata"
    body = (b"\x02" + bytes([len(name) + 1]) + name  # 1 topic (compact array), compact string
            + b"\x02" + struct.pack(">i", 0) + b"\x00"  # 1 partition: index 0, no tags
            + b"\x00" + b"\x00")  # topic tags, request tags
    r = _call(bootstrap, API_DESCRIBE_QUORUM, 0, body, flexible=True)
    err = r.i16()
    if err != ERR_NONE:
        raise KafkaError(f"DescribeQuorum: error {err}")
    r.uvarint()  # topics
    r.compact_string()
    r.uvarint()  # partitions
    r.i32()  # partition index
    perr, leader = r.i16(), r.i32()
    if perr != ERR_NONE:
        raise KafkaError(f"DescribeQuorum partition: error {perr}")
    return leader


def create_topic(bootstrap: str, topic: str, partitions: int, timeout: float = 60.0,
                 replication_factor: int = 1, configs: dict[str, str] | None = None) -> None:
    """Creates `topic` and waits until every partition has a leader."""
    configs = configs or {}
    body = (struct.pack(">i", 1) + _str(topic)
            + struct.pack(">ihi", partitions, replication_factor, 0)  # no manual assignment
            + struct.pack(">i", len(configs))
            + b"".join(_str(k) + _str(v) for k, v in configs.items())
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


def wait_full_isr(bootstrap: str, topic: str, partitions: int, replicas: int,
                  timeout: float) -> None:
    """Waits until every partition of `topic` has `replicas` replicas, all in the ISR."""
    deadline = time.time() + timeout
    while True:
        states = metadata(bootstrap, [topic])["partitions"].get(topic, {})
        if len(states) == partitions and all(
                len(p["replicas"]) == replicas and sorted(p["isr"]) == sorted(p["replicas"])
                and p["leader"] >= 0 for p in states.values()):
            return
        if time.time() > deadline:
            raise KafkaError(f"topic {topic}: ISR not full after {timeout:.0f}s: {states}")
        time.sleep(0.2)


def wait_leaders(bootstrap: str, topic: str, partitions: int, deadline: float) -> None:
    while True:
        md = metadata(bootstrap, [topic])["topics"].get(topic)
        if md and md[0] == ERR_NONE and len(md[1]) == partitions and all(
                e == ERR_NONE and leader >= 0 for e, leader in md[1].values()):
            return
        if time.time() > deadline:
            raise KafkaError(f"topic {topic}: partitions without a leader: {md}")
        time.sleep(0.1)


def wait_ready(bootstrap: str, timeout: float, brokers: int = 1) -> None:
    """Waits until the broker answers Metadata with at least `brokers` brokers."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            seen = metadata(bootstrap, None)["brokers"]
            if len(seen) >= brokers:
                return
            last = f"{len(seen)} brokers: {seen}"
        except (OSError, KafkaError, struct.error) as e:
            last = e
        time.sleep(0.2)
    raise KafkaError(f"broker at {bootstrap} not ready after {timeout:.0f}s: {last}")


API_ALTER_USER_SCRAM_CREDENTIALS = 51
SCRAM_MECHANISMS = {"SCRAM-SHA-256": (1, "sha256"), "SCRAM-SHA-512": (2, "sha512")}


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _compact(b: bytes) -> bytes:
    return _uvarint(len(b) + 1) + b


def alter_scram_users(bootstrap: str, users: dict[str, str], mechanism: str = "SCRAM-SHA-512",
                      iterations: int = 4096) -> None:
    """Creates (or replaces) SCRAM credentials for every user -> password in one
    AlterUserScramCredentials v0 request, the request `kafka-configs --alter --add-config
    'SCRAM-SHA-512=[iterations=N,password=...]' --entity-type users` sends: a random 32-byte salt
    and the salted password (PBKDF2) computed here, the broker derives StoredKey/ServerKey.
    Raises KafkaError if any user was refused."""
    import hashlib
    import os
    mech_id, digest = SCRAM_MECHANISMS[mechanism]
    body = _uvarint(0 + 1)  # deletions: none
    body += _uvarint(len(users) + 1)
    for user, password in users.items():
        salt = os.urandom(32)
        salted = hashlib.pbkdf2_hmac(digest, password.encode(), salt, iterations)
        body += (_compact(user.encode()) + struct.pack(">bi", mech_id, iterations)
                 + _compact(salt) + _compact(salted) + b"\x00")
    body += b"\x00"
    r = _call(bootstrap, API_ALTER_USER_SCRAM_CREDENTIALS, 0, body, flexible=True)
    r.i32()  # throttle
    errors = []
    for _ in range(r.uvarint() - 1):
        user, err, msg = r.compact_string(), r.i16(), r.compact_string()
        r.skip_tags()
        if err != ERR_NONE:
            errors.append(f"{user}: error {err} {msg}")
    if errors:
        raise KafkaError("AlterUserScramCredentials: " + "; ".join(errors))
