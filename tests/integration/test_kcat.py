"""kcat 1.7.1 (Debian's, on librdkafka 2.0.2) against the broker: produce with -z codec,
-K key delimiter and -H headers, consume with -o beginning -e and a format string, -L
metadata listing and -Q offset-by-timestamp queries."""
from __future__ import annotations

import random
import re
import shutil
import subprocess
import time

import pytest

import kit

N = 10_000
PARTITIONS = 4
FMT = r"%p|%o|%K|%S|%T|%k|%s|%h\n"  # fields are '|'-free by construction, except headers last


@pytest.fixture(scope="module", autouse=True)
def need_kcat():
    if shutil.which("kcat") is None:
        pytest.fail("kcat not installed: run scripts/install-test-deps.sh")


def kcat(*args: str, stdin: str | None = None, timeout: float = 120) -> str:
    r = subprocess.run(["kcat", *args], input=stdin, capture_output=True, text=True,
                       timeout=timeout)
    assert r.returncode == 0, f"kcat {' '.join(args)} failed ({r.returncode}):\n{r.stderr[-4000:]}"
    assert "ERROR" not in r.stderr, r.stderr[-4000:]
    return r.stdout


def make_lines(codec: str, partition: int, count: int, seed: int) -> list[tuple[str, str]]:
    """(key, value) pairs; values may contain the key delimiter ':' (only the first splits)."""
    rnd = random.Random(seed)
    out = []
    for i in range(count):
        key = f"k-{codec}-{partition}-{i}-{rnd.getrandbits(24):06x}"
        value = kit.text_value(rnd, 1, 300).replace(" ", ":", i % 3) or "v"
        out.append((key, value))
    return out


def parse(out: str) -> dict[int, list[tuple]]:
    got: dict[int, list[tuple]] = {}
    for line in out.splitlines():
        p, o, klen, vlen, ts, rest = line.split("|", 5)
        k, v, h = rest.split("|", 2)
        assert (int(klen), int(vlen)) == (len(k), len(v)), f"length fields disagree: {line}"
        got.setdefault(int(p), []).append((int(o), k, v, h, int(ts)))
    return got


@pytest.mark.parametrize("codec", kit.CODECS)
def test_kcat_produce_consume(broker, codec):
    topic = kit.unique_topic(f"kcat-{codec}")
    kit.create_topic(broker.bootstrap, topic, PARTITIONS)
    started_ms = int(time.time() * 1000)
    sent = {}
    for p in range(PARTITIONS):
        lines = make_lines(codec, p, N // PARTITIONS, seed=p * 31 + len(codec))
        sent[p] = lines
        kcat("-P", "-b", broker.bootstrap, "-t", topic, "-p", str(p), "-z", codec, "-K", ":",
             "-H", f"codec={codec}", "-H", f"part={p}", "-H", "empty=",
             "-X", "acks=all", "-X", "linger.ms=5",
             stdin="".join(f"{k}:{v}\n" for k, v in lines))

    out = kcat("-C", "-b", broker.bootstrap, "-t", topic, "-o", "beginning", "-e", "-q",
               "-f", FMT)
    got = parse(out)
    assert sorted(got) == list(range(PARTITIONS))
    for p in range(PARTITIONS):
        # One kcat per partition on a fresh topic: the i-th line must be at offset i.
        assert [g[0] for g in got[p]] == list(range(len(sent[p]))), f"partition {p} offsets"
        for (o, k, v, h, ts), (ek, ev) in zip(got[p], sent[p]):
            assert (k, v) == (ek, ev), f"partition {p} offset {o}"
            assert h == f"codec={codec},part={p},empty=", f"partition {p} offset {o}: {h}"
            assert started_ms - 60_000 <= ts <= int(time.time() * 1000) + 60_000
    kit.assert_stored_with(broker, topic, PARTITIONS, codec)


def test_kcat_metadata_listing(broker):
    topic = kit.unique_topic("kcat-meta")
    kit.create_topic(broker.bootstrap, topic, PARTITIONS)
    out = kcat("-L", "-b", broker.bootstrap, "-t", topic)
    assert re.search(r"^ 1 brokers:$", out, re.M), out
    assert re.search(rf"^  broker \d+ at 127\.0\.0\.1:{broker.port}\b", out, re.M), out
    assert f'topic "{topic}" with {PARTITIONS} partitions:' in out, out
    for p in range(PARTITIONS):
        assert re.search(rf"^    partition {p}, leader \d+, replicas: \d+, isrs: \d+$", out, re.M), out
    full = kcat("-L", "-b", broker.bootstrap)
    assert f'topic "{topic}" with {PARTITIONS} partitions:' in full


def test_kcat_query_offsets_by_timestamp(broker):
    topic = kit.unique_topic("kcat-query")
    kit.create_topic(broker.bootstrap, topic, 1)
    recs = kit.make_records(50, 1, seed=3, tag="q")
    for i, r in enumerate(recs):
        r.timestamp = kit.BASE_TS + 1000 * i
    kit.produce_confluent(broker.bootstrap, topic, recs)
    out = kcat("-Q", "-b", broker.bootstrap, "-t", f"{topic}:0:{kit.BASE_TS + 7500}")
    assert re.search(rf"^{re.escape(topic)} \[0\] offset 8$", out, re.M), out
    out = kcat("-Q", "-b", broker.bootstrap, "-t", f"{topic}:0:-1")  # -1: latest
    assert re.search(rf"^{re.escape(topic)} \[0\] offset 50$", out, re.M), out
