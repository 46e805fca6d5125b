"""Apache Kafka 4.1.x command-line tools against the broker, run from the jars that
kafka-tools/pom.xml copies into kafka-tools/target/lib:

  kafka-topics.sh       = org.apache.kafka.tools.TopicCommand
  kafka-configs.sh      = kafka.admin.ConfigCommand
  kafka-get-offsets.sh  = org.apache.kafka.tools.GetOffsetShell
  kafka-dump-log.sh     = kafka.tools.DumpLogSegments   (reads segment files offline)
"""
from __future__ import annotations

import random
import re
import subprocess
import time
from pathlib import Path

import pytest

import kit

TOPIC_CMD = "org.apache.kafka.tools.TopicCommand"
CONFIG_CMD = "kafka.admin.ConfigCommand"
GET_OFFSETS = "org.apache.kafka.tools.GetOffsetShell"
DUMP_LOG = "kafka.tools.DumpLogSegments"


@pytest.fixture(scope="module", autouse=True)
def need_jars():
    if not list(kit.KAFKA_LIB.glob("kafka-tools-*.jar")):
        pytest.fail(f"Kafka tool jars missing in {kit.KAFKA_LIB}: run scripts/install-test-deps.sh")


def tool(main_class: str, *args: str, ok: bool = True, timeout: float = 120) -> str:
    r = subprocess.run(["java", "-Xmx512m", "-cp", f"{kit.KAFKA_LIB}/*", main_class, *args],
                       capture_output=True, text=True, timeout=timeout, errors="replace")
    out = r.stdout + r.stderr
    if ok:
        assert r.returncode == 0, f"{main_class} {' '.join(args)} -> {r.returncode}:\n{out[-6000:]}"
        assert not re.search(r"\bERROR\b|Exception", r.stderr), r.stderr[-6000:]
    return r.stdout


def test_kafka_topics_create_describe_alter_list_delete(broker):
    bs = broker.bootstrap
    topic = kit.unique_topic("cli-topics")
    tool(TOPIC_CMD, "--bootstrap-server", bs, "--create", "--topic", topic, "--partitions", "3",
         "--replication-factor", "1", "--config", "retention.ms=86400000")
    kit.wait_for_topic(kit.admin(bs), topic, 3)
    assert topic in tool(TOPIC_CMD, "--bootstrap-server", bs, "--list").split()

    out = tool(TOPIC_CMD, "--bootstrap-server", bs, "--describe", "--topic", topic)
    head = out.splitlines()[0]
    assert head.startswith(f"Topic: {topic}\t"), out
    assert "\tPartitionCount: 3\t" in head and "\tReplicationFactor: 1\t" in head, out
    assert "retention.ms=86400000" in head, out
    for p in range(3):
        assert re.search(rf"^\tTopic: {topic}\tPartition: {p}\tLeader: 1\tReplicas: 1\tIsr: 1\b",
                         out, re.M), out

    tool(TOPIC_CMD, "--bootstrap-server", bs, "--alter", "--topic", topic, "--partitions", "5")
    kit.wait_for_topic(kit.admin(bs), topic, 5)
    out = tool(TOPIC_CMD, "--bootstrap-server", bs, "--describe", "--topic", topic)
    assert "\tPartitionCount: 5\t" in out and "\tPartition: 4\tLeader: 1" in out, out

    tool(TOPIC_CMD, "--bootstrap-server", bs, "--delete", "--topic", topic)
    deadline = time.time() + 30
    while topic in tool(TOPIC_CMD, "--bootstrap-server", bs, "--list").split():
        assert time.time() < deadline, "topic still listed after --delete"
        time.sleep(0.5)


def test_kafka_configs_alter_describe_delete(broker):
    bs = broker.bootstrap
    topic = kit.unique_topic("cli-configs")
    kit.create_topic(bs, topic, 1)
    entity = ["--bootstrap-server", bs, "--entity-type", "topics", "--entity-name", topic]
    out = tool(CONFIG_CMD, *entity, "--alter", "--add-config", "retention.ms=1234567,segment.ms=3600000")
    assert f"Completed updating config for topic {topic}." in out, out

    out = tool(CONFIG_CMD, *entity, "--describe")
    assert f"Dynamic configs for topic {topic} are:" in out, out
    # Kafka 4.1 prints exactly "synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1234567}" here
    # (no DEFAULT_CONFIG entry: log.retention.ms has no default); only the first synonym,
    # the topic's own override, is required.
    assert re.search(r"^  retention\.ms=1234567 sensitive=false "
                     r"synonyms=\{DYNAMIC_TOPIC_CONFIG:retention\.ms=1234567[,}]", out, re.M), out
    assert re.search(r"^  segment\.ms=3600000 sensitive=false "
                     r"synonyms=\{DYNAMIC_TOPIC_CONFIG:segment\.ms=3600000[,}]", out, re.M), out

    out = tool(CONFIG_CMD, *entity, "--describe", "--all")
    # Kafka adds "synonyms={DEFAULT_CONFIG:log.cleanup.policy=delete}"; not required here.
    assert re.search(r"^  cleanup\.policy=delete sensitive=false synonyms=", out, re.M), out
    assert re.search(r"^  retention\.ms=1234567 sensitive=false", out, re.M), out

    tool(CONFIG_CMD, *entity, "--alter", "--delete-config", "retention.ms")
    out = tool(CONFIG_CMD, *entity, "--describe")
    assert "retention.ms=" not in out and "segment.ms=3600000" in out, out


