"""A broker with its metadata in a real etcd (strata.metadata.backend=etcd).

The etcd is Debian's etcd-server on free loopback ports, one per test. What is checked:
topics, partition records and the broker's registration are in etcd under the prefix;
produce/consume give back exact offsets and bytes; metadata survives a broker restart
(a higher broker epoch); a start with etcd unreachable, a duplicate node.id and a
corrupt record each give a clear error; an etcd outage stops metadata changes with a
retriable error while produce and consume go on, and all resumes when etcd is back.
"""
from __future__ import annotations

import json
import subprocess
import time

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import NewTopic

import kit
from kit import wait_until
from conftest import Broker, free_port
from etcdkit import Etcd

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's etcd backend")

TTL_MS = 3000
PREFIX = "/strata-test"


@pytest.fixture
def etcd(tmp_path):
    e = Etcd(tmp_path / "etcd")
    yield e
    e.stop_all()


def etcd_config(etcd: Etcd, **extra) -> dict:
    cfg = {"strata.metadata.backend": "etcd", "strata.etcd.endpoints": etcd.endpoints,
           "strata.etcd.prefix": PREFIX, "strata.etcd.lease.ttl.ms": str(TTL_MS),
           "strata.etcd.request.timeout.ms": "2000"}
    cfg.update(extra)
    return cfg


def test_metadata_lives_in_etcd_and_survives_a_broker_restart(etcd, broker_factory):
    b = broker_factory(config=etcd_config(etcd))
    topic = kit.unique_topic("etcd")
    kit.create_topic(b.bootstrap, topic, 3, {"retention.ms": "3600000"})
    recs = kit.make_records(300, 3, seed=1, tag="etcd")
    kit.produce_confluent(b.bootstrap, topic, recs)
    kit.assert_same_records(recs, kit.consume_confluent(b.bootstrap, topic, 3))

    kvs = etcd.get_prefix(PREFIX + "/")
    record = json.loads(kvs[f"{PREFIX}/topics/{topic}"]["value"])
    assert record["partitions"] == 3 and record["configs"] == {"retention.ms": "3600000"}
    parts = [k for k in kvs if k.startswith(f"{PREFIX}/partitions/{record['id']}/")]
    assert len(parts) == 3, parts
    assert json.loads(kvs[parts[0]]["value"])["leader"] == 1
    reg = kvs[f"{PREFIX}/brokers/1"]
    assert reg["lease"] != 0 and json.loads(reg["value"])["listeners"][0]["port"] == b.port
    assert len(kvs[f"{PREFIX}/cluster_id"]["value"]) == 22
    first_epoch = reg["create_revision"]

    b.restart()
    a = kit.admin(b.bootstrap)
    md = a.list_topics(topic, timeout=10)
    assert len(md.topics[topic].partitions) == 3
    assert md.cluster_id == kvs[f"{PREFIX}/cluster_id"]["value"]
    kit.assert_same_records(recs, kit.consume_confluent(b.bootstrap, topic, 3))
    again = etcd.get_prefix(f"{PREFIX}/brokers/")[f"{PREFIX}/brokers/1"]
    assert again["create_revision"] > first_epoch  # a higher broker epoch
    b.stop()
    # A clean shutdown revokes the lease: the registration is gone at once.
    assert f"{PREFIX}/brokers/1" not in etcd.get_prefix(f"{PREFIX}/brokers/")


def start_expecting_failure(b: Broker, timeout: float) -> str:
    """Runs the broker's command and waits for it to exit on its own; returns its output."""
    b._write_config()
    r = subprocess.run(b._command(), capture_output=True, text=True, timeout=timeout,
                       cwd=b.workdir)
    out = r.stdout + r.stderr
    assert r.returncode != 0, f"broker exited with 0:\n{out[-3000:]}"
    return out


def test_unreachable_etcd_at_startup_is_a_clear_error(tmp_path):
    dead = f"127.0.0.1:{free_port()}"
    b = Broker(tmp_path / "b", {"strata.metadata.backend": "etcd", "strata.etcd.endpoints": dead,
                                "strata.etcd.request.timeout.ms": "500"})
    out = start_expecting_failure(b, timeout=20)
    assert dead in out and "cannot load cluster metadata" in out, out[-3000:]


def test_a_duplicate_node_id_is_refused(etcd, broker_factory, tmp_path):
    first = broker_factory(config=etcd_config(etcd))
    dup = Broker(tmp_path / "dup", etcd_config(etcd))
    start = time.time()
    out = start_expecting_failure(dup, timeout=30)
    assert f"127.0.0.1:{first.port}" in out and "already registered by a live broker" in out, out
    assert time.time() - start >= TTL_MS / 1000  # it waited out one lease first
    # The first broker is untouched.
    kit.admin(first.bootstrap).list_topics(timeout=10)


