"""Consumer groups with Apache Kafka's Java side: kafka-clients 4.1 consumers (classic
protocol, range and cooperative-sticky assignors) sharing a group with librdkafka
consumers, and Kafka's kafka-consumer-groups tool (list, describe with lag and members,
reset offsets --to-earliest/--to-offset/--shift-by, delete offsets, delete group).

The Java member is java/src/main/java/io/strata/it/GroupConsume.java. It is compiled here
(with the other java/src programs, fixture `java_classes`, also used by
test_cluster_clients.py) with javac against java/target/lib (so the test does not depend on
the jar being rebuilt);
it reports like the Python member of test_consumer_groups.py ("OWNED ...", "M p o",
"CLOSED") and stops on a "stop" line on stdin.
"""
from __future__ import annotations

import re
import subprocess
import threading
import time
from pathlib import Path

import pytest

import kit
from test_consumer_groups import (GROUP_CONFIG, BackgroundProducer, Member, admin_committed, balanced,
                                  end_offsets, new_topic, start_members, wait_all_consumed, wait_until)

GROUP_CMD = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
JAVA_SRC_DIR = kit.JAVA_DIR / "src" / "main" / "java" / "io" / "strata" / "it"


@pytest.fixture(scope="module")
def java_classes(tmp_path_factory) -> str:
    lib = kit.JAVA_DIR / "target" / "lib"
    if not list(lib.glob("kafka-clients-*.jar")):
        pytest.fail(f"{lib} has no kafka-clients jar: run scripts/install-test-deps.sh")
    out = tmp_path_factory.mktemp("java-classes")
    r = subprocess.run(["javac", "-d", str(out), "-cp", f"{lib}/*",
                        *map(str, sorted(JAVA_SRC_DIR.glob("*.java")))],
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    return f"{out}:{lib}/*"


@pytest.fixture(scope="module")
def tools_jars():
    if not list(kit.KAFKA_LIB.glob("kafka-tools-*.jar")):
        pytest.fail(f"Kafka tool jars missing in {kit.KAFKA_LIB}: run scripts/install-test-deps.sh")


class JavaMember(Member):
    """A GroupConsume process; same bookkeeping as the Python Member."""

    def __init__(self, classpath: str, bootstrap: str, group: str, topic: str, assignors: str,
                 session_ms: int = 6000, **extra):
        cmd = ["java", "-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", classpath,
               "io.strata.it.GroupConsume", "--bootstrap", bootstrap, "--group", group,
               "--topic", topic, "--assignors", assignors, "--session-ms", str(session_ms)]
        for k, v in extra.items():  # e.g. protocol="consumer"
            cmd += [f"--{k.replace('_', '-')}", str(v)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.lock = threading.Lock()
        self.consumed = set()
        self.consumed_by_topic = set()
        self.owned = set()
        self.owned_history = []
        self.errors = []
        self.closed = False
        self.stderr = ""
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def stop(self, timeout: float = 60) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.write("stop\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout)
        self.reader.join(5)
        assert self.closed, f"java consumer did not close cleanly: {self.stderr[-3000:]}"
        assert self.proc.returncode == 0, self.stderr[-3000:]


@pytest.fixture
def members():
    made: list = []
    yield made
    for m in made:
        if m.proc.poll() is None:
            m.proc.kill()
            m.proc.wait()


@pytest.fixture
def gbroker(broker_factory):
    return broker_factory(config=GROUP_CONFIG)


def test_java_and_librdkafka_members_share_a_range_group(gbroker, members, java_classes):
    bs = gbroker.bootstrap
    topic = new_topic(gbroker, "cg-java-range")
    group = kit.unique_topic("grp-java-range")
    producer = BackgroundProducer(bs, topic).start()
    (py,) = start_members(members, 1, bs, group, topic, strategy="range,roundrobin")
    java = JavaMember(java_classes, bs, group, topic, "range,cooperative-sticky")
    members.append(java)
    wait_until(lambda: balanced([py, java]), 90, "librdkafka + Java members with 6 partitions each")
    # "range" is the only protocol both support; range gives contiguous halves.
    assert sorted(sorted(m.snapshot()[0]) for m in (py, java)) == [list(range(6)), list(range(6, 12))]
    time.sleep(1)
    acked = producer.stop()
    wait_all_consumed([py, java], acked)
    py.stop()
    java.stop()
    assert admin_committed(bs, group, topic) == end_offsets(bs, topic)


def test_cooperative_sticky_group_of_java_and_librdkafka(gbroker, members, java_classes):
    bs = gbroker.bootstrap
    topic = new_topic(gbroker, "cg-java-coop")
    group = kit.unique_topic("grp-java-coop")
    producer = BackgroundProducer(bs, topic).start()
    j1 = JavaMember(java_classes, bs, group, topic, "cooperative-sticky")
    members.append(j1)
    wait_until(lambda: j1.snapshot()[0] == set(range(12)), 60, "first Java member owns everything")
    (py,) = start_members(members, 1, bs, group, topic, strategy="cooperative-sticky")
    wait_until(lambda: balanced([j1, py]), 60, "2 cooperative members")
    # Incremental rebalancing: the first member never gave up the partitions it kept.
    kept = j1.snapshot()[0]
    assert all(kept <= owned for _, owned in j1.owned_history[-3:] if owned), j1.owned_history
    j2 = JavaMember(java_classes, bs, group, topic, "cooperative-sticky")
    members.append(j2)
    wait_until(lambda: balanced([j1, py, j2]), 60, "3 cooperative members")
    time.sleep(1)
    acked = producer.stop()
    wait_all_consumed([j1, py, j2], acked)
    for m in (j2, py, j1):
        m.stop()
    assert admin_committed(bs, group, topic) == end_offsets(bs, topic)


# ---- kafka-consumer-groups ----------------------------------------------------------

def group_tool(*args: str) -> str:
    r = subprocess.run(["java", "-Xmx512m", "-cp", f"{kit.KAFKA_LIB}/*", GROUP_CMD, *args],
                       capture_output=True, text=True, timeout=120, errors="replace")
    out = r.stdout + r.stderr
    assert r.returncode == 0, f"kafka-consumer-groups {' '.join(args)} -> {r.returncode}:\n{out[-6000:]}"
    assert not re.search(r"\bERROR\b|Exception", r.stderr), r.stderr[-6000:]
    return r.stdout + r.stderr  # some notes (e.g. "has no active members") go to stderr


def rows(out: str, header_start: str) -> list[dict[str, str]]:
    """Parses the tool's whitespace-aligned table that starts with `header_start`."""
    lines = [l for l in out.splitlines() if l.strip()]
    start = next(i for i, l in enumerate(lines) if l.startswith(header_start))
    header = lines[start].split()
    return [dict(zip(header, l.split())) for l in lines[start + 1:] if len(l.split()) == len(header)]


def test_kafka_consumer_groups_tool(gbroker, members, tools_jars):
    bs = gbroker.bootstrap
    topic = new_topic(gbroker, "cg-tool", partitions=3)
    group = kit.unique_topic("grp-tool")
    kit.produce_confluent(bs, topic, kit.make_records(300, 3, seed=1, tag="tool"))
    (m,) = start_members(members, 1, bs, group, topic)
    wait_all_consumed([m], {(p, o) for p in range(3) for o in range(100)})

    assert group in group_tool("--bootstrap-server", bs, "--list").split()
    out = group_tool("--bootstrap-server", bs, "--describe", "--group", group, "--members")
    (member,) = rows(out, "GROUP")
    assert member["GROUP"] == group and member["HOST"] == "/127.0.0.1" and member["#PARTITIONS"] == "3", out
    out = group_tool("--bootstrap-server", bs, "--describe", "--group", group, "--state")
    (state,) = rows(out, "GROUP")
    assert state["STATE"] == "Stable" and state["ASSIGNMENT-STRATEGY"] == "range" and state["#MEMBERS"] == "1", out
    m.stop()

    kit.produce_confluent(bs, topic, kit.make_records(30, 3, seed=2, tag="more"))
    out = group_tool("--bootstrap-server", bs, "--describe", "--group", group)
    assert f"Consumer group '{group}' has no active members." in out, out
    lag = {int(r["PARTITION"]): r for r in rows(out, "GROUP")}
    assert sorted(lag) == [0, 1, 2], out
    for r in lag.values():
        assert (r["CURRENT-OFFSET"], r["LOG-END-OFFSET"], r["LAG"], r["CONSUMER-ID"]) == ("100", "110", "10", "-"), out

    reset = ["--bootstrap-server", bs, "--reset-offsets", "--group", group, "--topic", topic, "--execute"]
    group_tool(*reset, "--to-earliest")
    assert admin_committed(bs, group, topic, 3) == {0: 0, 1: 0, 2: 0}
    group_tool(*reset, "--to-offset", "5")
    assert admin_committed(bs, group, topic, 3) == {0: 5, 1: 5, 2: 5}
    out = group_tool(*reset, "--shift-by", "-2")
    assert admin_committed(bs, group, topic, 3) == {0: 3, 1: 3, 2: 3}
    assert rows(out, "GROUP")[0]["NEW-OFFSET"] == "3", out
    group_tool(*reset, "--shift-by", "1000")  # clamped to the log end
    assert admin_committed(bs, group, topic, 3) == {0: 110, 1: 110, 2: 110}
    group_tool("--bootstrap-server", bs, "--reset-offsets", "--group", group, "--topic", f"{topic}:1",
               "--to-offset", "50", "--execute")
    assert admin_committed(bs, group, topic, 3) == {0: 110, 1: 50, 2: 110}

    # A member resumes from the reset position.
    (again,) = start_members(members, 1, bs, group, topic)
    wait_all_consumed([again], {(1, o) for o in range(50, 110)})
    assert min(o for (p, o) in again.snapshot()[1] if p == 1) == 50
    again.stop()

    out = group_tool("--bootstrap-server", bs, "--delete-offsets", "--group", group, "--topic", topic)
    assert re.search(rf"{re.escape(topic)}\s+0\s+Successful", out), out
    assert admin_committed(bs, group, topic, 3) == {p: -1001 for p in range(3)}
    out = group_tool("--bootstrap-server", bs, "--delete", "--group", group)
    assert f"Deletion of requested consumer groups ('{group}') was successful." in out, out
    assert group not in group_tool("--bootstrap-server", bs, "--list").split()
