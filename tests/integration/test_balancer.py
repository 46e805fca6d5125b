"""The autobalancer on four brokers sharing one real etcd (and a remote store, so moves copy
only active segments).

What is checked: with produce load skewed onto one broker (every replica of a hot topic on
broker 1), the active controller's balancer moves replicas until bytes in per broker
(produce plus replication, from the placement and the measured per-partition rates) is within
10 % of the average, then keeps still for ten cycles; every record produced before, during
and after the moves reads back identical. Paused, it moves nothing though its dry-run plan
has moves; resumed, it moves. A SIGKILLed broker's replicas are re-placed on the others once
strata.balancer.broker.failure.timeout.ms passes, with nothing acknowledged lost.
"""
from __future__ import annotations

import json
import threading
import time
import urllib.request

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import NewTopic

import kit
from kit import wait_until
from test_cluster import leaders, start_cluster
from test_replication import JOIN_WITHIN, isr

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's autobalancer")

METRICS_MS = 1000  # strata.balancer.metrics.interval.ms
CYCLE_MS = 3000    # strata.balancer.cycle.interval.ms
FAILURE_MS = 6000  # strata.balancer.broker.failure.timeout.ms
BALANCER = {
    "strata.balancer.enable": "true",
    "strata.balancer.metrics.interval.ms": str(METRICS_MS),
    "strata.balancer.cycle.interval.ms": str(CYCLE_MS),
    "strata.balancer.metrics.window.samples": "3",
    "strata.balancer.metrics.stale.ms": str(10 * METRICS_MS),
    "strata.balancer.traffic.floor.bytes.per.sec": "10000",
    "strata.balancer.partition.cooldown.ms": "20000",
    "strata.balancer.broker.failure.timeout.ms": str(FAILURE_MS),
    "strata.balancer.max.moves.per.cycle": "8",
    # Only the network-in goal: it is what the test measures, and leader moves would
    # only add churn to watch for.
    "strata.balancer.goals": "network_in",
}
# A cycle reads samples, plans and waits for its moves (each a reassignment that copies an
# active segment): a few cycles, each up to its moves' completion.
BALANCED_WITHIN = 20 * CYCLE_MS / 1000 + 60


def admin_get(b, path: str):
    url = f"http://{b.config['strata.admin.listener']}{path}"
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.load(r)


