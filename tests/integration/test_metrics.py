"""Prometheus metrics of a live 3-broker cluster (real etcd, tiered topic, real clients).

What is checked: every broker's /metrics passes `promtool check metrics` (Debian's
prometheus package), counter and gauge types and names included; the per-topic counters
add up to what the clients did (messages in exactly, replication bytes exactly twice the
bytes in at RF 3, consumer bytes at least the bytes in); the metadata-session gauges show a
live lease and a watch that keeps up; and every metric the Grafana dashboard in
docs/grafana/ queries exists on a live broker.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import urllib.request
from pathlib import Path

import pytest
from confluent_kafka.admin import NewTopic

import kit
from kit import wait_until
from test_cluster import TTL_MS, start_cluster

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's own metrics")

REPO = Path(__file__).resolve().parents[2]
DASHBOARD = REPO / "docs" / "grafana" / "strata-dashboard.json"
PROMTOOL = shutil.which("promtool")


def scrape(b) -> str:
    url = f"http://{b.config['strata.admin.listener']}/metrics"
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()


def samples(text: str) -> dict[str, float]:
    """'name{labels}' (or 'name') -> value."""
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
            for line in text.splitlines() if line and not line.startswith("#")}


def families(text: str) -> set[str]:
    """The metric families a scrape declares (# TYPE lines)."""
    return set(re.findall(r"^# TYPE (\S+) ", text, re.M))


def topic_sum(texts: list[str], name: str, topic: str) -> float:
    key = f'{name}{{topic="{topic}"}}'
    return sum(samples(t).get(key, 0.0) for t in texts)


@pytest.fixture
def three(tmp_path, broker_factory):
    etcd, brokers = start_cluster(tmp_path, broker_factory)
    yield brokers
    for b in brokers:
        b.stop()
    etcd.stop_all()


@pytest.mark.skipif(PROMTOOL is None, reason="promtool (Debian's prometheus) not installed")
def test_metrics_pass_promtool_and_count_what_the_clients_did(three):
    b = three[0]
    topic = kit.unique_topic("metrics")
    a = kit.admin(b.bootstrap)
    # Not tiered: its followers copy everything (a tiered topic's new follower may start at
    # the leader's active segment, copying less than was produced).
    a.create_topics([NewTopic(topic, 3, 3, config={
        "retention.ms": "-1", "min.insync.replicas": "2"})])[topic].result(30)
    kit.wait_for_topic(a, topic, 3)
    recs = kit.make_records(3000, 3, seed=11, tag="metrics")
    kit.produce_confluent(b.bootstrap, topic, recs)
    got = kit.consume_confluent(b.bootstrap, topic, 3)
    assert sum(len(v) for v in got.values()) == len(recs)

    def texts() -> list[str]:
        return [scrape(x) for x in three]

    # Leaders count what producers appended, followers what they copied (verbatim, so the
    # same bytes twice at RF 3); counters are bumped after the append, so wait for them.
    def counted():
        t = texts()
        return (topic_sum(t, "strata_topic_messages_in_total", topic),
                topic_sum(t, "strata_topic_bytes_in_total", topic),
                topic_sum(t, "strata_topic_replication_bytes_in_total", topic),
                topic_sum(t, "strata_topic_bytes_out_total", topic))
    def seen():
        ends = {x.config["node.id"]: {p["partition"]: (p["log_end_offset"], p["isr"])
                                      for t in json.loads(urllib.request.urlopen(
                                          f"http://{x.config['strata.admin.listener']}/v1/topics",
                                          timeout=10).read()) if t["name"] == topic
                                      for p in t["partitions"]} for x in three}
        per = [{k: v for k, v in samples(t).items() if topic in k and "topic_" in k}
               for t in texts()]
        return counted(), ends, per
    wait_until(lambda: (lambda c: c[0] == len(recs) and c[2] == 2 * c[1] and c[3] >= c[1])(
        counted()), 30, "per-topic counters that add up to what the clients did", seen)
    messages, bytes_in, _, _ = counted()
    assert bytes_in > sum(len(r.value or b"") for r in recs)

    for x, text in zip(three, texts()):
        run = subprocess.run([PROMTOOL, "check", "metrics"], input=text, text=True,
                             capture_output=True, timeout=60)
        assert run.returncode == 0 and not run.stdout.strip() and not run.stderr.strip(), (
            f"broker {x.config['node.id']}: promtool check metrics exit {run.returncode}:\n"
            f"{run.stdout}{run.stderr}")
        s = samples(text)
        # A live session: the lease renewed within a TTL, the watch keeping up.
        assert s["strata_metadata_fenced"] == 0
        assert 0 <= s["strata_metadata_lease_age_seconds"] < TTL_MS / 1000
        assert s["strata_metadata_watch_lag_seconds"] < TTL_MS / 1000
        assert "strata_remote_read_seconds_count" in s


def dashboard_metrics() -> set[str]:
    """Every metric name the dashboard's queries use (histogram series by family)."""
    doc = json.loads(DASHBOARD.read_text())
    exprs = []

    def walk(panels):
        for p in panels:
            exprs.extend(t["expr"] for t in p.get("targets", []) if "expr" in t)
            walk(p.get("panels", []))
    walk(doc["panels"])
    assert exprs, "the dashboard has no queries"
    names = set()
    for e in exprs:
        for name in re.findall(r"\b((?:strata|process)_[a-z_]+)\b", e):
            names.add(re.sub(r"_(bucket|sum|count)$", "", name))
    return names


def test_every_metric_the_dashboard_queries_exists_on_a_live_broker(three):
    b = three[0]
    topic = kit.unique_topic("dash")
    a = kit.admin(b.bootstrap)
    a.create_topics([NewTopic(topic, 1, 3, config={
        "remote.storage.enable": "true"})])[topic].result(30)
    kit.wait_for_topic(a, topic, 1)
    kit.produce_confluent(b.bootstrap, topic, kit.make_records(10, 1, seed=3, tag="dash"))
    kit.consume_confluent(b.bootstrap, topic, 1)
    exported = set().union(*(families(scrape(x)) for x in three))
    wanted = dashboard_metrics()
    missing = sorted(wanted - exported)
    assert not missing, f"the dashboard queries metrics no broker exports: {missing}"
    # The dashboard covers each area the operator's guide names.
    for area in ("strata_topic_bytes_in_total", "strata_request_handle_seconds",
                 "strata_under_replicated_partitions", "strata_remote_upload_lag_bytes",
                 "strata_balancer_moves_in_flight", "strata_metadata_lease_age_seconds"):
        assert area in wanted, f"the dashboard does not show {area}"