def test_get_offsets(broker):
    bs = broker.bootstrap
    topic = kit.unique_topic("cli-offsets")
    kit.create_topic(bs, topic, 4)
    recs = []
    for n, codec in enumerate(kit.CODECS):
        chunk = kit.make_records(2000, 4, seed=40 + n, tag=codec)
        for r in chunk:
            r.timestamp = kit.BASE_TS + 2000 * n + r.index
        kit.produce_confluent(bs, topic, chunk, {"compression.type": codec})
        recs += chunk

    def offsets(*extra: str) -> dict[int, int]:
        out = tool(GET_OFFSETS, "--bootstrap-server", bs, "--topic", topic, *extra)
        got = {}
        for line in out.split():
            t, p, o = line.rsplit(":", 2)
            assert t == topic, out
            got[int(p)] = int(o)
        return got

    assert offsets() == {p: 2500 for p in range(4)}
    assert offsets("--time", "-1") == {p: 2500 for p in range(4)}
    assert offsets("--time", "-2") == {p: 0 for p in range(4)}
    assert offsets("--partitions", "1,3") == {1: 2500, 3: 2500}
    # Record i of chunk n has timestamp BASE_TS + 2000n + i and went to partition i % 4 at
    # offset 500n + i // 4. The first record at or after BASE_TS + 4000 + 1001 (chunk 2,
    # i = 1001..1004) is at offset 1000 + 1001 // 4 = 1250 in partitions 1..3 and at
    # 1000 + 1004 // 4 = 1251 in partition 0.
    assert offsets("--time", str(kit.BASE_TS + 5001)) == {0: 1251, 1: 1250, 2: 1250, 3: 1250}


# ---- kafka-dump-log (DumpLogSegments) ------------------------------------------------

BATCH_RE = re.compile(r"^baseOffset: (\d+) lastOffset: (\d+) count: (\d+) .*? position: (\d+) "
                      r"CreateTime: (\d+) size: (\d+) magic: 2 compresscodec: (\w+) crc: (-?\d+) "
                      r"isvalid: (\w+)$")
RECORD_RE = re.compile(r"^\| offset: (\d+) CreateTime: (\d+) keySize: (-?\d+) valueSize: (-?\d+) "
                       r"sequence: (-?\d+) headerKeys: \[([^\]]*)\] key: (\S+) payload: (.*)$")


def text_records(n: int, partitions: int, seed: int, tag: str) -> list[kit.Rec]:
    """Records whose key and value are printable ASCII, so the dump's text can be compared."""
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        value = kit.text_value(rnd, 400, 1400).strip() or "x"
        out.append(kit.Rec(i % partitions, f"key-{tag}-{i}".encode(), value.encode(),
                           [("idx", str(i).encode()), ("tag", tag.encode()), ("empty", b"")],
                           kit.BASE_TS + i, index=i))
    return out


def dump(files: list[Path]) -> dict[str, str]:
    """Runs DumpLogSegments once over `files`; returns {file name: its section of output}."""
    out = tool(DUMP_LOG, "--files", ",".join(map(str, files)), "--print-data-log")
    assert not re.search("mismatch", out, re.I), out[-6000:]
    assert "isvalid: false" not in out
    sections = re.split(r"^Dumping (\S+)$", out, flags=re.M)
    by_file = {Path(sections[i]).name: sections[i + 1] for i in range(1, len(sections), 2)}
    assert sorted(by_file) == sorted(f.name for f in files), out[:2000]
    return by_file


