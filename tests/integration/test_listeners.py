"""Named listeners as Kafka configures them: three brokers each listen on CLIENT (advertised
under the name "localhost") and on BROKER (inter.broker.listener.name), both PLAINTEXT through
listener.security.protocol.map. A client is told every broker's endpoint on the listener it
came in on (Metadata, FindCoordinator), replication runs between the BROKER endpoints, and the
data goes through: an RF=3 topic keeps its full ISR and a consumer on CLIENT reads every record
produced with acks=all."""
from __future__ import annotations

import pytest

import kit
from kit import wait_until
from ports import free_port

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's cluster mode")


@pytest.fixture
def two_listener_cluster(tmp_path, broker_factory):
    from test_cluster import start_cluster
    ports = {n: free_port() for n in (1, 2, 3)}
    per_node = {n: {"listeners": f"CLIENT://127.0.0.1:{{port}},BROKER://127.0.0.1:{ports[n]}",
                    "advertised.listeners": "CLIENT://localhost:{port},"
                                            f"BROKER://127.0.0.1:{ports[n]}"}
                for n in (1, 2, 3)}
    etcd, brokers = start_cluster(tmp_path, broker_factory, extra={
        "listener.security.protocol.map": "CLIENT:PLAINTEXT,BROKER:PLAINTEXT",
        "inter.broker.listener.name": "BROKER"}, per_node=per_node)
    for b, n in zip(brokers, (1, 2, 3)):
        b.broker_port = ports[n]
    yield brokers
    for b in brokers:
        b.stop()
    etcd.stop_all()


def connections(b, listener: str) -> float:
    """strata_connections{listener} of broker `b` (its admin API)."""
    import urllib.request
    text = urllib.request.urlopen(f"http://{b.config['strata.admin.listener']}/metrics",
                                  timeout=10).read().decode()
    for line in text.splitlines():
        if line.startswith(f'strata_connections{{listener="{listener}"}}'):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no strata_connections for {listener}")


def endpoints(bootstrap: str) -> dict[int, tuple[str, int]]:
    md = kit.admin(bootstrap).list_topics(timeout=10)
    return {b.id: (b.host, b.port) for b in md.brokers.values()}


def test_clients_are_told_the_endpoints_of_the_listener_they_came_in_on(two_listener_cluster):
    b1, b2, b3 = two_listener_cluster
    want_client = {1: ("localhost", b1.port), 2: ("localhost", b2.port), 3: ("localhost", b3.port)}
    want_broker = {n: ("127.0.0.1", b.broker_port) for n, b in zip((1, 2, 3), (b1, b2, b3))}
    assert endpoints(b2.bootstrap) == want_client
    assert endpoints(f"127.0.0.1:{b2.broker_port}") == want_broker

    topic = kit.unique_topic("listeners")
    from confluent_kafka.admin import NewTopic
    a = kit.admin(b1.bootstrap)
    a.create_topics([NewTopic(topic, 3, 3, config={"min.insync.replicas": "2"})]
                    )[topic].result(timeout=30)

    def full_isr():
        parts = a.list_topics(topic, timeout=10).topics[topic].partitions
        return len(parts) == 3 and all(len(p.isrs) == 3 for p in parts.values())
    wait_until(full_isr, 30, "a full ISR on every partition",
               lambda: {p: pm.isrs for p, pm in
                        a.list_topics(topic, timeout=10).topics[topic].partitions.items()})
    # The followers fetch from the leaders' BROKER endpoints: brokers 1 and 3 (which no
    # client reached there) hold connections on BROKER, from their peers.
    for b in (b1, b3):
        wait_until(lambda: connections(b, "BROKER") > 0, 30,
                   f"peers connected to broker {b.config['node.id']}'s BROKER listener",
                   lambda: (connections(b, "BROKER"), connections(b, "CLIENT")))
    recs = kit.make_records(300, 3, seed=7, tag="listeners", nulls=False)
    kit.produce_confluent(f"localhost:{b3.port}", topic, recs)
    got = kit.consume_confluent(f"localhost:{b1.port}", topic, 3)
    assert sorted((p, m.offset(), m.value()) for p, ms in got.items() for m in ms) == \
        sorted((r.partition, r.offset, r.value) for r in recs)

    # FindCoordinator answers on the listener too.
    for bootstrap, host, port in ((b1.bootstrap, "localhost", None),
                                  (f"127.0.0.1:{b1.broker_port}", "127.0.0.1", None)):
        assert find_coordinator_host(bootstrap, "some-group")[0] == host


def find_coordinator_host(bootstrap: str, group: str) -> tuple[str, int]:
    """FindCoordinator v1 for a group -> the coordinator's (host, port), once it has one."""
    import rawkafka

    def ask():
        with rawkafka.Conn(bootstrap) as c:
            c.send(rawkafka.request(10, 1, 11, bytes(rawkafka.Writer().string(group).i8(0).buf)))
            _, body = c.recv_frame()
        r = rawkafka.Reader(body)
        r.i32()  # throttle_time_ms
        code = r.i16()
        r.string()  # error_message
        node = r.i32()
        host = r.string()
        port = r.i32()
        return (host, port) if code == 0 and node >= 0 else None
    return wait_until(ask, 30, f"a coordinator for {group} via {bootstrap}")
