"""Apache Kafka's Java clients (kafka-clients 4.1.x) against the broker.

The work is done by java/src/main/java/io/strata/it/ProduceConsume.java (built by
scripts/install-test-deps.sh): an idempotent acks=all producer per codec, then an assign()ed
consumer that compares key/value/headers/timestamp at the exact acknowledged offsets. It
prints a SUMMARY line and exits non-zero on any mismatch.
"""
from __future__ import annotations

import subprocess

import pytest

import kit

N = 10_000
PARTITIONS = 4


@pytest.fixture(scope="module", autouse=True)
def java_program_built():
    jar = kit.JAVA_DIR / "target" / "strata-it-java.jar"
    if not jar.exists():
        pytest.fail(f"{jar} missing: run scripts/install-test-deps.sh")


def run_java(bootstrap: str, topic: str, codec: str, idempotence: bool = True,
             records: int = N, partitions: int = PARTITIONS, extra: list[str] = ()) -> str:
    cmd = ["java", "-Xmx512m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
           "-cp", kit.JAVA_CLASSPATH, "io.strata.it.ProduceConsume",
           "--bootstrap", bootstrap, "--topic", topic, "--partitions", str(partitions),
           "--records", str(records), "--codec", codec,
           "--idempotence", str(idempotence).lower(), "--acks", "all", *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    out = r.stdout + r.stderr
    assert r.returncode == 0, f"ProduceConsume failed ({r.returncode}):\n{out[-8000:]}"
    return r.stdout


@pytest.mark.parametrize("codec", kit.CODECS)
def test_java_idempotent_producer_and_assign_consumer(broker, codec):
    topic = kit.unique_topic(f"java-{codec}")
    kit.create_topic(broker.bootstrap, topic, PARTITIONS)
    out = run_java(broker.bootstrap, topic, codec)
    assert (f"SUMMARY codec={codec} idempotence=true acks=all partitions={PARTITIONS} "
            f"produced={N} consumed={N} mismatches=0") in out, out
    kit.assert_stored_with(broker, topic, PARTITIONS, codec)


def test_java_non_idempotent_producer(broker):
    topic = kit.unique_topic("java-plain")
    kit.create_topic(broker.bootstrap, topic, PARTITIONS)
    out = run_java(broker.bootstrap, topic, "lz4", idempotence=False)
    assert f"produced={N} consumed={N} mismatches=0" in out, out


def test_java_written_batches_read_by_librdkafka(broker):
    """Records produced by the Java client are read by confluent-kafka with the same offsets
    and bytes (checks the broker does not depend on the writing client)."""
    topic = kit.unique_topic("java-cross")
    kit.create_topic(broker.bootstrap, topic, PARTITIONS)
    run_java(broker.bootstrap, topic, "snappy", records=2000)
    got = kit.consume_confluent(broker.bootstrap, topic, PARTITIONS)
    assert {p: len(v) for p, v in got.items()} == {p: 500 for p in range(PARTITIONS)}
    for p, msgs in got.items():
        assert [m.offset() for m in msgs] == list(range(500))
        for m in msgs:
            i = int(dict(m.headers())["idx"])
            assert i % PARTITIONS == p and m.timestamp()[1] == kit.BASE_TS + i
            assert ("codec", b"snappy") in m.headers()
