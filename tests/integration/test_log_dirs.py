"""DescribeLogDirs on three brokers, with Kafka 4.1's kafka-log-dirs (LogDirsCommand).

What is checked: `--describe --broker-list 1,2,3` lists each broker's one log dir (its
absolute log.dirs, no error) with exactly the replicas placed on it of an RF=2 topic, each
sized as the sum of that broker's .log files of the partition, offset lag 0 once the
followers caught up, and no future logs; `--topic-list` leaves the other topics out; an
unknown broker in `--broker-list` is refused by the tool. Raw DescribeLogDirs v0 (classic)
and v4 (flexible): only the partitions named (an unknown one left out), the same sizes,
the top-level error code 0 and the volume's TotalBytes and UsableBytes as statvfs gives
them; a log dir moved away under the broker is answered with KAFKA_STORAGE_ERROR and no
replicas, and normally again once it is back.
"""
from __future__ import annotations

import json
import os
import subprocess

import pytest
from confluent_kafka.admin import NewTopic

import kit
import rawkafka
from kit import wait_until
from test_cluster import cluster  # noqa: F401 (the 3-broker fixture)
from test_replication import JOIN_WITHIN, isr

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's cluster mode")

LOG_DIRS = "org.apache.kafka.tools.LogDirsCommand"
DESCRIBE_LOG_DIRS = 35
KAFKA_STORAGE_ERROR = 56
ASSIGNMENT = [[1, 2], [2, 3], [3, 1], [1, 3]]  # partition -> replicas


def log_dirs_tool(b, *args: str, ok: bool = True) -> tuple[int, str]:
    r = subprocess.run(["java", "-Xmx512m", "-cp", f"{kit.KAFKA_LIB}/*", LOG_DIRS,
                        "--bootstrap-server", b.bootstrap, "--describe", *args],
                       capture_output=True, text=True, timeout=120, errors="replace")
    out = r.stdout + r.stderr
    if ok:
        assert r.returncode == 0, f"kafka-log-dirs {' '.join(args)}:\n{out[-4000:]}"
    return r.returncode, out


def describe(b, *args: str) -> dict[int, list[dict]]:
    """broker id -> its logDirs, as the tool prints them."""
    _, out = log_dirs_tool(b, *args)
    assert "Received log directory information from brokers" in out, out
    [line] = [ln for ln in out.splitlines() if ln.startswith("{")]
    doc = json.loads(line)
    assert doc["version"] == 1, doc
    return {entry["broker"]: entry["logDirs"] for entry in doc["brokers"]}


def log_bytes(b, topic: str, p: int) -> int:
    return sum(f.stat().st_size for f in b.partition_dir(topic, p).glob("*.log"))


def replicas_on(node: int) -> set[int]:
    return {p for p, replicas in enumerate(ASSIGNMENT) if node in replicas}


def create(b, topic: str, assignment: list[list[int]]) -> None:
    a = kit.admin(b.bootstrap)
    a.create_topics([NewTopic(topic, len(assignment), replica_assignment=assignment,
                              config={"min.insync.replicas": "1"})])[topic].result(timeout=30)
    want = {p: sorted(r) for p, r in enumerate(assignment)}
    wait_until(lambda: isr(b, topic) == want, JOIN_WITHIN, f"{topic}: ISRs full",
               lambda: isr(b, topic))


def produce_and_replicate(by_node: dict, topic: str, assignment: list[list[int]], n: int,
                          seed: int) -> None:
    """Produces `n` records with acks=all, then waits until every replica of every partition
    holds the same .log bytes."""
    b = next(iter(by_node.values()))
    kit.produce_confluent(b.bootstrap, topic, kit.make_records(n, len(assignment), seed=seed,
                                                               tag=topic))

    def sizes():
        return {p: {r: log_bytes(by_node[r], topic, p) for r in replicas}
                for p, replicas in enumerate(assignment)}
    wait_until(lambda: all(len(set(s.values())) == 1 and min(s.values()) > 0
                           for s in sizes().values()), JOIN_WITHIN, "replicas caught up", sizes)


def test_kafka_log_dirs_describes_every_broker_replica(cluster):
    by_node = {int(b.config["node.id"]): b for b in cluster}
    topic, other = kit.unique_topic("logdirs"), kit.unique_topic("logdirs-other")
    create(cluster[0], topic, ASSIGNMENT)
    create(cluster[0], other, [[2, 3]])
    produce_and_replicate(by_node, topic, ASSIGNMENT, 400, seed=71)
    produce_and_replicate(by_node, other, [[2, 3]], 50, seed=72)

    def check_all() -> str | None:
        """None when every broker's answer is right, else what is wrong."""
        dirs = describe(cluster[1], "--broker-list", "1,2,3")
        if set(dirs) != {1, 2, 3}:
            return f"brokers {sorted(dirs)}"
        for node, b in by_node.items():
            [d] = dirs[node]
            assert d["logDir"] == os.path.abspath(b.data_dir), (node, d["logDir"])
            assert d["error"] is None, (node, d)
            got = {e["partition"]: e for e in d["partitions"]}
            mine = {k: v for k, v in got.items() if k.startswith(f"{topic}-")}
            want = {f"{topic}-{p}" for p in replicas_on(node)}
            assert set(mine) == want, (node, sorted(mine), sorted(want))
            for p in replicas_on(node):
                e = mine[f"{topic}-{p}"]
                assert e["isFuture"] is False, e
                if e["size"] != log_bytes(b, topic, p) or e["offsetLag"] != 0:
                    return f"broker {node} {e} vs {log_bytes(b, topic, p)} bytes on disk"
            assert (f"{other}-0" in got) == (node in (2, 3)), (node, sorted(got))
        return None
    last: dict[str, str | None] = {}

    def matches() -> bool:
        last["problem"] = check_all()
        return last["problem"] is None
    wait_until(matches, 30, "kafka-log-dirs matches the disk", lambda: last.get("problem"))

    # --topic-list: only that topic's replicas, from every broker (the tool filters).
    dirs = describe(cluster[2], "--topic-list", topic)
    assert set(dirs) == {1, 2, 3}, dirs
    for node, b in by_node.items():
        [d] = dirs[node]
        assert d["error"] is None, d
        got = {e["partition"]: e["size"] for e in d["partitions"]}
        assert got == {f"{topic}-{p}": log_bytes(b, topic, p) for p in replicas_on(node)}, got

    code, out = log_dirs_tool(cluster[0], "--broker-list", "1,7", ok=False)
    assert code != 0 and "The given brokers do not exist from --broker-list: 7" in out, out


