"""Fetch sessions (KIP-227) with real clients: Kafka's Java consumer opens a session and then
sends incremental fetches (counted in the broker's metrics), reading every record of 1,000
partitions byte for byte; a consumer whose session the broker no longer has (restarted) opens
a new one and misses nothing; with no slots, fetches stay full and complete. On the wire:
FETCH_SESSION_ID_NOT_FOUND and INVALID_FETCH_SESSION_EPOCH, and an incremental answer that holds
only the partitions with news.
"""
from __future__ import annotations

import pytest

import kit
from kit import wait_until
from ports import free_port
import rawkafka
from test_consumer_groups import BackgroundProducer, wait_all_consumed
from test_consumer_groups_java import JavaMember, java_classes  # noqa: F401 (fixture)
from test_java_clients import run_java
from test_tiered_remote import metric_sum

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's metrics")


def counter(admin_port: int, name: str, kind: str | None = None) -> float:
    full = f'{name}{{kind="{kind}"}}' if kind else name
    return metric_sum(admin_port, full)


def session_broker(broker_factory, **config):
    admin_port = free_port()
    b = broker_factory(config={"strata.admin.listener": f"127.0.0.1:{admin_port}",
                               "group.initial.rebalance.delay.ms": "0", **config})
    return b, admin_port


def test_a_java_consumer_of_1000_partitions_fetches_incrementally(broker_factory, tmp_path):
    b, admin = session_broker(broker_factory)
    topic = kit.unique_topic("sessions")
    kit.create_topic(b.bootstrap, topic, 1000)
    # Small fetches, so that reading everything back takes many of them.
    config = tmp_path / "client.properties"
    config.write_text("fetch.max.bytes=65536\nmax.partition.fetch.bytes=2048\n")
    out = run_java(b.bootstrap, topic, "lz4", records=4000, partitions=1000,
                   extra=["--command-config", str(config)])
    assert "produced=4000 consumed=4000 mismatches=0" in out, out
    full = counter(admin, "strata_fetch_requests_total", "full")
    incremental = counter(admin, "strata_fetch_requests_total", "incremental")
    # One full fetch opens the session; the rest name only what changed.
    assert full >= 1 and incremental > 5 * full, (full, incremental)
    assert counter(admin, "strata_fetch_session_errors_total") == 0


def test_a_consumer_whose_session_is_gone_falls_back_and_misses_nothing(broker_factory,
                                                                        java_classes):  # noqa: F811
    b, admin = session_broker(broker_factory)
    topic = kit.unique_topic("sessions-restart")
    partitions = 50
    kit.create_topic(b.bootstrap, topic, partitions)
    member = JavaMember(java_classes, b.bootstrap, kit.unique_topic("g"), topic, "range")
    producer = BackgroundProducer(b.bootstrap, topic, partitions=partitions, rate_sleep=0.05)
    producer.start()
    try:
        wait_until(lambda: counter(admin, "strata_fetch_requests_total", "incremental") > 5, 60,
                   "incremental fetches", lambda: counter(admin, "strata_fetch_requests_total",
                                                          "incremental"))
        # Restarted, the broker has no sessions: the consumer, disconnected, opens a new one
        # with a full fetch and goes on incrementally.
        b.restart()
        wait_until(lambda: counter(admin, "strata_fetch_requests_total", "full") >= 1
                   and counter(admin, "strata_fetch_requests_total", "incremental") > 5, 90,
                   "a new session, then incremental fetches again",
                   lambda: (counter(admin, "strata_fetch_requests_total", "full"),
                            counter(admin, "strata_fetch_requests_total", "incremental")))
    finally:
        producer.stop()
    assert not producer.errors, producer.errors[:3]
    wait_all_consumed([member], producer.acked, timeout=90)
    member.stop()


def test_with_no_session_slots_fetches_stay_full_and_complete(broker_factory):
    b, admin = session_broker(broker_factory, **{"max.incremental.fetch.session.cache.slots": "0"})
    topic = kit.unique_topic("sessions-none")
    kit.create_topic(b.bootstrap, topic, 20)
    out = run_java(b.bootstrap, topic, "none", records=2000, partitions=20)
    assert "produced=2000 consumed=2000 mismatches=0" in out, out
    assert counter(admin, "strata_fetch_requests_total", "incremental") == 0
    assert counter(admin, "strata_fetch_requests_total", "full") > 0
    assert counter(admin, "strata_fetch_sessions") == 0


