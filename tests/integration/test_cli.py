"""The `strata` CLI against a live 3-broker cluster (real etcd, real clients).

Every subcommand of topic, group, txn, cluster, partition and tier runs as an operator would
run it: human output checked for the figures, `--format json` parsed and compared with what the
cluster says through another client (confluent-kafka's admin API, the admin HTTP API), and
exit codes checked (0 done, 1 refused or unhealthy, 2 unreachable or bad arguments).
"""
from __future__ import annotations

import json
import os
import subprocess
import urllib.request

import pytest
from confluent_kafka import Producer, TopicPartition
from confluent_kafka.admin import ConfigResource

import kit
from kit import wait_until
from test_cluster import OFFLINE_WITHIN, metadata, start_cluster
from test_metrics import samples, scrape

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's own CLI")

STRATA = os.environ.get("STRATA_BIN", "")


def strata(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([STRATA, *args], capture_output=True, text=True, timeout=timeout)


def ok_json(*args: str):
    r = strata(*args, "--format", "json")
    assert r.returncode == 0, f"strata {' '.join(args)}: exit {r.returncode}: {r.stderr}"
    return json.loads(r.stdout)


@pytest.fixture
def three(tmp_path, broker_factory):
    etcd, brokers = start_cluster(tmp_path, broker_factory)
    yield brokers
    for b in brokers:
        b.stop()
    etcd.stop_all()


def admin_of(b) -> str:
    return b.config["strata.admin.listener"]


def test_topic_commands(three):
    bs = ["-b", three[1].bootstrap]
    topic = kit.unique_topic("cli")
    r = strata("topic", "create", topic, "-p", "4", "-r", "3", "-c", "retention.ms=3600000", *bs)
    assert r.returncode == 0, r.stderr
    assert topic in r.stdout and " 4 " in f" {r.stdout} "
    created = ok_json("topic", "describe", topic, *bs)
    md = metadata(three[0], topic).topics[topic]
    assert len(created["partitions"]) == 4 == len(md.partitions)
    for p in created["partitions"]:
        assert p["leader"] == md.partitions[p["partition"]].leader
        assert sorted(p["replicas"]) == sorted(md.partitions[p["partition"]].replicas)
        assert len(p["replicas"]) == 3
    assert created["configs"] == {"retention.ms": "3600000"}
    human = strata("topic", "describe", topic, *bs).stdout
    assert "retention.ms=3600000" in human and "PARTITION" in human

    # Created again: refused, exit 1, Kafka's error name.
    again = strata("topic", "create", topic, *bs)
    assert again.returncode == 1 and "TOPIC_ALREADY_EXISTS" in again.stdout

    listed = ok_json("topic", "list", *bs)
    assert {"name": topic, "partitions": 4, "replicas": 3, "internal": False} in listed
    assert not any(t["internal"] for t in listed)

    r = strata("topic", "alter", topic, "--set", "cleanup.policy=compact",
               "--delete", "retention.ms", *bs)
    assert r.returncode == 0, r.stderr
    a = kit.admin(three[0].bootstrap)
    res = ConfigResource(ConfigResource.Type.TOPIC, topic)
    configs = a.describe_configs([res])[res].result(30)
    assert configs["cleanup.policy"].value == "compact"
    assert configs["retention.ms"].is_default
    assert strata("topic", "alter", topic, *bs).returncode == 2  # nothing to change

    assert strata("topic", "delete", topic, *bs).returncode == 0
    wait_until(lambda: topic not in metadata(three[0]).topics, 30, "the topic gone")
    gone = strata("topic", "delete", topic, *bs)
    assert gone.returncode == 1 and "UNKNOWN_TOPIC_OR_PARTITION" in gone.stderr
    assert strata("topic", "describe", topic, *bs).returncode == 1
    # Nothing listening there: exit 2.
    assert strata("topic", "list", "-b", "127.0.0.1:1", "--timeout-ms", "2000").returncode == 2


def test_group_commands(three):
    bs = ["--bootstrap-server", three[0].bootstrap]  # Kafka's tools' spelling, beside -b
    topic = kit.unique_topic("cli-g")
    kit.create_topic(three[0].bootstrap, topic, 2)
    recs = kit.make_records(100, 2, seed=5, tag="cli")
    kit.produce_confluent(three[0].bootstrap, topic, recs)
    group = kit.unique_topic("grp")
    c = kit.consumer_confluent(three[0].bootstrap, {"group.id": group})
    c.commit(offsets=[TopicPartition(topic, 0, 30), TopicPartition(topic, 1, 50)],
             asynchronous=False)
    c.close()

    groups = {g["group"]: g for g in ok_json("group", "list", *bs)}
    assert groups[group]["state"] == "Empty"  # offsets only, no member ever: no protocol type
    internal = {t["name"]: t for t in ok_json("topic", "list", "--internal", *bs)}
    assert internal["__consumer_offsets"]["internal"]
    d = ok_json("group", "describe", group, *bs)
    assert d["state"] == "Empty" and d["members"] == 0
    rows = {p["partition"]: p for p in d["partitions"] if p["topic"] == topic}
    assert rows[0]["current_offset"] == 30 and rows[0]["log_end_offset"] == 50
    assert rows[0]["lag"] == 20 and rows[1]["lag"] == 0
    assert d["total_lag"] == 20
    assert "TOTAL-LAG    20" in strata("group", "describe", group, *bs).stdout

    plan = ok_json("group", "reset", group, "-t", topic, "--to-earliest", *bs)
    assert not plan["executed"]
    assert {p["partition"]: p["new_offset"] for p in plan["partitions"]} == {0: 0, 1: 0}
    assert ok_json("group", "describe", group, *bs)["total_lag"] == 20  # a plan changes nothing

    done = ok_json("group", "reset", group, "-t", topic, "--to-offset", "10", "--execute", *bs)
    assert done["executed"]
    committed = kit.consumer_confluent(three[0].bootstrap, {"group.id": group}).committed(
        [TopicPartition(topic, 0), TopicPartition(topic, 1)], timeout=30)
    assert [tp.offset for tp in committed] == [10, 10]
    assert ok_json("group", "describe", group, *bs)["total_lag"] == 80

    # A group with a live member cannot be reset: exit 1, and it says why.
    live = kit.consumer_confluent(three[0].bootstrap, {"group.id": group})
    live.subscribe([topic])
    try:
        wait_until(lambda: live.poll(0.2) is not None or live.assignment(), 30, "a member")
        refused = strata("group", "reset", group, "-t", topic, "--to-latest", "--execute", *bs)
        assert refused.returncode == 1 and "stop its consumers" in refused.stderr
    finally:
        live.close()
    assert strata("group", "reset", group, "-t", topic, *bs).returncode == 2  # no target


def test_txn_list_shows_an_open_transaction_until_its_id_expires(tmp_path, broker_factory):
    """A confluent-kafka transactional producer holds a transaction open: `strata txn list`
    shows it Ongoing with its partitions (so do its coordinator's /v1/transactions and the
    transaction metrics); committed it is CompleteCommit, and once unused for
    transactional.id.expiration.ms the id is gone."""
    etcd, brokers = start_cluster(tmp_path, broker_factory, extra={
        "transactional.id.expiration.ms": "15000",
        "transaction.remove.expired.transaction.cleanup.interval.ms": "1000"})
    try:
        bs = ["-b", brokers[1].bootstrap]
        topic = kit.unique_topic("cli-t")
        kit.create_topic(brokers[0].bootstrap, topic, 2)
        txn_id = kit.unique_topic("cli-txn")
        p = Producer({"bootstrap.servers": ",".join(b.bootstrap for b in brokers),
                      "transactional.id": txn_id, "transaction.timeout.ms": 120000})
        p.init_transactions(60)
        p.begin_transaction()
        for i in range(10):
            p.produce(topic, value=b"v%d" % i, partition=i % 2)
        p.flush(30)

        def row(state: str):
            rows = {r["transactional_id"]: r for r in ok_json("txn", "list", *bs)}
            r = rows.get(txn_id)
            return r if r and r["state"] == state else None
        listed = lambda: strata("txn", "list", *bs).stdout
        ongoing = wait_until(lambda: row("Ongoing"), 30, "the open transaction listed", listed)
        assert [(q["topic"], q["partition"]) for q in ongoing["partitions"]] == [
            (topic, 0), (topic, 1)]
        assert ongoing["timeout_ms"] == 120000 and ongoing["producer_epoch"] >= 0
        assert ongoing["start_ms"] > 0 and ongoing["duration_ms"] >= 0
        assert txn_id in {r["transactional_id"]
                          for r in ok_json("txn", "list", "--state", "Ongoing", *bs)}
        assert txn_id not in {r["transactional_id"]
                              for r in ok_json("txn", "list", "--state", "Empty", *bs)}
        human = listed()
        assert txn_id in human and "Ongoing" in human and f"{topic}-0,{topic}-1" in human
        assert strata("transactions", "list", "--state", "Nope", *bs).returncode == 2

        coordinator = next(b for b in brokers
                           if int(b.config["node.id"]) == ongoing["coordinator"])
        via_http = {t["transactional_id"]: t for t in json.loads(urllib.request.urlopen(
            f"http://{admin_of(coordinator)}/v1/transactions", timeout=10).read())}
        assert via_http[txn_id]["state"] == "Ongoing"
        assert via_http[txn_id]["producer_id"] == ongoing["producer_id"]
        assert via_http[txn_id]["partitions"] == ongoing["partitions"]

        def summed(name: str) -> float:
            return sum(samples(scrape(b)).get(name, 0.0) for b in brokers)
        wait_until(lambda: summed("strata_transactions_open") == 1, 10, "one open transaction")
        assert samples(scrape(coordinator))["strata_transaction_oldest_open_age_seconds"] > 0

        p.commit_transaction(60)
        wait_until(lambda: row("CompleteCommit"), 10, "the transaction committed", listed)
        wait_until(lambda: summed("strata_transactions_open") == 0
                   and summed("strata_transactions_committed_total") == 1, 10,
                   "the commit counted")
        assert summed("strata_transactions_aborted_total") == 0
        assert summed("strata_transaction_markers_in_flight") == 0
        # Unused since: expired (a tombstone in __transaction_state) and gone.
        wait_until(lambda: txn_id not in {r["transactional_id"]
                                          for r in ok_json("txn", "list", *bs)},
                   40, "the idle transactional id expired", listed)
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()


def test_cluster_info_and_health(three):
    bs = ["-b", three[2].bootstrap]
    info = ok_json("cluster", "info", *bs)
    assert sorted(b["id"] for b in info["brokers"]) == [1, 2, 3]
    assert info["controller_id"] in (1, 2, 3)
    assert {b["port"] for b in info["brokers"]} == {b.port for b in three}
    topic = kit.unique_topic("cli-h")
    a = kit.admin(three[0].bootstrap)
    from confluent_kafka.admin import NewTopic
    a.create_topics([NewTopic(topic, 3, 3)])[topic].result(30)
    kit.wait_for_topic(a, topic, 3)
    wait_until(lambda: strata("cluster", "health", *bs, "--admin", admin_of(three[2]))
               .returncode == 0, 30, "a healthy cluster",
               lambda: strata("cluster", "health", *bs, "--admin", admin_of(three[2])).stdout)
    healthy = ok_json("cluster", "health", *bs, "--admin", admin_of(three[2]))
    assert healthy["healthy"] and healthy["admin_api"] and healthy["brokers"] == 3

    three[0].kill9()
    def unhealthy():
        r = strata("cluster", "health", *bs, "--admin", admin_of(three[2]), "--format", "json")
        return r.returncode == 1 and json.loads(r.stdout)
    wait_until(lambda: (lambda h: h and h["offline_brokers"] == [1]
                        and h["under_replicated_partitions"])(unhealthy()),
               OFFLINE_WITHIN + 30, "broker 1 offline and partitions under-replicated",
               lambda: strata("cluster", "health", *bs, "--admin", admin_of(three[2])).stdout)
    assert "HEALTHY                      no" in strata(
        "cluster", "health", *bs, "--admin", admin_of(three[2])).stdout
    three[0].start()


def test_partition_move_and_tier_status(three):
    bs = ["-b", three[0].bootstrap]
    topic = kit.unique_topic("cli-m")
    a = kit.admin(three[0].bootstrap)
    from confluent_kafka.admin import NewTopic
    a.create_topics([NewTopic(topic, 1, replica_assignment=[[1, 2]], config={
        "remote.storage.enable": "true", "segment.bytes": "1048576", "retention.ms": "-1"})])[
        topic].result(30)
    kit.wait_for_topic(a, topic, 1)
    recs = kit.make_records(3000, 1, seed=9, tag="cli-m", value_size=1000)
    kit.produce_confluent(three[0].bootstrap, topic, recs)

    moved = strata("partition", "move", f"{topic}:0", "--replicas", "3,1", *bs,
                   "--admin", admin_of(three[0]))
    assert moved.returncode == 0, moved.stderr
    assert "moved" in moved.stdout and "#" in moved.stderr  # the progress bar
    md = metadata(three[0], topic).topics[topic].partitions[0]
    assert sorted(md.replicas) == [1, 3]
    got = kit.consume_confluent(three[0].bootstrap, topic, 1)
    assert [m.value() for m in got[0]] == [r.value for r in recs]

    bad = strata("partition", "move", f"{topic}:0", "--replicas", "1,9", *bs)
    assert bad.returncode == 1 and bad.stderr.strip()
    assert strata("partition", "move", "no-colon", "--replicas", "1", *bs).returncode == 2

    # Uploads reach the rolled segments; tier status shows the leader's view.
    admins = ",".join(admin_of(b) for b in three)
    def uploaded():
        rows = ok_json("tier", "status", topic, "--admin", admins)
        return rows and rows[0].get("remote_log_end_offset", -1) >= 0 and rows[0]
    row = wait_until(uploaded, 60, "an uploaded segment in tier status",
                     lambda: strata("tier", "status", topic, "--admin", admins).stdout)
    assert row["log_end_offset"] == 3000
    assert row["offsets_not_uploaded"] == 3000 - (row["remote_log_end_offset"] + 1)
    assert row["leader"] == md.leader == row["reported_by"]
    human = strata("tier", "status", "--admin", admins).stdout  # every tiered topic
    assert topic in human and "REMOTE-END" in human

    # Each broker's store: the same file:// store, healthy, the leader's uploads counted.
    stores = {s["node_id"]: s for s in ok_json("tier", "stores", "--admin", admins)}
    assert sorted(stores) == [1, 2, 3]
    for s in stores.values():
        assert s["enabled"] and s["backend"] == "file" and s["breaker"] == "closed", s
        assert s["upload"]["failures"] == 0 and s["read"]["failures"] == 0, s
    leader = stores[row["leader"]]
    assert leader["upload"]["segments"] >= 1 and leader["upload"]["bytes"] > 0, leader
    human = strata("tier", "stores", "--admin", admins).stdout
    assert "BREAKER" in human and "file://" in human and "closed" in human, human


def test_balance_apply_and_simulate(three):
    """apply asks the active controller for a cycle now (the status counts it); simulate runs
    the real planner on a synthetic cluster and reports its figures."""
    ctl_id = ok_json("cluster", "info", "-b", three[0].bootstrap)["controller_id"]
    ctl = next(b for b in three if int(b.config["node.id"]) == ctl_id)
    before = ok_json("balance", "status", "--admin", admin_of(ctl))
    r = strata("balance", "apply", "--admin", admin_of(ctl))
    assert r.returncode == 0 and "cycle started" in r.stdout, r.stderr
    wait_until(lambda: ok_json("balance", "status", "--admin", admin_of(ctl))["cycles"]
               > before["cycles"], 30, "a cycle run by apply")
    assert strata("balance", "apply", "--admin", "127.0.0.1:1").returncode == 2

    sim = strata("balance", "simulate", "--brokers", "12", "--partitions", "2000",
                 "--racks", "3", "--json")
    assert sim.returncode == 0, sim.stderr
    report = json.loads(sim.stdout)
    assert report["brokers"] == 12 and report["partitions"] == 2000 and report["racks"] == 3
    goals = {g["goal"]: g for g in report["goals"]}
    assert goals["rack_aware"]["met_after"] and not report["violations"]
    net = goals["network_in"]
    assert net["max_after"] <= net["max_before"]
    ratio = report["network_in_max_over_avg"]
    assert ratio["after"] == pytest.approx(net["max_after"] / net["average"], rel=1e-3)
    assert ratio["before"] == pytest.approx(net["max_before"] / net["average"], rel=1e-3)
    assert ratio["after"] <= ratio["before"]
