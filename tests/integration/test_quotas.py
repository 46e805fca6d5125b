"""Client quotas (KIP-13/55/124/219/546): producer_byte_rate, consumer_byte_rate and
request_percentage per user, client id or both, defaults and overrides, set and shown with
kafka-configs (AlterClientQuotas, DescribeClientQuotas) and kept in the metadata store.

A producer over its byte rate is throttled (throttle_time_ms in its responses, its connection
muted) to within 10 % of the rate over 30 s while another user is not throttled at all; a
consumer over its byte rate likewise; kafka-configs shows users' quotas and SCRAM credentials
together; bad quota alterations get Kafka's errors.

Against raw requests (rawkafka), as Kafka's KafkaApis answers them: a consumer's fetch is capped
at what its quota lets through in one quota window, and over its quota it gets an empty response
with throttle_time_ms, its bytes not counted; a request_percentage throttle reaches the
response's throttle_time_ms; the time a fetch long-polls is not charged as request time."""
from __future__ import annotations

import struct
import subprocess
import threading
import time

import pytest
from confluent_kafka import Consumer, Producer

import kit
import rawkafka
from ports import free_port

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's listeners")

CONFIG_CMD = "kafka.admin.ConfigCommand"
USERS = {"alice": "alice-secret", "bob": "bob-secret"}
JAAS = ("org.apache.kafka.common.security.plain.PlainLoginModule required "
        + " ".join(f'user_{u}="{p}"' for u, p in USERS.items()) + ";")


@pytest.fixture
def quota_broker(broker_factory):
    port = free_port()
    b = broker_factory(config={
        "listeners": f"PLAINTEXT://127.0.0.1:{{port}},CLIENT://127.0.0.1:{port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{{port}},CLIENT://127.0.0.1:{port}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CLIENT:SASL_PLAINTEXT",
        "inter.broker.listener.name": "PLAINTEXT",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
        "listener.name.client.plain.sasl.jaas.config": JAAS})
    b.client_bootstrap = f"127.0.0.1:{port}"
    return b


def as_user(user: str) -> dict:
    return {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
            "sasl.username": user, "sasl.password": USERS[user]}


def configs(b, *args: str, ok: bool = True) -> str:
    r = subprocess.run(["java", "-Xmx256m", "-cp", f"{kit.KAFKA_LIB}/*", CONFIG_CMD,
                        "--bootstrap-server", b.bootstrap, *args],
                       capture_output=True, text=True, timeout=120, errors="replace")
    out = r.stdout + r.stderr
    if ok:
        assert r.returncode == 0, f"kafka-configs {' '.join(args)}:\n{out[-4000:]}"
    return out


class Tally:
    """What one producing user achieved: bytes acknowledged and throttle reports."""

    def __init__(self):
        self.bytes = 0
        self.first = None
        self.last = None
        self.throttles = []
        self.acked = []  # (time, bytes) per delivered record

    def bytes_between(self, start: float, end: float) -> int:
        return sum(n for t, n in self.acked if start <= t < end)


def produce_for(b, user: str, topic: str, seconds: float, tally: Tally, size: int = 10_000):
    p = Producer({"bootstrap.servers": b.client_bootstrap, "linger.ms": 5, "batch.size": 100_000,
                  "queue.buffering.max.kbytes": 1024, **as_user(user),
                  "throttle_cb": lambda e: tally.throttles.append(e.throttle_time)})
    value = b"q" * size

    def delivered(err, msg):
        if err is None:
            now = time.monotonic()
            tally.first = tally.first or now
            tally.last = now
            tally.bytes += len(msg.value())
            tally.acked.append((now, len(msg.value())))
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            p.produce(topic, value, on_delivery=delivered)
        except BufferError:
            p.poll(0.05)
            continue
        p.poll(0)
    p.flush(60)


