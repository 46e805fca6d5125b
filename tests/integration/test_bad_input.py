"""Malformed and invalid input: raw-socket abuse of the wire protocol, and invalid admin
requests that must get Kafka's error codes. After every abuse the broker must still serve
normal clients.

Expectations follow Apache Kafka 4.1's behaviour (checked with STRATA_TEST_AGAINST_KAFKA=1):
  * oversized / negative frame size, truncated or unparsable request, unknown API key:
    the broker closes the connection without sending anything;
  * ApiVersions with an unsupported version: error 35 in a v0 body that lists ApiVersions,
    connection stays open;
  * acks=0 produce: no response at all; the next request's response comes first.
"""
from __future__ import annotations

import random
import socket
import struct

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic)

import kit
import rawkafka as raw

INVALID_TOPIC_EXCEPTION = 17
INVALID_PARTITIONS = 37
INVALID_REPLICATION_FACTOR = 38
INVALID_CONFIG = 40
UNSUPPORTED_VERSION = 35
CORRUPT_MESSAGE = 2
UNKNOWN_TOPIC_OR_PARTITION = 3

REQUIRED_APIS = {0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 18: "ApiVersions",
                 19: "CreateTopics", 20: "DeleteTopics", 21: "DeleteRecords",
                 22: "InitProducerId", 23: "OffsetForLeaderEpoch", 32: "DescribeConfigs",
                 33: "AlterConfigs", 35: "DescribeLogDirs", 37: "CreatePartitions",
                 44: "IncrementalAlterConfigs", 60: "DescribeCluster"}


def assert_still_serving(b) -> None:
    assert b.running, f"broker process died:\n{b.log_tail()}"
    md = kit.admin(b.bootstrap).list_topics(timeout=15)
    assert md.brokers, "metadata lists no broker"
    with raw.Conn(b.bootstrap) as c:
        assert raw.API_VERSIONS in c.api_versions(correlation_id=77)


def supported_version(b, api_key: int, preferred: list[int]) -> int:
    with raw.Conn(b.bootstrap) as c:
        lo, hi = c.api_versions()[api_key]
    for v in preferred:
        if lo <= v <= hi:
            return v
    pytest.fail(f"api {api_key}: none of {preferred} in supported range {lo}..{hi}")


# ---- wire-level abuse ----------------------------------------------------------------------

def test_api_versions_lists_required_apis(broker):
    with raw.Conn(broker.bootstrap) as c:
        apis = c.api_versions(correlation_id=12345)
    missing = {k: n for k, n in REQUIRED_APIS.items() if k not in apis}
    assert not missing, f"ApiVersions lacks {missing}"
    for k, (lo, hi) in apis.items():
        assert 0 <= lo <= hi, f"api {k}: bad range {lo}..{hi}"
    assert apis[raw.API_VERSIONS][0] == 0 and apis[raw.API_VERSIONS][1] >= 3


@pytest.mark.parametrize("size", [104857601, 0x7FFFFFFF, -1, -0x80000000],
                         ids=["max+1", "int32max", "minus1", "int32min"])
def test_bad_frame_size_closes_connection(broker, size):
    with raw.Conn(broker.bootstrap) as c:
        c.send(struct.pack(">i", size) + b"\x00" * 64)
        assert c.wait_closed() == b""
    assert_still_serving(broker)


def test_frame_over_configured_socket_request_max_bytes(broker_factory):
    b = broker_factory(config={"socket.request.max.bytes": 1048576})
    with raw.Conn(b.bootstrap) as c:
        c.send(struct.pack(">i", 1048577) + b"\x00" * 1024)
        assert c.wait_closed() == b""
    with raw.Conn(b.bootstrap) as c:  # at the limit is fine: the frame is read, then parsed
        assert raw.API_VERSIONS in c.api_versions()
    assert_still_serving(b)


def test_truncated_requests(broker):
    # 1. Frame announces 100 bytes, 20 arrive, then the client half-closes.
    with raw.Conn(broker.bootstrap) as c:
        c.send(struct.pack(">i", 100) + b"\x00\x03\x00\x04" + b"\x00" * 16)
        c.sock.shutdown(socket.SHUT_WR)
        assert c.wait_closed() == b""
    # 2. Complete frame whose request header is cut after the correlation id's first bytes.
    with raw.Conn(broker.bootstrap) as c:
        c.send(struct.pack(">i", 6) + struct.pack(">hhh", raw.API_METADATA, 4, 0))
        assert c.wait_closed() == b""
    # 3. Valid Metadata v4 header, body claims 5 topics but carries none.
    with raw.Conn(broker.bootstrap) as c:
        c.send(raw.request(raw.API_METADATA, 4, 9, body=struct.pack(">i", 5)))
        assert c.wait_closed() == b""
    # 4. Produce v7 header with a body cut in the middle of the topic name.
    with raw.Conn(broker.bootstrap) as c:
        body = raw.produce_body(7, "some-topic", 0, b"", acks=1)[:12]
        c.send(raw.request(raw.API_PRODUCE, 7, 10, body=body))
        assert c.wait_closed() == b""
    assert_still_serving(broker)