def check_log_dump(text: str, want: dict[int, kit.Rec]) -> tuple[list[int], set[str]]:
    """Checks every batch and record line of one .log dump against the produced records.
    Returns (offsets seen, codecs seen)."""
    offsets, codecs, pending = [], set(), 0
    for line in text.splitlines():
        if m := BATCH_RE.match(line):
            base, last, count = int(m[1]), int(m[2]), int(m[3])
            assert pending == 0, f"previous batch had {pending} records missing"
            assert m[9] == "true" and last - base + 1 == count, line[:300]
            codecs.add(m[7])
            pending = count
        elif line.startswith("| offset:"):
            m = RECORD_RE.match(line)
            assert m, line[:300]
            o = int(m[1])
            r = want[o]
            assert (int(m[2]), m[7].encode(), m[8].encode()) == (r.timestamp, r.key, r.value), (
                f"offset {o} differs in dump: {line[:200]}")
            assert (int(m[3]), int(m[4])) == (len(r.key), len(r.value))
            assert m[6].split(",") == [h[0] for h in r.headers]
            offsets.append(o)
            pending -= 1
        elif line.strip() and not line.startswith("Log starting offset:"):
            raise AssertionError(f"unexpected dump line: {line[:300]}")
    assert pending == 0
    return offsets, codecs


def _lines(text: str) -> list[str]:
    # DumpLogSegments prints "<file> is empty." for an index without entries.
    return [ln for ln in text.splitlines() if ln.strip() and not ln.endswith(" is empty.")]


def check_index_dumps(idx_text: str, tidx_text: str, seg_offsets: list[int],
                      want: dict[int, kit.Rec]) -> int:
    """Checks one segment's offset and time index dumps; returns the offset index's size."""
    entries = [(int(a), int(b)) for a, b in re.findall(r"^offset: (\d+) position: (\d+)$",
                                                      idx_text, re.M)]
    assert len(entries) == len(_lines(idx_text)), idx_text[:2000]
    for (o1, p1), (o2, p2) in zip(entries, entries[1:]):
        assert o1 < o2 and p1 < p2, f"index not increasing: {entries}"
    assert all(o in seg_offsets for o, _ in entries), entries
    tentries = [(int(a), int(b)) for a, b in re.findall(r"^timestamp: (\d+) offset: (\d+)$",
                                                       tidx_text, re.M)]
    assert len(tentries) == len(_lines(tidx_text)), tidx_text[:2000]
    for ts, o in tentries:
        assert o in seg_offsets and want[o].timestamp == ts, f"time index entry {ts}@{o}"
    return len(entries)


def test_dump_log_segments(broker_factory):
    b = broker_factory(config={"log.segment.bytes": 1048576})
    topic = kit.unique_topic("cli-dump")
    kit.create_topic(b.bootstrap, topic, 2)
    recs = text_records(10_000, 2, seed=77, tag="dump")
    chunk = len(recs) // len(kit.CODECS)
    for n, codec in enumerate(kit.CODECS):
        kit.produce_confluent(b.bootstrap, topic, recs[n * chunk:(n + 1) * chunk],
                              {"compression.type": codec})
    want = kit.expected_by_partition(recs)[0]
    pdir = b.partition_dir(topic, 0)

    # The first segment is rolled (>= 2 segments of 1 MiB): dump it while the broker runs.
    first = pdir / "00000000000000000000.log"
    assert first.exists(), sorted(p.name for p in pdir.iterdir())
    live = dump([first])
    live_offsets, _ = check_log_dump(live[first.name], want)
    assert live_offsets and live_offsets == list(range(len(live_offsets)))

    # After a clean stop every segment and index of the partition must dump cleanly.
    b.stop()
    logs = sorted(pdir.glob("*.log"))
    assert len(logs) >= 2, f"expected rolled segments: {sorted(p.name for p in pdir.iterdir())}"
    files = []
    for log in logs:
        files += [log, log.with_suffix(".index"), log.with_suffix(".timeindex")]
    sections = dump(files)
    all_offsets, all_codecs, index_entries = [], set(), 0
    for log in logs:
        offs, codecs = check_log_dump(sections[log.name], want)
        assert offs and offs[0] == int(log.stem), f"{log.name} starts at offset {offs[:1]}"
        index_entries += check_index_dumps(sections[log.with_suffix(".index").name],
                          sections[log.with_suffix(".timeindex").name], offs, want)
        all_offsets += offs
        all_codecs |= codecs
    assert all_offsets == sorted(want), "dumped offsets differ from produced offsets"
    assert index_entries > 0, "no offset index entries at all (log.index.interval.bytes=4096)"
    assert all_codecs == set(kit.CODECS), f"batches keep the producer's codec: {all_codecs}; " \
        + kit.CODEC_HINT


@pytest.mark.skipif(kit.against_kafka(), reason="Strata's embedded metadata store")
def test_metadata_quorum_describes_the_embedded_store(broker):
    # Embedded metadata: a quorum of one voter (id 0), leading; the broker observes.
    out = tool("org.apache.kafka.tools.MetadataQuorumCommand", "--bootstrap-server",
               broker.bootstrap, "describe", "--status")
    assert re.search(r"^LeaderId:\s+0$", out, re.M), out
    assert 'CurrentVoters:          [{"id": 0}]' in out, out
    assert re.search(r"^HighWatermark:\s+[1-9]\d*$", out, re.M), out
