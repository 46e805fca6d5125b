"""Strata's admin HTTP API: Prometheus /metrics and the JSON state endpoints (Strata only)."""
import json
import re
import shutil
import subprocess
import urllib.request

import pytest

import kit
from conftest import free_port

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's own admin API")


def get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_metrics_and_state_follow_produced_data(broker_factory):
    admin_port = free_port()
    b = broker_factory(set_args={"strata.admin.listener": f"127.0.0.1:{admin_port}"})
    topic = kit.unique_topic("admin")
    kit.create_topic(b.bootstrap, topic, 3)
    recs = kit.make_records(3000, 3, seed=7, tag="admin")
    kit.produce_confluent(b.bootstrap, topic, recs)

    status, text = get(admin_port, "/metrics")
    assert status == 200
    ends = {int(m[1]): float(m[2]) for m in re.finditer(
        rf'^strata_log_end_offset{{topic="{topic}",partition="(\d+)"}} (\S+)$', text, re.M)}
    assert ends == {0: 1000, 1: 1000, 2: 1000}
    produce = re.search(r'^strata_requests_total{api="Produce"} (\d+)$', text, re.M)
    assert produce and int(produce[1]) >= 1
    # Every Produce request is timed: the histogram counts as many as the counter.
    timed = re.search(r'^strata_request_handle_seconds_count{api="Produce"} (\d+)$', text, re.M)
    assert timed and int(timed[1]) == int(produce[1])
    inf = re.search(r'^strata_request_handle_seconds_bucket{api="Produce",le="\+Inf"} (\d+)$',
                    text, re.M)
    assert inf and inf[1] == timed[1]
    assert re.search(r"^process_resident_memory_bytes \d", text, re.M)
    if shutil.which("promtool"):  # test_metrics.py checks a cluster's the same way
        run = subprocess.run(["promtool", "check", "metrics"], input=text, text=True,
                             capture_output=True, timeout=60)
        assert run.returncode == 0 and not (run.stdout + run.stderr).strip(), run.stdout

    status, body = get(admin_port, "/v1/topics")
    assert status == 200
    topics = {t["name"]: t for t in json.loads(body)}
    parts = sorted(topics[topic]["partitions"], key=lambda p: p["partition"])
    assert [p["log_end_offset"] for p in parts] == [1000, 1000, 1000]
    assert all(p["size_bytes"] > 0 for p in parts)

    status, body = get(admin_port, "/v1/cluster")
    assert status == 200 and json.loads(body)["brokers"][0]["port"] == b.port
    assert get(admin_port, "/nope")[0] == 404