def test_random_garbage(broker):
    rnd = random.Random(20240229)
    # Framed junk whose api key (0xfff0) does not exist: must be dropped without a reply.
    with raw.Conn(broker.bootstrap) as c:
        junk = b"\xff\xf0" + rnd.randbytes(998)
        c.send(struct.pack(">i", len(junk)) + junk)
        assert c.wait_closed() == b""
    # Unframed random streams: whatever the broker makes of them, it must survive.
    for _ in range(20):
        try:
            with raw.Conn(broker.bootstrap, timeout=2) as c:
                c.send(rnd.randbytes(rnd.randint(1, 8192)))
                try:
                    c.wait_closed(timeout=1)
                except AssertionError:
                    pass  # broker waits for the rest of a plausible frame; we hang up
        except (ConnectionResetError, BrokenPipeError):
            pass
    assert_still_serving(broker)


def test_unknown_api_key(broker):
    with raw.Conn(broker.bootstrap) as c:
        c.send(raw.request(9999, 0, 42))
        assert c.wait_closed() == b"", "Kafka closes the connection on an unknown api key"
    assert_still_serving(broker)


def test_api_versions_unsupported_version(broker):
    with raw.Conn(broker.bootstrap) as c:
        # Version 99 would be flexible (header v2), as a future client would send it.
        c.send(raw.request(raw.API_VERSIONS, 99, 4711, body=b"\x00\x00\x00",
                           flexible_header=True))
        cid, body = c.recv_frame()
        assert cid == 4711
        code, apis = raw.parse_api_versions_v0(body)  # v0 body, header v0
        assert code == UNSUPPORTED_VERSION
        assert raw.API_VERSIONS in apis, apis
        lo, hi = apis[raw.API_VERSIONS]
        assert lo == 0 and hi >= 3
        # The client downgrades and retries on the same connection.
        assert raw.API_PRODUCE in c.api_versions(correlation_id=4712)
    assert_still_serving(broker)


def test_produce_acks0_sends_no_response(broker):
    topic = kit.unique_topic("bad-acks0")
    kit.create_topic(broker.bootstrap, topic, 1)
    version = supported_version(broker, raw.API_PRODUCE, [7, 8, 9, 10, 11])
    batch = raw.record_batch([(b"k0", b"v0", [("h", b"x")]), (None, b"v1", [])], kit.BASE_TS)
    with raw.Conn(broker.bootstrap) as c:
        c.send(raw.request(raw.API_PRODUCE, version, 500,
                           raw.produce_body(version, topic, 0, batch, acks=0),
                           flexible_header=version >= 9))
        c.send(raw.request(raw.API_VERSIONS, 0, 501))
        cid, body = c.recv_frame()
        assert cid == 501, f"first response has correlation id {cid}, not ApiVersions' 501"
        assert raw.parse_api_versions_v0(body)[0] == 0
    got = kit.consume_confluent(broker.bootstrap, topic, 1)[0]
    assert [(m.offset(), m.key(), m.value(), m.headers()) for m in got] == [
        (0, b"k0", b"v0", [("h", b"x")]), (1, None, b"v1", None)]


def test_produce_corrupt_crc_and_unknown_partition(broker):
    topic = kit.unique_topic("bad-crc")
    kit.create_topic(broker.bootstrap, topic, 1)
    version = supported_version(broker, raw.API_PRODUCE, [7, 8, 9, 10, 11])
    good = raw.record_batch([(b"k", b"v", [])], kit.BASE_TS)
    bad = bytearray(good)
    bad[-1] ^= 0x01  # flip a bit in the last record's bytes: CRC no longer matches

    def produce(partition: int, batch: bytes, cid: int):
        with raw.Conn(broker.bootstrap) as c:
            c.send(raw.request(raw.API_PRODUCE, version, cid,
                               raw.produce_body(version, topic, partition, batch, acks=1),
                               flexible_header=version >= 9))
            rcid, body = c.recv_frame()
            assert rcid == cid
            (res,) = raw.parse_produce_response(version, body)
            return res

    assert produce(0, bytes(bad), 1)[2] == CORRUPT_MESSAGE
    assert produce(7, good, 2)[2] == UNKNOWN_TOPIC_OR_PARTITION
    assert produce(0, good, 3)[2:] == (0, 0), "the corrupt batch must not have been appended"
    assert_still_serving(broker)