def test_a_producer_over_its_byte_rate_is_throttled_to_it(quota_broker):
    b = quota_broker
    rate = 500_000  # bytes/s
    configs(b, "--alter", "--add-config", f"producer_byte_rate={rate}", "--entity-type", "users",
            "--entity-name", "alice")
    out = configs(b, "--describe", "--entity-type", "users", "--entity-name", "alice")
    assert f"producer_byte_rate={rate}" in out.replace(".0", ""), out
    topic = kit.unique_topic("quota")
    kit.create_topic(b.bootstrap, topic, 1)
    alice, bob = Tally(), Tally()
    threads = [threading.Thread(target=produce_for, args=(b, "alice", topic, 44, alice)),
               threading.Thread(target=produce_for, args=(b, "bob", topic, 10, bob))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Kafka's quota lets a new client send a whole window's worth (quota.window.num x
    # quota.window.size.seconds = 11 s of quota) at once; the steady rate is measured after it.
    start = alice.first + 12
    steady = alice.bytes_between(start, start + 30) / 30
    print(f"alice: {alice.bytes} bytes in {alice.last - alice.first:.1f} s, {steady:.0f} B/s "
          f"over the 30 s after the first window (quota {rate}), {len(alice.throttles)} "
          f"throttle reports; bob: {bob.bytes / (bob.last - bob.first):.0f} B/s, "
          f"{len(bob.throttles)} reports")
    assert abs(steady - rate) <= 0.1 * rate, (steady, rate)
    assert any(t > 0 for t in alice.throttles)
    assert not any(t > 0 for t in bob.throttles), bob.throttles
    assert bob.bytes / (bob.last - bob.first) > 2 * rate


def test_a_consumer_over_its_byte_rate_is_throttled(quota_broker):
    b = quota_broker
    topic = kit.unique_topic("quota-fetch")
    kit.create_topic(b.bootstrap, topic, 1)
    p = Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 20})
    total = 6_000_000
    for i in range(total // 10_000):
        p.produce(topic, b"c" * 10_000)
        if i % 100 == 0:
            p.poll(0)
    assert p.flush(60) == 0
    rate = 300_000
    configs(b, "--alter", "--add-config", f"consumer_byte_rate={rate}", "--entity-type",
            "users", "--entity-default")

    def read_all(user: str) -> tuple[float, list]:
        throttles = []
        c = Consumer({"bootstrap.servers": b.client_bootstrap, "group.id": f"g-{user}",
                      "fetch.max.bytes": 1_000_000, "max.partition.fetch.bytes": 1_000_000,
                      "auto.offset.reset": "earliest", **as_user(user),
                      "throttle_cb": lambda e: throttles.append(e.throttle_time)})
        c.subscribe([topic])
        got, start = 0, time.monotonic()
        while got < total and time.monotonic() - start < 60:
            m = c.poll(0.5)
            if m is not None and not m.error():
                got += len(m.value())
        took = time.monotonic() - start
        c.close()
        assert got == total
        return took, throttles
    took, throttles = read_all("alice")
    print(f"alice read {total} bytes in {took:.1f} s under a {rate} B/s default user quota")
    # A new client's first 11 s of quota may come at once; the rest at the quota.
    at_quota = (total - 11 * rate) / rate
    assert took >= 0.8 * at_quota and any(t > 0 for t in throttles), (took, at_quota, throttles)
    took, throttles = read_all("bob")  # a user of its own: a bucket of its own
    assert any(t > 0 for t in throttles), throttles


def test_quota_entities_defaults_and_errors(quota_broker):
    b = quota_broker
    configs(b, "--alter", "--add-config", "producer_byte_rate=1024,request_percentage=50",
            "--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients",
            "--entity-name", "app-1")
    configs(b, "--alter", "--add-config", "consumer_byte_rate=2048", "--entity-type", "clients",
            "--entity-default")
    out = configs(b, "--describe", "--entity-type", "users", "--entity-name", "alice",
                  "--entity-type", "clients", "--entity-name", "app-1")
    assert "producer_byte_rate=1024" in out and "request_percentage=50" in out, out
    out = configs(b, "--describe", "--entity-type", "clients", "--entity-default")
    assert "consumer_byte_rate=2048" in out, out
    configs(b, "--alter", "--delete-config", "request_percentage", "--entity-type", "users",
            "--entity-name", "alice", "--entity-type", "clients", "--entity-name", "app-1")
    out = configs(b, "--describe", "--entity-type", "users", "--entity-name", "alice",
                  "--entity-type", "clients", "--entity-name", "app-1")
    assert "producer_byte_rate=1024" in out and "request_percentage" not in out, out
    bad = configs(b, "--alter", "--add-config", "producer_byte_rate=-5", "--entity-type",
                  "users", "--entity-name", "bob", ok=False)
    assert "must be positive" in bad or "InvalidRequestException" in bad or \
        "InvalidConfigurationException" in bad, bad
    # Users' quotas and SCRAM credentials show together, as Kafka's tool prints them.
    configs(b, "--alter", "--add-config", "SCRAM-SHA-256=[password=bob-scram]",
            "--entity-type", "users", "--entity-name", "bob")
    configs(b, "--alter", "--add-config", "producer_byte_rate=4096", "--entity-type", "users",
            "--entity-name", "bob")
    out = configs(b, "--describe", "--entity-type", "users", "--entity-name", "bob")
    assert "producer_byte_rate=4096" in out and "SCRAM-SHA-256=iterations=4096" in out, out


# ---- raw requests against short quota windows -----------------------------------------------

WINDOW_NUM, WINDOW_S = 4, 1  # quota.window.num, quota.window.size.seconds
FULL_WINDOW_S = WINDOW_NUM * WINDOW_S


@pytest.fixture
def window_broker(broker_factory):
    """A broker whose quota window is 4 samples of 1 s, so quotas act within seconds."""
    return broker_factory(config={"quota.window.num": WINDOW_NUM,
                                  "quota.window.size.seconds": WINDOW_S})


class RawClient(rawkafka.Conn):
    """A raw connection whose requests name `client_id`, the quota entity they are charged to."""

    def __init__(self, b, client_id: str):
        # Long enough for a throttled connection's mute (a byte throttle may be several windows).
        super().__init__(b.bootstrap, timeout=60)
        self.client_id = client_id


class FetchAnswer:
    """One raw Fetch v4 response: its throttle and, per partition, (error, record bytes)."""

    def __init__(self, throttle_ms: int, partitions: list[tuple[int, bytes]], took: float):
        self.throttle_ms = throttle_ms
        self.partitions = partitions
        self.took = took

    @property
    def records(self) -> bytes:
        return b"".join(r for _, r in self.partitions)


def fetch_v4(conn: RawClient, topic: str, offset: int, max_bytes: int, cid: int,
             max_wait_ms: int = 100) -> FetchAnswer:
    w = rawkafka.Writer()
    w.i32(-1).i32(max_wait_ms).i32(1).i32(max_bytes).i8(0)  # replica, wait, min, max, isolation
    w.array([topic], lambda w2, t: w2.string(t).array(
        [0], lambda w3, p: w3.i32(p).i64(offset).i32(max_bytes)))
    start = time.monotonic()
    conn.send(rawkafka.request(1, 4, cid, bytes(w.buf), client_id=conn.client_id))
    got_cid, body = conn.recv_frame()
    took = time.monotonic() - start
    assert got_cid == cid
    r = rawkafka.Reader(body)
    throttle = r.i32()
    partitions = []
    for _ in range(r.array_len()):
        r.string()
        for _ in range(r.array_len()):
            r.i32()
            err = r.i16()
            r.i64(), r.i64()  # high watermark, last stable offset
            for _ in range(max(r.array_len(), 0)):
                r.i64(), r.i64()
            size = r.i32()
            partitions.append((err, r._take(size) if size > 0 else b""))
    return FetchAnswer(throttle, partitions, took)


def next_offset(records: bytes, offset: int) -> int:
    """The offset after the last whole batch in `records` (`offset` if none)."""
    pos = 0
    while pos + 61 <= len(records):
        base, length = struct.unpack_from(">qi", records, pos)
        if pos + 12 + length > len(records):
            break
        offset = base + struct.unpack_from(">i", records, pos + 23)[0] + 1
        pos += 12 + length
    return offset


def test_a_throttled_consumer_gets_capped_then_empty_fetches(window_broker):
    b = window_broker
    topic = kit.unique_topic("quota-window")
    kit.create_topic(b.bootstrap, topic, 1)
    total, size = 200_000, 1000
    p = Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 5, "batch.size": 16_384})
    for _ in range(total // size):
        p.produce(topic, b"w" * size)
    assert p.flush(60) == 0
    rate = 20_000
    bound = rate * FULL_WINDOW_S  # what the quota lets through at once (the token bucket)
    configs(b, "--alter", "--add-config", f"consumer_byte_rate={rate}", "--entity-type", "clients",
            "--entity-default")
    huge = 100 * 1024 * 1024
    probes = iter(range(1_000_000))

    def capped() -> bool:  # each probe a client id of its own, so a bucket of its own
        with RawClient(b, f"probe-{next(probes)}") as c:
            got = fetch_v4(c, topic, 0, huge, cid=1)
        assert got.throttle_ms == 0 and got.records
        return len(got.records) <= bound
    kit.wait_until(capped, 30, "the consumer_byte_rate quota to cap fetches")

    answers, offset = [], 0
    deadline = time.monotonic() + 2 * total / rate + 2 * FULL_WINDOW_S
    with RawClient(b, "reader") as c:
        while offset < total // size and time.monotonic() < deadline:
            got = fetch_v4(c, topic, offset, huge, cid=len(answers) + 1)
            answers.append(got)
            offset = next_offset(got.records, offset)
    data = [a for a in answers if a.throttle_ms == 0]
    throttled = [a for a in answers if a.throttle_ms > 0]
    print(f"{len(data)} fetches with records ({[len(a.records) for a in data]} bytes), "
          f"{len(throttled)} throttled ({[a.throttle_ms for a in throttled]} ms); bound {bound}")
    assert offset >= total // size, (offset, len(answers))
    # Kafka's fetchMaxBytes: never more than the quota window's worth, though max_bytes is 100 MiB.
    assert all(0 < len(a.records) <= bound for a in data), [len(a.records) for a in data]
    assert len(data[0].records) > bound // 2  # the cap, not something smaller
    # Kafka's throttled response: no partitions, so no records.
    assert throttled and all(a.partitions == [] for a in throttled)
    # A throttled fetch's bytes are not counted: once its throttle (the connection's mute) is
    # over, the same fetch goes through. Charged, it would be throttled again.
    for before, after in zip(answers, answers[1:]):
        assert before.throttle_ms == 0 or (after.throttle_ms == 0 and after.records), \
            [(a.throttle_ms, len(a.records)) for a in answers]


def metadata_throttle(c: RawClient, cid: int) -> int:
    """throttle_time_ms of a Metadata v4 (all topics, no auto-creation)."""
    body = bytes(rawkafka.Writer().i32(-1).i8(0).buf)
    c.send(rawkafka.request(rawkafka.API_METADATA, 4, cid, body, client_id=c.client_id))
    got_cid, body = c.recv_frame()
    assert got_cid == cid
    return rawkafka.Reader(body).i32()


def api_versions_throttle(c: RawClient, cid: int) -> int:
    """throttle_time_ms of an ApiVersions v1."""
    c.send(rawkafka.request(rawkafka.API_VERSIONS, 1, cid, client_id=c.client_id))
    got_cid, body = c.recv_frame()
    assert got_cid == cid
    r = rawkafka.Reader(body)
    assert r.i16() == 0
    for _ in range(r.array_len()):
        r.i16(), r.i16(), r.i16()
    return r.i32()


def test_request_percentage_throttles_reach_the_response(window_broker):
    b = window_broker
    topic = kit.unique_topic("quota-poll")
    kit.create_topic(b.bootstrap, topic, 1)
    # 10 % of a thread: 100 ms per second, so 300 ms over the (num - 1) windows a first
    # record is spread over; a long poll of 600 ms would be twice that, if charged.
    poll_ms = 600
    configs(b, "--alter", "--add-config", "request_percentage=10", "--entity-type", "clients",
            "--entity-name", "poller")
    # 0.00001 %: 0.3 us of thread time over 3 s, which any request is far over.
    configs(b, "--alter", "--add-config", "request_percentage=0.00001", "--entity-type",
            "clients", "--entity-name", "slow-app")
    cids = iter(range(1, 1_000_000))
    with RawClient(b, "slow-app") as c:
        # Once the quota applies, every response carries a throttle, at most one window
        # (ClientRequestQuotaManager's cap), and the connection is muted that long.
        kit.wait_until(lambda: metadata_throttle(c, next(cids)) > 0, 30 + FULL_WINDOW_S,
                       "a Metadata response with throttle_time_ms > 0", interval=0.05)
        throttles = [metadata_throttle(c, next(cids)) for _ in range(3)]
        assert all(0 < t <= WINDOW_S * 1000 for t in throttles), throttles
        assert 0 < api_versions_throttle(c, next(cids)) <= WINDOW_S * 1000
    # The poller's quota was set first, so it applies by now.
    with RawClient(b, "poller") as c:
        for i in range(4):
            got = fetch_v4(c, topic, 0, 1 << 20, cid=i + 1, max_wait_ms=poll_ms)
            assert got.took >= 0.9 * poll_ms / 1000, got.took  # it long-polled
            assert got.throttle_ms == 0 and got.partitions, (i, got.throttle_ms)
        assert metadata_throttle(c, 99) == 0
    with RawClient(b, "other-app") as c:  # no quota of its own
        assert metadata_throttle(c, 1) == 0
