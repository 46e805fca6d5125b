"""Self-healing as a cluster started with the defaults does it: four brokers on one etcd with no
balancer setting but shorter failure timeouts (the defaults are 60 s and 10 min; the
mechanism is the same).

- A SIGKILLed broker's replicas are re-placed on the others once
  strata.balancer.broker.failure.timeout.ms passes (strata.balancer.enable and
  strata.balancer.self.healing.enable are on by default), with every acknowledged record
  readable afterwards. The heal time is recorded as a test property.
- A broker stopped cleanly (SIGTERM) is expected back, as in a rolling restart: nothing moves
  past the failure timeout; it is re-placed only after strata.balancer.broker.shutdown.grace.ms.
- Both switches are dynamic: with both off a dead broker keeps its replicas past the timeout;
  with balancing off and self-healing on, it is healed.
"""
from __future__ import annotations

import time

import pytest
from confluent_kafka.admin import NewTopic

import kit
from kit import wait_until
from test_balancer import admin_get, controller_of
from test_cluster import leaders, metadata, start_cluster
from test_replication import JOIN_WITHIN, isr

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's autobalancer")

FAILURE_MS = 4000   # strata.balancer.broker.failure.timeout.ms
GRACE_MS = 20000    # strata.balancer.broker.shutdown.grace.ms
TICK_S = 2          # the balancer thread looks at gone brokers every 2 s
# Past the timeout, the next tick plans; each move copies an active segment and joins the ISR.
HEAL_WITHIN = TICK_S * 2 + JOIN_WITHIN + 30
TIMEOUTS = {"strata.balancer.broker.failure.timeout.ms": str(FAILURE_MS),
            "strata.balancer.broker.shutdown.grace.ms": str(GRACE_MS)}
NODES = (1, 2, 3, 4)


def metrics_isr(b) -> list[int]:
    """The ISR of the balancer's load-sample topic (empty until the controller made it)."""
    md = metadata(b).topics.get("__strata_metrics")  # all topics: asking by name might create it
    return sorted(md.partitions[0].isrs) if md and 0 in md.partitions else []


@pytest.fixture
def four(tmp_path, broker_factory):
    etcd, brokers = start_cluster(tmp_path, broker_factory, nodes=NODES, extra=TIMEOUTS)
    # The load samples that healing places by are replicated before any broker is killed:
    # a topic whose leader dies before its followers' first fetch has no leader until it
    # returns (only the leader starts in a new partition's ISR).
    wait_until(lambda: len(metrics_isr(brokers[0])) == 3, JOIN_WITHIN,
               "__strata_metrics made and its ISR full", lambda: metrics_isr(brokers[0]))
    yield brokers
    for b in brokers:
        b.stop()
    etcd.stop_all()


def tiered_topic(b, name: str) -> str:
    """Four partitions RF 2, each with a replica on broker 4, tiered (moves copy only the
    active segment); the ISRs full when it returns."""
    topic = kit.unique_topic(name)
    # retention.ms=-1: the records carry 2023 timestamps, which time retention would delete.
    a = kit.admin(b.bootstrap)  # held: a destroyed client fails its pending futures
    a.create_topics([NewTopic(
        topic, 4, replica_assignment=[[4, 1], [4, 2], [4, 3], [1, 4]],
        config={"remote.storage.enable": "true", "retention.ms": "-1",
                "min.insync.replicas": "1"})])[topic].result(timeout=30)
    wait_until(lambda: all(len(v) == 2 for v in isr(b, topic).values()), JOIN_WITHIN,
               "the ISRs full", lambda: isr(b, topic))
    return topic


def on_broker(b, topic: str, node: int) -> int:
    """How many of `topic`'s partitions have a replica on `node`."""
    return sum(node in replicas for _, replicas in leaders(b, topic).values())


def healed(b, topic: str, node: int) -> bool:
    return on_broker(b, topic, node) == 0 and all(
        len(v) == 2 for v in isr(b, topic).values())


def still_placed(b, topic: str, node: int, until: float) -> None:
    """Until `until`, `node` keeps every replica it had (polled, so a move in between fails)."""
    want = on_broker(b, topic, node)
    while time.time() < until:
        assert on_broker(b, topic, node) == want, (
            f"broker {node}'s replicas moved: {leaders(b, topic)}")
        time.sleep(0.5)