def fetch_v7(b, session_id: int, epoch: int, partitions: list[tuple[str, int, int]],
             forgotten: list[tuple[str, int]] = ()) -> tuple[int, int, list[tuple[str, int, int]]]:
    """One raw Fetch v7 -> (error code, session id, [(topic, partition, high watermark)])."""
    w = rawkafka.Writer()
    w.i32(-1).i32(0).i32(0).i32(1 << 20).i8(0).i32(session_id).i32(epoch)
    by_topic: dict[str, list[tuple[int, int]]] = {}
    for t, p, offset in partitions:
        by_topic.setdefault(t, []).append((p, offset))
    w.array(list(by_topic.items()), lambda w2, t: w2.string(t[0]).array(
        t[1], lambda w3, po: w3.i32(po[0]).i64(po[1]).i64(-1).i32(1 << 20)))
    gone: dict[str, list[int]] = {}
    for t, p in forgotten:
        gone.setdefault(t, []).append(p)
    w.array(list(gone.items()), lambda w2, t: w2.string(t[0]).array(t[1], lambda w3, p: w3.i32(p)))
    with rawkafka.Conn(b.bootstrap) as c:
        c.send(rawkafka.request(1, 7, 21, bytes(w.buf)))
        cid, body = c.recv_frame()
    assert cid == 21
    r = rawkafka.Reader(body)
    r.i32()  # throttle
    error, sid = r.i16(), r.i32()
    out = []
    for _ in range(r.array_len()):
        topic = r.string()
        for _ in range(r.array_len()):
            p, _err, hw = r.i32(), r.i16(), r.i64()
            r.i64(), r.i64()  # last stable offset, log start
            for _ in range(max(r.array_len(), 0)):
                r.i64(), r.i64()
            size = r.i32()
            if size > 0:
                r._take(size)
            out.append((topic, p, hw))
    return error, sid, out


def test_sessions_on_the_wire(broker_factory):
    b, admin = session_broker(broker_factory)
    topic = kit.unique_topic("sessions-wire")
    kit.create_topic(b.bootstrap, topic, 3)
    recs = kit.make_records(30, 3, seed=5, tag="wire")
    kit.produce_confluent(b.bootstrap, topic, recs)
    everything = [(topic, p, 0) for p in range(3)]
    err, sid, got = fetch_v7(b, 0, 0, everything)
    assert err == 0 and sid != 0 and [(t, p) for t, p, _ in got] == [(topic, p) for p in range(3)]
    # Caught up on partition 0 only: partitions 1 and 2 still have records at 0 to send.
    err, sid1, got = fetch_v7(b, sid, 1, [(topic, 0, 10)])
    assert (err, sid1) == (0, sid)
    assert sorted(p for _, p, _ in got) == [1, 2], got
    # Nothing new anywhere for a fetcher at every end: an empty answer.
    err, _, got = fetch_v7(b, sid, 2, [(topic, p, 10) for p in range(3)])
    assert err == 0 and got == [], got
    kit.produce_confluent(b.bootstrap, topic, [r for r in kit.make_records(3, 3, seed=6, tag="more")
                                               if r.partition == 2])
    err, _, got = fetch_v7(b, sid, 3, [])
    assert err == 0 and [(p, hw) for _, p, hw in got] == [(2, 11)], got
    # The same epoch again, an unknown session, a session after it is closed.
    assert fetch_v7(b, sid, 3, [])[:2] == (71, 0)
    assert fetch_v7(b, sid + 1 if sid < 2**31 - 1 else 1, 1, [])[:2] == (70, 0)
    err, closed, got = fetch_v7(b, sid, -1, everything)
    assert (err, closed, len(got)) == (0, 0, 3)
    assert fetch_v7(b, sid, 4, [])[:2] == (70, 0)
    assert counter(admin, "strata_fetch_session_errors_total") == 3


PARTITIONS_FOLLOWED = 1000