def test_a_corrupt_record_is_logged_and_the_rest_served(etcd, broker_factory):
    b = broker_factory(config=etcd_config(etcd))
    good = kit.unique_topic("good")
    kit.create_topic(b.bootstrap, good, 1)
    etcd.etcdctl("put", f"{PREFIX}/topics/broken", "{not json")
    wait_until(lambda: f"{PREFIX}/topics/broken" in b.log_text(), 10,
               "a log line naming the corrupt record", lambda: b.log_text()[-2000:])
    assert "unreadable and ignored" in b.log_text()
    b.restart()  # loading past it works too
    topics = kit.admin(b.bootstrap).list_topics(timeout=10).topics
    assert good in topics and "broken" not in topics
    recs = kit.make_records(20, 1, seed=2, tag="after")
    kit.produce_confluent(b.bootstrap, good, recs)
    kit.assert_same_records(recs, kit.consume_confluent(b.bootstrap, good, 1))


def test_an_etcd_outage_stops_metadata_changes_but_not_produce_and_consume(etcd, broker_factory):
    b = broker_factory(config=etcd_config(etcd))
    topic = kit.unique_topic("outage")
    kit.create_topic(b.bootstrap, topic, 2)
    before = kit.make_records(100, 2, seed=3, tag="before")
    kit.produce_confluent(b.bootstrap, topic, before)

    etcd.stop_all()
    down_at = time.time()
    during = kit.make_records(100, 2, seed=4, tag="during")
    kit.produce_confluent(b.bootstrap, topic, during)
    kit.assert_same_records(before + during, kit.consume_confluent(b.bootstrap, topic, 2))
    a = kit.admin(b.bootstrap)
    fut = a.create_topics([NewTopic(kit.unique_topic("refused"), 1, 1)], request_timeout=20)
    with pytest.raises(KafkaException) as err:
        list(fut.values())[0].result(timeout=30)
    # REQUEST_TIMED_OUT: retriable, what Kafka answers when its controller cannot commit.
    assert err.value.args[0].code() == KafkaError.REQUEST_TIMED_OUT, err.value
    assert "etcd" in err.value.args[0].str()
    # Keep it down past the lease TTL, as an operator's etcd maintenance might.
    time.sleep(max(0.0, down_at + 2 * TTL_MS / 1000 - time.time()))
    assert b.running

    for i in range(len(etcd.members)):
        etcd.start(i)
    etcd.wait_healthy()
    after_topic = kit.unique_topic("after")
    kit.retry(lambda: kit.create_topic(b.bootstrap, after_topic, 1), timeout=30,
              what="topic creation once etcd is back")
    recs = kit.make_records(50, 1, seed=5, tag="after")
    kit.produce_confluent(b.bootstrap, after_topic, recs)
    kit.assert_same_records(recs, kit.consume_confluent(b.bootstrap, after_topic, 1))
    wait_until(lambda: f"{PREFIX}/brokers/1" in etcd.get_prefix(f"{PREFIX}/brokers/"), 20,
               "the broker registered in etcd again", lambda: b.log_text()[-2000:])




def test_kafka_cluster_tools_against_a_broker_on_etcd(etcd, broker_factory):
    """kafka-cluster cluster-id and kafka-broker-api-versions read what is in etcd."""
    b = broker_factory(config=etcd_config(etcd))

    def tool(main_class: str, *args: str) -> str:
        r = subprocess.run(["java", "-Xmx256m", "-cp", f"{kit.KAFKA_LIB}/*", main_class, *args],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, f"{main_class} {args}: {r.stdout}\n{r.stderr}"
        return r.stdout

    cluster_id = etcd.get_prefix(f"{PREFIX}/cluster_id")[f"{PREFIX}/cluster_id"]["value"]
    out = tool("org.apache.kafka.tools.ClusterTool", "cluster-id", "--bootstrap-server", b.bootstrap)
    assert f"Cluster ID: {cluster_id}" in out, out
    out = tool("org.apache.kafka.tools.BrokerApiVersionsCommand", "--bootstrap-server", b.bootstrap)
    assert f"127.0.0.1:{b.port} (id: 1 rack: null" in out, out
    assert "Metadata(3)" in out and "UNSUPPORTED" not in out.split("Metadata(3)")[1].split(",")[0], out
