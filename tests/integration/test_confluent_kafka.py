"""confluent-kafka-python (bundled librdkafka) against the broker: Producer/Consumer data path
for every codec with and without idempotence, and the AdminClient operations."""
from __future__ import annotations

import time

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import (AlterConfigOpType, ConfigEntry, ConfigResource, ConfigSource,
                                   NewPartitions, NewTopic, OffsetSpec)

import kit

N = 10_000
PARTITIONS = 4


@pytest.mark.parametrize("idempotence", [True, False], ids=["idempotent", "plain"])
@pytest.mark.parametrize("codec", kit.CODECS)
def test_produce_consume_roundtrip(broker, codec, idempotence):
    topic = kit.unique_topic(f"ck-{codec}")
    kit.create_topic(broker.bootstrap, topic, PARTITIONS)
    recs = kit.make_records(N, PARTITIONS, seed=hash((codec, idempotence)) & 0xFFFF, tag=codec)
    kit.produce_confluent(broker.bootstrap, topic, recs,
                          {"compression.type": codec, "enable.idempotence": idempotence})
    got = kit.consume_confluent(broker.bootstrap, topic, PARTITIONS)
    assert sum(len(v) for v in got.values()) == N
    kit.assert_same_records(recs, got)
    kit.assert_stored_with(broker, topic, PARTITIONS, codec)


def _describe(a, topic: str) -> dict:
    res = ConfigResource(ConfigResource.Type.TOPIC, topic)
    return a.describe_configs([res])[res].result(30)


def _create(a, topic, partitions=1, config=None, validate_only=False):
    fs = a.create_topics([NewTopic(topic, partitions, 1, config=config or {})],
                         validate_only=validate_only, operation_timeout=30, request_timeout=30)
    return fs[topic].result(30)


def _error_code(excinfo) -> int:
    err = excinfo.value.args[0]
    assert isinstance(err, KafkaError), f"unexpected exception payload {err!r}"
    return err.code()


