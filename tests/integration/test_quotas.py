"""Client quotas (KIP-13/55/124/219/546): producer_byte_rate, consumer_byte_rate and
request_percentage per user, client id or both, defaults and overrides, set and shown with
kafka-configs (AlterClientQuotas, DescribeClientQuotas) and kept in the metadata store.

A producer over its byte rate is throttled (throttle_time_ms in its responses, its connection
muted) to within 10 % of the rate over 30 s while another user is not throttled at all; a
consumer over its byte rate likewise; kafka-configs shows users' quotas and SCRAM credentials
together; bad quota alterations get Kafka's errors."""
from __future__ import annotations

import subprocess
import threading
import time

import pytest
from confluent_kafka import Consumer, Producer

import kit
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
