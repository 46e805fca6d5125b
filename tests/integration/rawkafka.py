"""A deliberately small Kafka wire-protocol client for tests that need exact control over
the bytes on the socket (malformed frames, acks=0, unsupported versions).

Written from the public protocol description (kafka.apache.org/protocol); only the few
requests the tests use are encoded: ApiVersions, Metadata (header only), Produce,
CreateTopics. Not thread-safe.
"""
from __future__ import annotations

import socket
import struct
import time

API_PRODUCE = 0
API_METADATA = 3
API_VERSIONS = 18
API_CREATE_TOPICS = 19


# ---- CRC-32C (Castagnoli), table-driven --------------------------------------------------

def _crc32c_table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


# ---- encoding ------------------------------------------------------------------------

class Writer:
    """Appends Kafka primitive types; `flexible` selects compact encodings + tag buffers."""

    def __init__(self, flexible: bool = False):
        self.buf = bytearray()
        self.flexible = flexible

    def i8(self, v): self.buf += struct.pack(">b", v); return self
    def i16(self, v): self.buf += struct.pack(">h", v); return self
    def i32(self, v): self.buf += struct.pack(">i", v); return self
    def i64(self, v): self.buf += struct.pack(">q", v); return self
    def u32(self, v): self.buf += struct.pack(">I", v); return self
    def boolean(self, v): return self.i8(1 if v else 0)
    def raw(self, b: bytes): self.buf += b; return self

    def uvarint(self, v: int):
        while True:
            byte = v & 0x7F
            v >>= 7
            if v:
                self.buf.append(byte | 0x80)
            else:
                self.buf.append(byte)
                return self

    def varint(self, v: int):  # zig-zag
        return self.uvarint((v << 1) ^ (v >> 63))

    def string(self, s: str | None):
        if s is None:
            return self.uvarint(0) if self.flexible else self.i16(-1)
        b = s.encode()
        (self.uvarint(len(b) + 1) if self.flexible else self.i16(len(b)))
        return self.raw(b)

    def bytes_(self, b: bytes | None):
        if b is None:
            return self.uvarint(0) if self.flexible else self.i32(-1)
        (self.uvarint(len(b) + 1) if self.flexible else self.i32(len(b)))
        return self.raw(b)

    def array(self, items, fn):
        (self.uvarint(len(items) + 1) if self.flexible else self.i32(len(items)))
        for it in items:
            fn(self, it)
        return self

    def tags(self):
        if self.flexible:
            self.uvarint(0)
        return self


class Reader:
    def __init__(self, data: bytes, flexible: bool = False):
        self.data = data
        self.pos = 0
        self.flexible = flexible

    def _take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise ValueError(f"response truncated at {self.pos}+{n} of {len(self.data)}")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def i8(self): return struct.unpack(">b", self._take(1))[0]
    def i16(self): return struct.unpack(">h", self._take(2))[0]
    def i32(self): return struct.unpack(">i", self._take(4))[0]
    def i64(self): return struct.unpack(">q", self._take(8))[0]

    def uvarint(self) -> int:
        shift = v = 0
        while True:
            b = self._take(1)[0]
            v |= (b & 0x7F) << shift
            if not b & 0x80:
                return v
            shift += 7

    def string(self) -> str | None:
        n = self.uvarint() - 1 if self.flexible else self.i16()
        return None if n < 0 else self._take(n).decode()

    def array_len(self) -> int:
        return self.uvarint() - 1 if self.flexible else self.i32()

    def skip_tags(self):
        if self.flexible:
            for _ in range(self.uvarint()):
                self.uvarint()
                self._take(self.uvarint())


def request(api_key: int, version: int, correlation_id: int, body: bytes = b"",
            flexible_header: bool = False, client_id: str | None = "strata-it-raw") -> bytes:
    """A complete size-prefixed frame. Header v1, or v2 (+ empty tag buffer) if flexible."""
    h = Writer().i16(api_key).i16(version).i32(correlation_id).string(client_id)
    if flexible_header:
        h.uvarint(0)
    payload = bytes(h.buf) + body
    return struct.pack(">i", len(payload)) + payload


def record_batch(records: list[tuple[bytes | None, bytes | None, list[tuple[str, bytes]]]],
                 base_timestamp: int, producer_id: int = -1, producer_epoch: int = -1,
                 base_sequence: int = -1, transactional: bool = False) -> bytes:
    """An uncompressed magic-2 RecordBatch with base offset 0 (the broker assigns offsets);
    idempotent when given a producer id, epoch and first sequence; part of that producer's
    transaction when `transactional`."""
    body = Writer()
    for i, (key, value, headers) in enumerate(records):
        r = Writer().i8(0).varint(0).varint(i)
        r.varint(-1) if key is None else r.varint(len(key)).raw(key)
        r.varint(-1) if value is None else r.varint(len(value)).raw(value)
        r.varint(len(headers))
        for hk, hv in headers:
            r.varint(len(hk.encode())).raw(hk.encode()).varint(len(hv)).raw(hv)
        body.varint(len(r.buf)).raw(bytes(r.buf))
    after_crc = (Writer().i16(0x10 if transactional else 0).i32(len(records) - 1).i64(base_timestamp).i64(base_timestamp)
                 .i64(producer_id).i16(producer_epoch).i32(base_sequence).i32(len(records))
                 .raw(bytes(body.buf)))
    tail = Writer().i32(-1).i8(2).u32(crc32c(bytes(after_crc.buf))).raw(bytes(after_crc.buf))
    return bytes(Writer().i64(0).i32(len(tail.buf)).raw(bytes(tail.buf)).buf)


