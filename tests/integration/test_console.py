"""The web console in headless Chromium (Debian's chromium) against a live 3-broker cluster.

The console is one page served by each broker's admin listener from the binary; it reads the
admin API and renders it. The test loads it the way an operator's browser does (scripts run,
fetches go to the broker), and checks every figure it shows against the admin API read at the
same time: each broker's state, role, replicas and leaders, load samples against declared
capacity, each tiered topic's partitions, local bytes and offsets not yet uploaded, a throttled
reassignment while it copies, the balancer's state and decisions, and a consumer group's lag.
Screenshots are kept in tests/integration/artifacts/ (or $STRATA_TEST_ARTIFACTS).
"""
from __future__ import annotations

import html.parser
import json
import os
import shutil
import subprocess
import urllib.request
from pathlib import Path

import pytest
from confluent_kafka import TopicPartition
from confluent_kafka.admin import ConfigResource, NewTopic

import kit
from kit import wait_until
from test_cluster import start_cluster

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's own console")

CHROMIUM = shutil.which("chromium")
ARTIFACTS = Path(os.environ.get("STRATA_TEST_ARTIFACTS",
                                Path(__file__).resolve().parent / "artifacts"))
CAPACITY = 5_000_000  # declared network in, bytes/s


class Cells(html.parser.HTMLParser):
    """Rows of the rendered page: (table id, row key) -> {data-k: text}."""

    def __init__(self):
        super().__init__()
        self.rows: dict[tuple[str, str], dict[str, str]] = {}
        self.decisions = 0
        self.ready = False
        self._table = ""
        self._row = None
        self._key = None
        self._ids: dict[str, str] = {}
        self._id = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body" and a.get("data-ready") == "1":
            self.ready = True
        if tag == "table":
            self._table = a.get("id", "")
        if tag == "tr":
            key = next((v for k, v in a.items() if k.startswith("data-") and k != "data-k"), None)
            if a.get("data-k") == "decision":
                self.decisions += 1
            if key is not None:
                self._row = self.rows.setdefault((self._table, key), {})
        if tag == "td" and self._row is not None and "data-k" in a:
            self._key = a["data-k"]
            self._row[self._key] = ""
        if "id" in a and tag in ("b", "p"):
            self._id = a["id"]
            self._ids[self._id] = ""

    def handle_endtag(self, tag):
        if tag == "td":
            self._key = None
        if tag == "tr":
            self._row = None
        if tag in ("b", "p"):
            self._id = None

    def handle_data(self, data):
        if self._row is not None and self._key is not None:
            self._row[self._key] += data
        if self._id is not None:
            self._ids[self._id] += data


def chromium(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           "--disable-dev-shm-usage", *args],
                          capture_output=True, text=True, timeout=120)


def render(url: str) -> Cells:
    """The page after its scripts ran (their fetches and first render)."""
    r = chromium("--virtual-time-budget=5000", "--dump-dom", url)
    assert r.returncode == 0, r.stderr[-2000:]
    cells = Cells()
    cells.feed(r.stdout)
    return cells


def mib(n: int) -> str:
    """Bytes as the console writes them."""
    units = ["B", "KiB", "MiB", "GiB"]
    i, v = 0, float(n)
    while abs(v) >= 1024 and i < len(units) - 1:
        v /= 1024
        i += 1
    return f"{v:.1f} {units[i]}" if i else f"{n} B"


def api(admin: str, path: str):
    with urllib.request.urlopen(f"http://{admin}{path}", timeout=10) as r:
        return json.loads(r.read())


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed")
def test_the_console_shows_what_the_admin_api_says(tmp_path, broker_factory):
    extra = {"strata.balancer.enable": "true", "strata.balancer.metrics.interval.ms": "1000",
             "strata.balancer.cycle.interval.ms": "2000",
             "strata.broker.capacity.network.in.bytes.per.sec": str(CAPACITY)}
    etcd, brokers = start_cluster(tmp_path, broker_factory, extra=extra)
    try:
        check_console(brokers)
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()