def set_cluster_config(b, **configs: str) -> None:
    """kafka-configs --entity-type brokers --entity-default --alter --add-config ..."""
    from test_kafka_tools import CONFIG_CMD, tool
    pairs = ",".join(f"{k}={v}" for k, v in configs.items())
    out = tool(CONFIG_CMD, "--bootstrap-server", b.bootstrap, "--entity-type", "brokers",
               "--entity-default", "--alter", "--add-config", pairs)
    assert "Completed updating default config" in out, out


def test_with_the_defaults_a_killed_brokers_replicas_are_re_placed(four, record_property):
    b1, b2, b3, b4 = four
    status = admin_get(b1, "/v1/balancer")
    assert status["enabled"] and status["self_healing"], status
    topic = tiered_topic(b1, "heal-defaults")
    recs = kit.make_records(400, 4, seed=211, tag="heal-defaults")
    kit.produce_confluent(b1.bootstrap, topic, recs)
    b4.kill9()
    killed_at = time.time()
    wait_until(lambda: healed(b1, topic, 4), FAILURE_MS / 1000 + HEAL_WITHIN,
               "broker 4's replicas re-placed and in the ISR",
               lambda: (leaders(b1, topic), isr(b1, topic),
                        admin_get(controller_of(four[:3]), "/v1/balancer")["last_plan"]))
    heal_s = time.time() - killed_at
    record_property("heal_seconds_after_kill", round(heal_s, 1))
    print(f"healed {heal_s:.1f} s after the kill (failure timeout {FAILURE_MS} ms)")
    assert heal_s >= FAILURE_MS / 1000 - 1, "re-placed before the failure timeout"
    kit.assert_same_records(recs, kit.consume_confluent(b1.bootstrap, topic, 4, timeout=120))


def test_a_cleanly_stopped_broker_gets_the_shutdown_grace(four):
    b1, b2, b3, b4 = four
    topic = tiered_topic(b1, "heal-grace")
    recs = kit.make_records(200, 4, seed=223, tag="heal-grace")
    kit.produce_confluent(b1.bootstrap, topic, recs)
    assert b4.stop() == 0
    stopped_at = time.time()
    wait_until(lambda: 4 not in metadata(b1).brokers, 10, "broker 4 unregistered")
    # Well past the failure timeout (plus ticks), well before the grace: nothing moves.
    still_placed(b1, topic, 4, stopped_at + FAILURE_MS / 1000 + 3 * TICK_S)
    plan = admin_get(controller_of(four[:3]), "/v1/balancer")["last_plan"] or {}
    assert 4 not in plan.get("dead_brokers", []), plan
    # Not back within the grace: then it is re-placed.
    wait_until(lambda: healed(b1, topic, 4), GRACE_MS / 1000 + HEAL_WITHIN,
               "broker 4's replicas re-placed after the grace",
               lambda: (leaders(b1, topic), isr(b1, topic)))
    assert time.time() - stopped_at >= GRACE_MS / 1000 - 1, "re-placed before the grace"
    kit.assert_same_records(recs, kit.consume_confluent(b1.bootstrap, topic, 4, timeout=120))


def test_the_switches_are_dynamic_and_healing_runs_without_balancing(four):
    b1, b2, b3, b4 = four
    topic = tiered_topic(b1, "heal-switch")
    set_cluster_config(b1, **{"strata.balancer.enable": "false",
                              "strata.balancer.self.healing.enable": "false"})
    wait_until(lambda: not admin_get(b2, "/v1/balancer")["self_healing"], 10,
               "self-healing off on every broker", lambda: admin_get(b2, "/v1/balancer"))
    b4.kill9()
    killed_at = time.time()
    still_placed(b1, topic, 4, killed_at + FAILURE_MS / 1000 + 3 * TICK_S)
    # Self-healing on, balancing still off: the dead broker is healed.
    set_cluster_config(b1, **{"strata.balancer.self.healing.enable": "true"})
    wait_until(lambda: healed(b1, topic, 4), HEAL_WITHIN, "broker 4's replicas re-placed",
               lambda: (leaders(b1, topic), isr(b1, topic)))
    plan = admin_get(controller_of(four[:3]), "/v1/balancer")["last_plan"] or {}
    assert "self-healing only" in plan.get("note", ""), plan