def produce_body(version: int, topic: str, partition: int, batch: bytes, acks: int,
                 timeout_ms: int = 30000, transactional_id: str | None = None) -> bytes:
    """Produce request body for v3..v11 (v9+ flexible)."""
    assert 3 <= version <= 11, version
    w = Writer(flexible=version >= 9)
    w.string(transactional_id).i16(acks).i32(timeout_ms)

    def part(w2, _):
        w2.i32(partition).bytes_(batch).tags()

    def top(w2, _):
        w2.string(topic).array([0], part).tags()

    w.array([0], top).tags()
    return bytes(w.buf)


def create_topics_body(version: int, name: str, partitions: int, replication: int,
                       validate_only: bool = False) -> bytes:
    """CreateTopics request body for v2..v7 (v5+ flexible)."""
    assert 2 <= version <= 7, version
    w = Writer(flexible=version >= 5)

    def topic(w2, _):
        w2.string(name).i32(partitions).i16(replication).array([], None).array([], None).tags()

    w.array([0], topic).i32(30000).boolean(validate_only).tags()
    return bytes(w.buf)


def parse_create_topics(version: int, body: bytes) -> list[tuple[str, int, str | None]]:
    r = Reader(body, flexible=version >= 5)
    r.skip_tags()  # response header v1 tag buffer (flexible versions)
    r.i32()  # throttle
    out = []
    for _ in range(r.array_len()):
        name = r.string()
        if version >= 7:
            r._take(16)  # topic id
        code = r.i16()
        msg = r.string()
        out.append((name, code, msg))
        if version >= 5:
            r.i32(); r.i16()  # num_partitions, replication_factor
            n = r.array_len()
            for _ in range(max(n, 0)):
                r.string(); r.string(); r.i8(); r.i8(); r.i8(); r.skip_tags()
            r.skip_tags()
    return out


def parse_produce_response(version: int, body: bytes) -> list[tuple[str, int, int, int]]:
    """[(topic, partition, error_code, base_offset)] from a Produce v3..v11 response body
    (the part after the correlation id)."""
    r = Reader(body, flexible=version >= 9)
    r.skip_tags()  # response header v1 tag buffer (flexible versions)
    out = []
    for _ in range(r.array_len()):
        name = r.string()
        for _ in range(r.array_len()):
            idx, code, base = r.i32(), r.i16(), r.i64()
            out.append((name, idx, code, base))
            r.i64()  # log_append_time_ms
            if version >= 5:
                r.i64()  # log_start_offset
            if version >= 8:
                for _ in range(r.array_len()):
                    r.i32(); r.string(); r.skip_tags()
                r.string()
            r.skip_tags()
        r.skip_tags()
    return out


def list_offsets_body(topic: str, partition: int, timestamp: int, isolation_level: int) -> bytes:
    """ListOffsets v2 request body (isolation_level: 0 read_uncommitted, 1 read_committed)."""
    w = Writer().i32(-1).i8(isolation_level)
    w.array([0], lambda w2, _: w2.string(topic).array(
        [0], lambda w3, _: w3.i32(partition).i64(timestamp)))
    return bytes(w.buf)


def parse_list_offsets_v2(body: bytes) -> list[tuple[str, int, int, int]]:
    """[(topic, partition, error_code, offset)] from a ListOffsets v2 response body."""
    r = Reader(body)
    r.i32()  # throttle_time_ms
    out = []
    for _ in range(r.array_len()):
        name = r.string()
        for _ in range(r.array_len()):
            idx, code = r.i32(), r.i16()
            r.i64()  # timestamp
            out.append((name, idx, code, r.i64()))
    return out


def parse_api_versions_v0(body: bytes) -> tuple[int, dict[int, tuple[int, int]]]:
    r = Reader(body)
    code = r.i16()
    apis = {}
    for _ in range(r.i32()):
        k, lo, hi = r.i16(), r.i16(), r.i16()
        apis[k] = (lo, hi)
    return code, apis


# ---- connection ----------------------------------------------------------------------

class Conn:
    """A blocking TCP connection with frame-level send/receive helpers."""

    def __init__(self, bootstrap: str, timeout: float = 10.0):
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.sock.settimeout(timeout)

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, data: bytes):
        self.sock.sendall(data)

    def _recv_exact(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError(f"connection closed after {len(out)} of {n} bytes")
            out += chunk
        return bytes(out)

    def recv_frame(self) -> tuple[int, bytes]:
        """Returns (correlation id, rest of the response after the correlation id)."""
        size = struct.unpack(">i", self._recv_exact(4))[0]
        data = self._recv_exact(size)
        return struct.unpack(">i", data[:4])[0], data[4:]

    def wait_closed(self, timeout: float = 10.0) -> bytes:
        """Reads until the peer closes; returns whatever arrived first (b"" if nothing).
        Raises AssertionError if the connection is still open after `timeout`."""
        self.sock.settimeout(0.5)
        got = bytearray()
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                continue
            except (ConnectionResetError, BrokenPipeError):
                return bytes(got)
            if not chunk:
                return bytes(got)
            got += chunk
        raise AssertionError(f"broker kept the connection open for {timeout}s "
                             f"(received {len(got)} bytes)")

    def api_versions(self, correlation_id: int = 1) -> dict[int, tuple[int, int]]:
        self.send(request(API_VERSIONS, 0, correlation_id))
        cid, body = self.recv_frame()
        assert cid == correlation_id, (cid, correlation_id)
        code, apis = parse_api_versions_v0(body)
        assert code == 0, f"ApiVersions v0 error {code}"
        return apis