# ---- raw DescribeLogDirs ------------------------------------------------------------------

def request_body(version: int, topics: dict[str, list[int]] | None) -> bytes:
    w = rawkafka.Writer(flexible=version >= 2)
    if topics is None:  # null: every topic
        if w.flexible:
            w.uvarint(0)
        else:
            w.i32(-1)
    else:
        w.array(list(topics.items()), lambda w, t: w.string(t[0])
                .array(t[1], lambda w, p: w.i32(p)).tags())
    return bytes(w.tags().buf)


def parse_response(version: int, body: bytes) -> tuple[int, list[dict]]:
    """(top-level error code, [{error, dir, partitions: {(topic, p): (size, lag, future)},
    total, usable}])."""
    r = rawkafka.Reader(body, flexible=version >= 2)
    r.skip_tags()  # response header v1
    r.i32()  # throttle
    top_error = r.i16() if version >= 3 else 0
    results = []
    for _ in range(r.array_len()):
        res = {"error": r.i16(), "dir": r.string(), "partitions": {}}
        for _ in range(r.array_len()):
            name = r.string()
            for _ in range(r.array_len()):
                p, size, lag, future = r.i32(), r.i64(), r.i64(), r.i8()
                res["partitions"][(name, p)] = (size, lag, future)
                r.skip_tags()
            r.skip_tags()
        if version >= 4:
            res["total"], res["usable"] = r.i64(), r.i64()
        r.skip_tags()
        results.append(res)
    r.skip_tags()
    assert r.pos == len(body), f"{len(body) - r.pos} bytes left over"
    return top_error, results


def describe_raw(b, version: int, topics: dict[str, list[int]] | None):
    with rawkafka.Conn(b.bootstrap) as c:
        c.send(rawkafka.request(DESCRIBE_LOG_DIRS, version, 9, request_body(version, topics),
                                flexible_header=version >= 2))
        cid, body = c.recv_frame()
    assert cid == 9
    return parse_response(version, body)


def test_raw_describe_log_dirs_versions(cluster):
    by_node = {int(b.config["node.id"]): b for b in cluster}
    topic = kit.unique_topic("logdirs-raw")
    create(cluster[0], topic, ASSIGNMENT)
    produce_and_replicate(by_node, topic, ASSIGNMENT, 200, seed=73)
    b1 = by_node[1]
    with rawkafka.Conn(b1.bootstrap) as c:
        assert c.api_versions()[DESCRIBE_LOG_DIRS] == (0, 4)

    named = {topic: [0, 1, 2, 3, 9], kit.unique_topic("absent"): [0]}
    want = {(topic, p): log_bytes(b1, topic, p) for p in replicas_on(1)}
    for version in (0, 1, 2, 3, 4):
        top_error, [res] = describe_raw(b1, version, named)
        assert (top_error, res["error"]) == (0, 0), (version, top_error, res)
        assert res["dir"] == os.path.abspath(b1.data_dir), res
        sizes = {tp: size for tp, (size, _, _) in res["partitions"].items()}
        assert sizes == want, (version, sizes, want)
        assert all(future == 0 for _, _, future in res["partitions"].values()), res
        if version >= 4:
            fs = os.statvfs(b1.data_dir)
            assert res["total"] == fs.f_blocks * fs.f_frsize, res
            assert 0 < res["usable"] <= res["total"], res
            assert abs(res["usable"] - fs.f_bavail * fs.f_frsize) < 256 << 20, res
        else:
            assert "total" not in res

    # Null topics: every replica on the broker, this topic's among them.
    _, [res] = describe_raw(b1, 4, None)
    mine = {tp: v[0] for tp, v in res["partitions"].items() if tp[0] == topic}
    assert mine == want, mine

    # A log dir that cannot be read (moved away under the running broker for a moment) is
    # answered with KAFKA_STORAGE_ERROR and no replicas, as Kafka answers for an offline dir.
    b3 = by_node[3]
    moved = b3.data_dir.with_name("data.moved")
    b3.data_dir.rename(moved)
    try:
        top_error, [res] = describe_raw(b3, 4, None)
    finally:
        moved.rename(b3.data_dir)
    assert (top_error, res["error"]) == (0, KAFKA_STORAGE_ERROR), res
    assert res["dir"] == os.path.abspath(b3.data_dir), res
    assert (res["partitions"], res["total"], res["usable"]) == ({}, -1, -1), res
    _, [res] = describe_raw(b3, 4, {topic: [1, 2, 3]})
    assert res["error"] == 0, res
    assert {tp[1] for tp in res["partitions"]} == replicas_on(3), res