def test_followers_fetch_incrementally_and_replicate_every_record(tmp_path, broker_factory):
    """Three brokers, 1,000 partitions of three replicas: followers keep a session with each leader
    and send incremental fetches; with one slot per broker some fetchers get no session and
    fetch in full. Either way every acknowledged record is on every replica."""
    from test_cluster import metadata, start_cluster
    from test_replication import isr
    etcd, brokers = start_cluster(tmp_path, broker_factory, per_node={
        3: {"max.incremental.fetch.session.cache.slots": "1"}})
    try:
        topic = kit.unique_topic("sessions-followers")
        from confluent_kafka.admin import NewTopic
        a = kit.admin(brokers[0].bootstrap)
        a.create_topics([NewTopic(topic, PARTITIONS_FOLLOWED, 3)])[topic].result(timeout=60)
        wait_until(lambda: all(len(r) == 3 for r in isr(brokers[0], topic).values()), 120,
                   "full ISRs", lambda: isr(brokers[0], topic))
        recs = kit.make_records(3 * PARTITIONS_FOLLOWED, PARTITIONS_FOLLOWED, seed=71,
                                tag="followers")
        kit.produce_confluent(brokers[0].bootstrap, topic, recs, extra={"acks": "all"})
        admins = [int(b.config["strata.admin.listener"].rsplit(":", 1)[1]) for b in brokers]

        def incremental(port: int) -> float:
            return counter(port, "strata_replica_fetch_requests_total", "incremental")
        wait_until(lambda: all(incremental(p) > 10 for p in admins[:2]), 60,
                   "followers' incremental fetches", lambda: [incremental(p) for p in admins])
        assert counter(admins[2], "strata_fetch_sessions") <= 1
        kit.assert_same_records(recs, kit.consume_confluent(brokers[1].bootstrap, topic,
                                                            PARTITIONS_FOLLOWED))

        def log_bytes(b, p: int) -> bytes:
            return b"".join(f.read_bytes() for f in sorted(b.partition_dir(topic, p).glob("*.log")))
        for p in range(PARTITIONS_FOLLOWED):  # every replica holds the leader's bytes
            wait_until(lambda: len({log_bytes(b, p) for b in brokers}) == 1, 30,
                       f"partition {p} identical on all replicas",
                       lambda: [len(log_bytes(b, p)) for b in brokers])
        assert len(metadata(brokers[0]).brokers) == 3
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()


def test_client_telemetry_is_answered_with_an_empty_subscription(broker_factory):
    """KIP-714: Java clients ask GetTelemetrySubscriptions (and would otherwise log that the
    broker lacks it); Strata gives an instance id and a subscription of no metrics."""
    b, admin = session_broker(broker_factory)
    w = rawkafka.Writer(flexible=True)
    w.raw(bytes(16)).tags()  # a zero client instance id: the first request
    with rawkafka.Conn(b.bootstrap) as c:
        c.send(rawkafka.request(71, 0, 41, bytes(w.buf), flexible_header=True))
        cid, body = c.recv_frame()
        r = rawkafka.Reader(body, flexible=True)
        r.skip_tags()  # response header
        r.i32()
        error, instance = r.i16(), r._take(16)
        r.i32()  # subscription id
        compressions = r.array_len()
        push_ms, max_bytes, _delta = r.i32(), r.i32(), r.i8()
        metrics = r.array_len()
        assert (cid, error, compressions, metrics) == (41, 0, 0, 0)
        assert instance != bytes(16) and push_ms > 0 and max_bytes > 0
        p = rawkafka.Writer(flexible=True)
        p.raw(instance).i32(0).i8(1).i8(0).uvarint(1).tags()  # terminating, no metrics bytes
        c.send(rawkafka.request(72, 0, 42, bytes(p.buf), flexible_header=True))
        cid, body = c.recv_frame()
        r = rawkafka.Reader(body, flexible=True)
        r.skip_tags()
        r.i32()
        assert (cid, r.i16()) == (42, 0)
    topic = kit.unique_topic("telemetry")
    kit.create_topic(b.bootstrap, topic, 1)
    out = run_java(b.bootstrap, topic, "none", records=10, partitions=1)
    assert "consumed=10 mismatches=0" in out, out
    assert "telemetry" not in out.lower(), out[-3000:]
    assert counter(admin, 'strata_requests_total{api="GetTelemetrySubscriptions"}') >= 3