def check_console(brokers):
    bs = brokers[0].bootstrap
    a = kit.admin(bs)
    tiered = kit.unique_topic("console")
    a.create_topics([NewTopic(tiered, 3, 3, config={
        "remote.storage.enable": "true", "segment.bytes": "262144", "retention.ms": "-1"})])[
        tiered].result(30)
    kit.wait_for_topic(a, tiered, 3)
    # Batches below segment.bytes: a larger one is refused (MESSAGE_TOO_LARGE), as by Kafka.
    kit.produce_confluent(bs, tiered, kit.make_records(3000, 3, seed=4, tag="console",
                                                       value_size=600),
                          extra={"batch.size": 65536})
    group = kit.unique_topic("console-grp")
    c = kit.consumer_confluent(bs, {"group.id": group})
    c.commit(offsets=[TopicPartition(tiered, p, 200) for p in range(3)], asynchronous=False)
    c.close()

    controller = api(brokers[0].config["strata.admin.listener"], "/v1/cluster")["controller_id"]
    ctl = next(b for b in brokers if int(b.config["node.id"]) == controller)
    admin = ctl.config["strata.admin.listener"]
    # Load samples of every broker on the controller, and uploads of the rolled segments.
    wait_until(lambda: len(api(admin, "/v1/balancer").get("broker_load", [])) == 3, 30,
               "a load sample of each broker", lambda: api(admin, "/v1/balancer"))
    def uploaded():
        return all(p.get("remote_log_end_offset", -1) >= 0
                   for t in api(admin, "/v1/topics") if t["name"] == tiered
                   for p in t["partitions"])
    wait_until(uploaded, 60, "uploads of every partition's rolled segments")

    url = f"http://{admin}/console"
    # The admin API moves on (samples every second): compare with what it said just before
    # and just after the page rendered, and accept either for moving figures.
    before_cluster, before_topics = api(admin, "/v1/cluster"), api(admin, "/v1/topics")
    page = render(url)
    after_cluster, after_topics = api(admin, "/v1/cluster"), api(admin, "/v1/topics")
    assert page.ready, "the console did not render (data-ready not set)"
    assert page._ids["controller"] == str(controller)
    assert page._ids["node"] == ctl.config["node.id"]
    for snapshot in (before_cluster, after_cluster):
        assert page._ids["cluster-id"] == snapshot["cluster_id"]
    for b in after_cluster["brokers"]:
        assert b["load"]["network_in_bytes_per_sec"] >= 0 and b["load"]["disk_capacity_bytes"] > 0
        row = page.rows[("brokers", str(b["node_id"]))]
        assert row["state"] == b["state"] and row["role"] == b["role"]
        assert row["address"] == f"{b['host']}:{b['port']}"
        assert f"of {CAPACITY / 1024 / 1024:.1f} MiB/s" in row["network-in"], row
        dist = page.rows[("distribution", str(b["node_id"]))]
        prior = next(x for x in before_cluster["brokers"] if x["node_id"] == b["node_id"])
        assert int(dist["replicas"]) in (prior["replicas"], b["replicas"])
        assert int(dist["leaders"]) in (prior["leaders"], b["leaders"])
    shown = page.rows[("tiering", tiered)]
    def figures(topics):
        t = next(t for t in topics if t["name"] == tiered)
        local = sum(p["size_bytes"] for p in t["partitions"])
        pending = sum(p["log_end_offset"] - (p.get("remote_log_end_offset", -1) + 1)
                      for p in t["partitions"])
        return {"partitions": str(len(t["partitions"])), "local-bytes": str(local),
                "not-uploaded": str(pending)}
    assert {k: shown[k] for k in ("partitions", "local-bytes", "not-uploaded")} in (
        figures(before_topics), figures(after_topics))
    assert int(shown["not-uploaded"]) < 3000  # uploads reached the page
    # The remote store as this broker sees it (/v1/remote): healthy, its uploads counted.
    remote = api(admin, "/v1/remote")
    store = page.rows[("remote-store", remote["backend"])]
    assert store["uri"] == remote["uri"] and store["breaker"] == "closed", store
    assert store["upload-failures"] == "0" and store["read-failures"] == "0", store
    assert int(store["uploads"]) <= remote["upload"]["segments"]

    # A consumer group with lag, shown by its coordinator's console.
    coord = next(b for b in brokers if any(g["group"] == group for g in api(
        b.config["strata.admin.listener"], "/v1/groups")))
    groups = {g["group"]: g for g in api(coord.config["strata.admin.listener"], "/v1/groups")}
    gpage = render(f"http://{coord.config['strata.admin.listener']}/console")
    grow = gpage.rows[("groups", group)]
    assert grow["state"] == groups[group]["state"] == "Empty"
    assert int(grow["lag"]) == groups[group]["total_lag"] == 3000 - 3 * 200

    # A reassignment copying at a throttle, as its leader's console shows it while it runs.
    moving = kit.unique_topic("console-move")
    a.create_topics([NewTopic(moving, 1, replica_assignment=[[controller]])])[moving].result(30)
    kit.wait_for_topic(a, moving, 1)
    kit.produce_confluent(bs, moving, kit.make_records(2000, 1, seed=6, tag="move",
                                                       value_size=2000))
    target = next(int(b.config["node.id"]) for b in brokers if b is not ctl)
    rate = 200_000  # bytes/s: ~2 MB copies for ~10 s
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry
    resources = [ConfigResource(ConfigResource.Type.BROKER, str(n), incremental_configs=[
        ConfigEntry(k, str(rate), incremental_operation=AlterConfigOpType.SET)
        for k in ("leader.replication.throttled.rate", "follower.replication.throttled.rate")])
        for n in (controller, target)]
    resources.append(ConfigResource(ConfigResource.Type.TOPIC, moving, incremental_configs=[
        ConfigEntry(k, "*", incremental_operation=AlterConfigOpType.SET)
        for k in ("leader.replication.throttled.replicas",
                  "follower.replication.throttled.replicas")]))
    for res in resources:  # one broker resource per call (librdkafka)
        for f in a.incremental_alter_configs([res]).values():
            f.result(30)
    started = subprocess.run([os.environ["STRATA_BIN"], "partition", "move", f"{moving}:0",
                              "--replicas", f"{controller},{target}", "--no-wait", "-b", bs],
                             capture_output=True, text=True, timeout=60)
    assert started.returncode == 0, started.stderr

    def copying():
        rows = [r for r in api(admin, "/v1/reassignments") if r["topic"] == moving]
        return rows and 0 < rows[0]["bytes_copied"] < rows[0]["bytes_total"] and rows[0]
    wait_until(copying, 30, "the copy under way", lambda: api(admin, "/v1/reassignments"))
    page = render(url)
    after = [r for r in api(admin, "/v1/reassignments") if r["topic"] == moving]
    row = page.rows[("reassignments", f"{moving}-0")]
    assert row["replica"] == str(target) and row["in-isr"] == "no", row
    assert after, "the reassignment ended before the page was checked"
    assert row["copied"].endswith(" of " + mib(after[0]["bytes_total"])), row

    # The balancer's state and recent decisions, as the controller's console shows them.
    before = api(admin, "/v1/balancer")
    page = render(url)
    after = api(admin, "/v1/balancer")
    assert page._ids["balancer-state"].startswith("enabled")
    assert page.decisions in (len(before["recent_decisions"]), len(after["recent_decisions"]))

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for name, where in (("controller", admin), ("coordinator", coord.config["strata.admin.listener"])):
        shot = ARTIFACTS / f"console-{name}.png"
        r = chromium("--virtual-time-budget=5000", "--window-size=1400,1600",
                     f"--screenshot={shot}", f"http://{where}/console")
        assert r.returncode == 0 and shot.stat().st_size > 10_000, r.stderr[-2000:]