def test_record_larger_than_message_max_bytes(broker_factory):
    b = broker_factory(config={"message.max.bytes": 20000})
    topic = kit.unique_topic("bad-big")
    kit.create_topic(b.bootstrap, topic, 1)
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": b.bootstrap, "message.max.bytes": 1000000,
                  "compression.type": "none", "message.timeout.ms": 20000})
    results = []
    p.produce(topic, value=b"x" * 50000, partition=0, on_delivery=lambda e, m: results.append(e))
    assert p.flush(30) == 0
    p.produce(topic, value=b"y" * 100, partition=0, on_delivery=lambda e, m: results.append(e))
    assert p.flush(30) == 0
    assert results[0] is not None and results[0].code() == KafkaError.MSG_SIZE_TOO_LARGE, results
    assert results[1] is None, results
    got = kit.consume_confluent(b.bootstrap, topic, 1)[0]
    assert [(m.offset(), m.value()) for m in got] == [(0, b"y" * 100)]


# ---- invalid admin requests ------------------------------------------------------------

def _create_error(bootstrap: str, topic: NewTopic) -> int:
    a = kit.admin(bootstrap)  # keep a reference: a destroyed client fails its futures
    fs = a.create_topics([topic], operation_timeout=30, request_timeout=30)
    with pytest.raises(KafkaException) as e:
        fs[topic.topic].result(30)
    return e.value.args[0].code()


@pytest.mark.parametrize("name", ["a/b", "..", ".", "x" * 250, "with space", "ümlaut"],
                         ids=["slash", "dotdot", "dot", "250chars", "space", "nonascii"])
def test_invalid_topic_names(broker, name):
    assert _create_error(broker.bootstrap, NewTopic(name, 1, 1)) == INVALID_TOPIC_EXCEPTION
    assert_still_serving(broker)


def test_max_length_topic_name_is_valid(broker):
    name = "y" * 249
    kit.create_topic(broker.bootstrap, name, 1)
    recs = kit.make_records(10, 1, seed=1, tag="long")
    kit.produce_confluent(broker.bootstrap, name, recs)
    kit.assert_same_records(recs, kit.consume_confluent(broker.bootstrap, name, 1))


def test_invalid_partition_and_replication_counts(broker):
    # librdkafka refuses num_partitions=0 client-side, so that case goes over the raw wire.
    version = supported_version(broker, raw.API_CREATE_TOPICS, [4, 5, 6, 7])
    cases = [(0, 1, INVALID_PARTITIONS), (-5, 1, INVALID_PARTITIONS),
             (1, 0, INVALID_REPLICATION_FACTOR), (1, 3, INVALID_REPLICATION_FACTOR)]
    with raw.Conn(broker.bootstrap) as c:
        for i, (parts, rf, want) in enumerate(cases):
            name = kit.unique_topic("bad-count")
            c.send(raw.request(raw.API_CREATE_TOPICS, version, 100 + i,
                               raw.create_topics_body(version, name, parts, rf),
                               flexible_header=version >= 5))
            cid, body = c.recv_frame()
            assert cid == 100 + i
            (res,) = raw.parse_create_topics(version, body)
            assert res[:2] == (name, want), f"partitions={parts} rf={rf}: {res}"
    # Replication factor 3 on a one-broker cluster through the AdminClient as well.
    assert _create_error(broker.bootstrap, NewTopic(kit.unique_topic("bad-rf"), 1, 3)) == \
        INVALID_REPLICATION_FACTOR
    assert_still_serving(broker)


@pytest.mark.parametrize("config", [{"retention.ms": "abc"}, {"cleanup.policy": "bogus"},
                                    {"segment.bytes": "-1"}, {"no.such.config": "1"}],
                         ids=["non-numeric", "bad-enum", "below-minimum", "unknown-key"])
def test_invalid_config_on_create(broker, config):
    topic = kit.unique_topic("bad-cfg")
    assert _create_error(broker.bootstrap, NewTopic(topic, 1, 1, config=config)) == INVALID_CONFIG
    assert topic not in kit.admin(broker.bootstrap).list_topics(timeout=10).topics


def test_invalid_config_on_alter(broker):
    topic = kit.unique_topic("bad-alter")
    kit.create_topic(broker.bootstrap, topic, 1)
    a = kit.admin(broker.bootstrap)
    res = ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=[
        ConfigEntry("retention.ms", "notanumber", incremental_operation=AlterConfigOpType.SET)])
    with pytest.raises(KafkaException) as e:
        a.incremental_alter_configs([res])[res].result(30)
    assert e.value.args[0].code() == INVALID_CONFIG
    desc = ConfigResource(ConfigResource.Type.TOPIC, topic)
    assert a.describe_configs([desc])[desc].result(30)["retention.ms"].value == "604800000"