def test_create_topic_validate_only_then_with_configs(broker):
    a = kit.admin(broker.bootstrap)
    topic = kit.unique_topic("ck-create")
    _create(a, topic, 3, {"retention.ms": "123456"}, validate_only=True)
    time.sleep(0.5)
    assert topic not in a.list_topics(timeout=10).topics, "validate_only created the topic"

    _create(a, topic, 3, {"retention.ms": "123456", "cleanup.policy": "delete"})
    kit.wait_for_topic(a, topic, 3)
    md = a.list_topics(topic=topic, timeout=10).topics[topic]
    assert sorted(md.partitions) == [0, 1, 2]

    cfg = _describe(a, topic)
    assert cfg["retention.ms"].value == "123456"
    assert cfg["retention.ms"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    # Untouched keys report Kafka's defaults with source DEFAULT_CONFIG.
    for key, default in [("segment.bytes", "1073741824"), ("max.message.bytes", "1048588"),
                         ("compression.type", "producer"), ("retention.bytes", "-1")]:
        assert cfg[key].value == default, key
        assert cfg[key].source == ConfigSource.DEFAULT_CONFIG.value, key

    with pytest.raises(KafkaException) as e:
        _create(a, topic, 3)
    assert _error_code(e) == KafkaError.TOPIC_ALREADY_EXISTS


def test_static_broker_config_is_topic_default(broker_factory):
    b = broker_factory(config={"log.segment.bytes": 2097152, "log.retention.ms": 3600000})
    a = kit.admin(b.bootstrap)
    topic = kit.unique_topic("ck-static")
    kit.create_topic(b.bootstrap, topic, 1)
    cfg = _describe(a, topic)
    assert (cfg["segment.bytes"].value, cfg["segment.bytes"].source) == (
        "2097152", ConfigSource.STATIC_BROKER_CONFIG.value)
    assert (cfg["retention.ms"].value, cfg["retention.ms"].source) == (
        "3600000", ConfigSource.STATIC_BROKER_CONFIG.value)
    res = ConfigResource(ConfigResource.Type.BROKER, "1")
    bcfg = a.describe_configs([res])[res].result(30)
    assert bcfg["log.segment.bytes"].value == "2097152"
    assert bcfg["log.segment.bytes"].source == ConfigSource.STATIC_BROKER_CONFIG.value


def test_set_flag_overrides_config_file(broker_factory):
    """`strata serve --config F --set k=v`: --set wins over the file (Kafka mode folds it in)."""
    b = broker_factory(config={"log.segment.bytes": 2097152},
                       set_args={"log.segment.bytes": 3145728})
    topic = kit.unique_topic("ck-set")
    kit.create_topic(b.bootstrap, topic, 1)
    assert _describe(kit.admin(b.bootstrap), topic)["segment.bytes"].value == "3145728"


def test_alter_and_incremental_alter_configs(broker):
    a = kit.admin(broker.bootstrap)
    topic = kit.unique_topic("ck-alter")
    kit.create_topic(broker.bootstrap, topic, 1, {"cleanup.policy": "compact"})

    # Legacy AlterConfigs replaces the whole set: cleanup.policy falls back to its default.
    res = ConfigResource(ConfigResource.Type.TOPIC, topic, set_config={"retention.ms": "5000"})
    a.alter_configs([res])[res].result(30)
    cfg = _describe(a, topic)
    assert (cfg["retention.ms"].value, cfg["retention.ms"].source) == (
        "5000", ConfigSource.DYNAMIC_TOPIC_CONFIG.value)
    assert (cfg["cleanup.policy"].value, cfg["cleanup.policy"].source) == (
        "delete", ConfigSource.DEFAULT_CONFIG.value)

    # IncrementalAlterConfigs: SET one key, DELETE another.
    res = ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=[
        ConfigEntry("retention.bytes", "1048576", incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("retention.ms", None, incremental_operation=AlterConfigOpType.DELETE)])
    a.incremental_alter_configs([res])[res].result(30)
    cfg = _describe(a, topic)
    assert (cfg["retention.bytes"].value, cfg["retention.bytes"].source) == (
        "1048576", ConfigSource.DYNAMIC_TOPIC_CONFIG.value)
    assert (cfg["retention.ms"].value, cfg["retention.ms"].source) == (
        "604800000", ConfigSource.DEFAULT_CONFIG.value)


def test_create_partitions(broker):
    a = kit.admin(broker.bootstrap)
    topic = kit.unique_topic("ck-parts")
    kit.create_topic(broker.bootstrap, topic, 2)
    a.create_partitions([NewPartitions(topic, 5)], operation_timeout=30)[topic].result(30)
    kit.wait_for_topic(a, topic, 5)

    recs = kit.make_records(500, 5, seed=5, tag="parts")
    kit.produce_confluent(broker.bootstrap, topic, recs)
    got = kit.consume_confluent(broker.bootstrap, topic, 5)
    kit.assert_same_records(recs, got)
    assert [m.offset() for m in got[4]][:3] == [0, 1, 2]

    with pytest.raises(KafkaException) as e:  # shrinking is not allowed
        a.create_partitions([NewPartitions(topic, 3)])[topic].result(30)
    assert _error_code(e) == KafkaError.INVALID_PARTITIONS


def test_delete_topic_and_recreate_empty(broker):
    a = kit.admin(broker.bootstrap)
    topic = kit.unique_topic("ck-delete")
    kit.create_topic(broker.bootstrap, topic, 2)
    kit.produce_confluent(broker.bootstrap, topic, kit.make_records(200, 2, seed=6, tag="del"))
    a.delete_topics([topic], operation_timeout=30)[topic].result(30)

    deadline = time.time() + 30
    while topic in a.list_topics(timeout=10).topics:
        assert time.time() < deadline, "deleted topic still listed"
        time.sleep(0.2)

    while True:  # Kafka finishes deletion asynchronously; recreation may need a retry
        try:
            _create(a, topic, 2)
            break
        except KafkaException as e:
            if time.time() > deadline:
                raise
            assert e.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS, e
            time.sleep(0.5)
    kit.wait_for_topic(a, topic, 2)
    c = kit.consumer_confluent(broker.bootstrap)
    try:
        for p in range(2):
            assert c.get_watermark_offsets(TopicPartition(topic, p), timeout=10) == (0, 0)
    finally:
        c.close()
    recs = kit.make_records(100, 2, seed=7, tag="recreated")
    kit.produce_confluent(broker.bootstrap, topic, recs)
    kit.assert_same_records(recs, kit.consume_confluent(broker.bootstrap, topic, 2))


def _list_offsets(a, topic, spec_by_partition: dict) -> dict:
    req = {TopicPartition(topic, p): spec for p, spec in spec_by_partition.items()}
    fs = a.list_offsets(req, request_timeout=30)
    return {tp.partition: f.result(30) for tp, f in fs.items()}


def test_list_offsets(broker):
    a = kit.admin(broker.bootstrap)
    topic = kit.unique_topic("ck-offsets")
    kit.create_topic(broker.bootstrap, topic, 2)
    recs = kit.make_records(100, 1, seed=8, tag="ts")
    for i, r in enumerate(recs):
        r.timestamp = kit.BASE_TS + 10 * i
    kit.produce_confluent(broker.bootstrap, topic, recs, {"linger.ms": 0})

    def offsets(spec):
        return {p: r.offset for p, r in _list_offsets(a, topic, {0: spec, 1: spec}).items()}

    assert offsets(OffsetSpec.earliest()) == {0: 0, 1: 0}
    assert offsets(OffsetSpec.latest()) == {0: 100, 1: 0}
    # First offset whose timestamp is >= the one asked for.
    got = _list_offsets(a, topic, {0: OffsetSpec.for_timestamp(kit.BASE_TS + 55)})[0]
    assert (got.offset, got.timestamp) == (6, kit.BASE_TS + 60)
    got = _list_offsets(a, topic, {0: OffsetSpec.for_timestamp(kit.BASE_TS)})[0]
    assert (got.offset, got.timestamp) == (0, kit.BASE_TS)
    assert _list_offsets(a, topic, {0: OffsetSpec.for_timestamp(kit.BASE_TS + 5000)})[0].offset == -1
    got = _list_offsets(a, topic, {0: OffsetSpec.max_timestamp()})[0]
    assert (got.offset, got.timestamp) == (99, kit.BASE_TS + 990)

    c = kit.consumer_confluent(broker.bootstrap)
    try:
        res = c.offsets_for_times([TopicPartition(topic, 0, kit.BASE_TS + 101)], timeout=10)
        assert res[0].offset == 11
    finally:
        c.close()


def test_delete_records(broker_factory):
    b = broker_factory()
    a = kit.admin(b.bootstrap)
    topic = kit.unique_topic("ck-delrec")
    kit.create_topic(b.bootstrap, topic, 2)
    recs = kit.make_records(2000, 2, seed=9, tag="delrec")
    kit.produce_confluent(b.bootstrap, topic, recs, {"compression.type": "lz4"})

    fs = a.delete_records([TopicPartition(topic, 0, 400)], operation_timeout=30)
    assert fs[TopicPartition(topic, 0, 400)].result(30).low_watermark == 400
    with pytest.raises(KafkaException) as e:  # beyond the high watermark
        a.delete_records([TopicPartition(topic, 1, 5000)])[TopicPartition(topic, 1, 5000)].result(30)
    assert _error_code(e) == KafkaError.OFFSET_OUT_OF_RANGE

    def check():
        assert _list_offsets(a, topic, {0: OffsetSpec.earliest()})[0].offset == 400
        got = kit.consume_confluent(b.bootstrap, topic, 2)
        assert got[0][0].offset() == 400
        kit.assert_same_records([r for r in recs if r.partition == 1 or r.offset >= 400], got,
                                contiguous_from=None)

    check()
    b.restart()  # the new log start offset survives a restart
    a = kit.admin(b.bootstrap)
    kit.retry(check)