def admin_post(b, path: str):
    url = f"http://{b.config['strata.admin.listener']}{path}"
    req = urllib.request.Request(url, data=b"", method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


def controller_of(brokers):
    """The broker that is the active controller now."""
    for b in brokers:
        if b.proc and b.proc.poll() is None and admin_get(b, "/v1/balancer")["active_controller"]:
            return b
    return None


class SteadyLoad:
    """Produces `rate` bytes/s spread evenly over `partitions` of `topic` until stopped,
    keeping every acknowledged value per partition."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, rate: int):
        self.topic, self.partitions, self.rate = topic, partitions, rate
        self.acked: dict[int, list[bytes]] = {p: [] for p in range(partitions)}
        self.errors: list[str] = []
        self.stop = threading.Event()
        self.p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 20,
                           "enable.idempotence": True})
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        n, size, tick = 0, 1000, 0.05
        per_tick = max(1, int(self.rate * tick / size))
        while not self.stop.is_set():
            t0 = time.time()
            for _ in range(per_tick):
                part = n % self.partitions
                value = f"{n:08d}".encode().ljust(size, b"x")

                def done(err, msg, part=part, value=value):
                    if err is not None:
                        self.errors.append(str(err))
                    else:
                        self.acked[part].append(value)
                self.p.produce(self.topic, value, partition=part, on_delivery=done)
                n += 1
            self.p.poll(0)
            time.sleep(max(0.0, tick - (time.time() - t0)))
        self.p.flush(30)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(60)


def replica_counts(b, topic: str, brokers: list[int]) -> dict[int, int]:
    counts = {n: 0 for n in brokers}
    for _, (_, replicas) in leaders(b, topic).items():
        for r in replicas:
            counts[r] = counts.get(r, 0) + 1
    return counts


def max_over_avg(counts: dict[int, int]) -> float:
    avg = sum(counts.values()) / len(counts)
    return max(counts.values()) / avg


def skewed_topic(b, partitions: int) -> str:
    """A topic whose every partition has a replica on broker 1 (the others spread)."""
    topic = kit.unique_topic("hot")
    others = [2, 3, 4]
    assignment = [[1, others[p % 3]] for p in range(partitions)]
    a = kit.admin(b.bootstrap)
    a.create_topics([NewTopic(topic, partitions, replica_assignment=assignment, config={
        "remote.storage.enable": "true", "min.insync.replicas": "1"})])[topic].result(timeout=30)
    wait_until(lambda: all(len(v) == 2 for v in isr(b, topic).values()), JOIN_WITHIN,
               "the ISRs full", lambda: isr(b, topic))
    return topic


def assert_all_read_back(b, topic: str, load: SteadyLoad):
    got = kit.consume_confluent(b.bootstrap, topic, load.partitions, timeout=120)
    for p in range(load.partitions):
        values = [m.value() for m in got[p]]
        assert values == load.acked[p], (
            f"partition {p}: {len(values)} read, {len(load.acked[p])} acknowledged")


@pytest.fixture
def four(tmp_path, broker_factory):
    etcd, brokers = start_cluster(tmp_path, broker_factory, nodes=(1, 2, 3, 4), extra=BALANCER)
    yield brokers
    for b in brokers:
        b.stop()
    etcd.stop_all()


def test_skewed_load_is_balanced_and_then_left_alone(four):
    b1 = four[0]
    topic = skewed_topic(b1, 8)
    before = replica_counts(b1, topic, [1, 2, 3, 4])
    assert before[1] == 8, before
    with SteadyLoad(b1.bootstrap, topic, 8, rate=400_000) as load:
        wait_until(lambda: max_over_avg(replica_counts(b1, topic, [1, 2, 3, 4])) <= 1.1,
                   BALANCED_WITHIN, "bytes in per broker within 10 % of the average",
                   lambda: (replica_counts(b1, topic, [1, 2, 3, 4]),
                            admin_get(controller_of(four), "/v1/balancer")["last_plan"]))
        ctl = controller_of(four)
        wait_until(lambda: admin_get(ctl, "/v1/balancer")["moves_in_flight"] == 0, 60,
                   "the last moves done")
        status = admin_get(ctl, "/v1/balancer")
        done, cycles = status["moves_done"], status["cycles"]
        assert done > 0
        assert status["recent_decisions"][-1]["goal"] == "network_in"
        # Ten more cycles on the same load: nothing moves.
        wait_until(lambda: admin_get(ctl, "/v1/balancer")["cycles"] >= cycles + 10,
                   12 * CYCLE_MS / 1000 + 30, "ten more cycles")
        after = admin_get(ctl, "/v1/balancer")
        assert after["moves_done"] == done, after["recent_decisions"][-3:]
        assert max_over_avg(replica_counts(b1, topic, [1, 2, 3, 4])) <= 1.1
    assert not load.errors, load.errors[:5]
    assert_all_read_back(b1, topic, load)


def test_paused_it_plans_but_moves_nothing(four):
    b1 = four[0]
    ctl = controller_of(four)
    assert admin_post(ctl, "/v1/balancer/pause")["paused"] is True
    topic = skewed_topic(b1, 8)
    with SteadyLoad(b1.bootstrap, topic, 8, rate=400_000) as load:
        def planned():
            plan = admin_get(ctl, "/v1/balancer/plan")
            return [m for m in plan["moves"] if m["topic"] == topic]
        moves = wait_until(planned, 30, "a dry-run plan with moves")
        assert all(m["goal"] == "network_in" and m["reason"] for m in moves), moves
        cycles = admin_get(ctl, "/v1/balancer")["cycles"]
        wait_until(lambda: admin_get(ctl, "/v1/balancer")["cycles"] >= cycles + 3,
                   5 * CYCLE_MS / 1000 + 30, "three cycles while paused")
        assert replica_counts(b1, topic, [1, 2, 3, 4])[1] == 8
        assert admin_get(ctl, "/v1/balancer")["moves_done"] == 0
        admin_post(ctl, "/v1/balancer/resume")
        wait_until(lambda: replica_counts(b1, topic, [1, 2, 3, 4])[1] < 8, BALANCED_WITHIN,
                   "moves once resumed", lambda: replica_counts(b1, topic, [1, 2, 3, 4]))
    assert not load.errors, load.errors[:5]
    assert_all_read_back(b1, topic, load)


def test_a_dead_brokers_replicas_are_re_placed_after_the_timeout(four):
    b1, b2, b3, b4 = four
    topic = kit.unique_topic("heal")
    a = kit.admin(b1.bootstrap)
    a.create_topics([NewTopic(topic, 4, replica_assignment=[[4, 1], [4, 2], [4, 3], [1, 2]],
                              config={"remote.storage.enable": "true",
                                      "min.insync.replicas": "1"})])[topic].result(timeout=30)
    wait_until(lambda: all(len(v) == 2 for v in isr(b1, topic).values()), JOIN_WITHIN,
               "the ISRs full", lambda: isr(b1, topic))
    recs = kit.make_records(400, 4, seed=131, tag="heal")
    kit.produce_confluent(b1.bootstrap, topic, recs)
    b4.kill9()
    killed_at = time.time()

    def healed():
        placement = leaders(b1, topic)
        return all(4 not in replicas and len(replicas) == 2 for _, replicas in placement.values())
    wait_until(healed, FAILURE_MS / 1000 + 60, "broker 4's replicas re-placed",
               lambda: leaders(b1, topic))
    assert time.time() - killed_at >= FAILURE_MS / 1000 - 1, "re-placed before the timeout"
    wait_until(lambda: all(len(v) == 2 for v in isr(b1, topic).values()), JOIN_WITHIN,
               "the new replicas in the ISR", lambda: isr(b1, topic))
    got = kit.consume_confluent(b1.bootstrap, topic, 4, timeout=120)
    kit.assert_same_records(recs, got)
