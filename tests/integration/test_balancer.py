"""The autobalancer on four brokers sharing one real etcd (and a remote store, so moves copy
only active segments: HDFS for the skewed-load test, a shared directory elsewhere).

What is checked: with produce load skewed onto one broker (every replica of a hot topic on
broker 1), the active controller's balancer moves replicas until bytes in per broker
(produce plus replication, from the placement and the measured per-partition rates) is within
10 % of the average, then keeps still for ten cycles; every record produced before, during
and after the moves reads back identical. Paused, it moves nothing though its dry-run plan
has moves; resumed, it moves. A SIGKILLed broker's replicas are re-placed on the others once
strata.balancer.broker.failure.timeout.ms passes, with nothing acknowledged lost, and when it
comes back balancing gives it load again. Sustained load above the scale-out threshold
activates a standby broker; low load drains it back to standby.
"""
from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import urllib.request

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import NewTopic

import kit
from kit import wait_until
from conftest import free_port
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
    keeping every value sent and every acknowledged value per partition.

    Leaving the `with` block (without an exception) flushes the producer and checks the run
    itself: every value sent got its delivery report, none failed, at least one was
    acknowledged, and per partition the acknowledged values are the values sent, in order (an
    idempotent producer retries without loss, duplicates or reordering). A load that never got
    an acknowledgement would otherwise pass every comparison with what was read back."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, rate: int):
        self.topic, self.partitions, self.rate = topic, partitions, rate
        self.sent: dict[int, list[bytes]] = {p: [] for p in range(partitions)}
        self.acked: dict[int, list[bytes]] = {p: [] for p in range(partitions)}
        self.errors: list[str] = []
        self.failure: BaseException | None = None  # what ended the producing thread early
        self.undelivered = -1  # left in the producer's queue after the final flush
        self.stop = threading.Event()
        self.p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 20,
                           "enable.idempotence": True})
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        try:
            self.produce_until_stopped()
        except BaseException as e:  # noqa: BLE001 (reported by the check on exit)
            self.failure = e
        finally:
            self.undelivered = self.p.flush(30)

    def produce_until_stopped(self):
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
                self.sent[part].append(value)
                n += 1
            self.p.poll(0)
            time.sleep(max(0.0, tick - (time.time() - t0)))

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, exc_type, *exc):
        self.stop.set()
        self.thread.join(60)
        if exc_type is None:  # an assertion failing inside the block is the one to report
            self.check()

    def check(self) -> None:
        sent = sum(len(v) for v in self.sent.values())
        acked = sum(len(v) for v in self.acked.values())
        summary = (f"load on {self.topic}: {sent} sent, {acked} acknowledged, "
                   f"{len(self.errors)} failed, {self.undelivered} undelivered after the flush")
        print(summary)
        assert not self.thread.is_alive(), f"the producing thread still running; {summary}"
        assert self.failure is None, f"the producing thread failed: {self.failure!r}; {summary}"
        assert self.undelivered == 0, summary
        assert not self.errors, f"{summary}; first errors: {self.errors[:5]}"
        assert acked > 0, summary
        for p in range(self.partitions):
            assert self.acked[p] == self.sent[p], (
                f"partition {p}: {len(self.sent[p])} sent, {len(self.acked[p])} acknowledged, "
                f"not the same values in the same order; {summary}")


class TailingGroup:
    """A consumer group member reading `topic` as it is written, until stopped: what it
    received per partition, and any error librdkafka surfaced that is not retriable."""

    def __init__(self, bootstrap: str, topic: str, group: str):
        self.got: dict[int, list[bytes]] = {}
        self.errors: list[str] = []
        self.stop = threading.Event()
        self.c = kit.consumer_confluent(bootstrap, {"group.id": group,
                                                    "enable.auto.commit": True})
        self.c.subscribe([topic])
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop.is_set():
            for m in self.c.consume(num_messages=500, timeout=0.2):
                err = m.error()
                if err is None:
                    self.got.setdefault(m.partition(), []).append(m.value())
                elif err.fatal() or not err.retriable():
                    self.errors.append(str(err))
        self.c.close()

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


@pytest.fixture
def four_on_hdfs(tmp_path, broker_factory, remote_uri):
    """Four brokers whose remote storage is a real HDFS (MiniDFSCluster, conftest's
    `remote_uri`)."""
    extra = {**BALANCER, "strata.remote.storage.uri": remote_uri}
    etcd, brokers = start_cluster(tmp_path, broker_factory, nodes=(1, 2, 3, 4), extra=extra)
    yield brokers
    for b in brokers:
        b.stop()
    etcd.stop_all()


def test_skewed_load_is_balanced_and_then_left_alone(four_on_hdfs):
    four = four_on_hdfs
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
    # Every decision is in __strata_balancer_log, with its reason.
    got = kit.consume_confluent(b1.bootstrap, "__strata_balancer_log", 1, timeout=60)
    records = [json.loads(m.value()) for m in got[0]]
    moved = [r for r in records if r["type"] == "move" and r["topic"] == topic]
    assert len(moved) == done, records
    assert all(r["result"] == "done" and "network_in" in r["reason"] for r in moved), moved
    assert any(r["type"] == "plan" and any(m["topic"] == topic for m in r["moves"])
               for r in records), records


def test_a_new_controller_rebuilds_its_load_window_from_the_topic(four):
    """The balancer's load window lives on the active controller only. When it stops, the
    next controller reads `__strata_metrics` from the log start: its window holds the
    stopped broker's last samples too, which only the topic still has (the 3 live brokers
    alone give at most 3 x 3 samples)."""
    window = int(BALANCER["strata.balancer.metrics.window.samples"])
    first = wait_until(lambda: controller_of(four), 30, "an active controller")
    wait_until(lambda: admin_get(first, "/v1/balancer")["samples"] == 4 * window,
               (window + 2) * METRICS_MS / 1000 + 30, "a full window on the controller",
               lambda: admin_get(first, "/v1/balancer")["samples"])
    first.stop()
    rest = [b for b in four if b is not first]
    second = wait_until(lambda: controller_of(rest), 30, "a new active controller")
    status = wait_until(
        lambda: (lambda s: s if s["samples"] > 3 * window else None)(
            admin_get(second, "/v1/balancer")), 4 * METRICS_MS / 1000 + 15,
        "the stopped broker's samples in the new controller's window",
        lambda: admin_get(second, "/v1/balancer"))
    assert status["last_error"] == "", status
    assert status["metrics_records_read"] >= 4 * window, status


def balance_cli(b, *args: str) -> subprocess.CompletedProcess:
    """`strata balance ARGS --admin <b's admin listener>`."""
    return subprocess.run([os.environ["STRATA_BIN"], "balance", *args, "--admin",
                           b.config["strata.admin.listener"]],
                          capture_output=True, text=True, timeout=90)


def test_paused_it_plans_but_moves_nothing(four):
    """Pause asked of a broker that is not the controller holds cluster-wide (it is the
    dynamic config strata.balancer.paused); the CLI's plan and status say what would move."""
    b1 = four[0]
    ctl = controller_of(four)
    other = next(b for b in four if b is not ctl)
    r = balance_cli(other, "pause")
    assert r.returncode == 0 and "paused" in r.stdout, (r.stdout, r.stderr)
    wait_until(lambda: admin_get(ctl, "/v1/balancer")["paused"], 10, "the controller paused")
    topic = skewed_topic(b1, 8)
    with SteadyLoad(b1.bootstrap, topic, 8, rate=400_000) as load:
        def planned():
            r = balance_cli(ctl, "plan", "--format", "json")
            assert r.returncode == 0, r.stderr
            return [m for m in json.loads(r.stdout)["moves"] if m["topic"] == topic]
        moves = wait_until(planned, 30, "a dry-run plan with moves")
        assert all(m["goal"] == "network_in" and m["reason"] for m in moves), moves
        # A plan asked of another broker says which one is the controller (exit code 1).
        r = balance_cli(other, "plan")
        assert r.returncode == 1 and "active controller" in r.stderr, (r.returncode, r.stderr)
        cycles = admin_get(ctl, "/v1/balancer")["cycles"]
        wait_until(lambda: admin_get(ctl, "/v1/balancer")["cycles"] >= cycles + 3,
                   5 * CYCLE_MS / 1000 + 30, "three cycles while paused")
        assert replica_counts(b1, topic, [1, 2, 3, 4])[1] == 8
        status = balance_cli(ctl, "status")
        assert status.returncode == 0 and "paused" in status.stdout, status.stdout
        assert admin_get(ctl, "/v1/balancer")["moves_done"] == 0
        r = balance_cli(other, "resume")
        assert r.returncode == 0 and "resumed" in r.stdout, (r.stdout, r.stderr)
        wait_until(lambda: replica_counts(b1, topic, [1, 2, 3, 4])[1] < 8, BALANCED_WITHIN,
                   "moves once resumed", lambda: replica_counts(b1, topic, [1, 2, 3, 4]))
        wait_until(lambda: (lambda out: "recent decisions" in out and topic in out)(
            balance_cli(ctl, "status").stdout), 60, "the moves in the status' decisions",
            lambda: balance_cli(ctl, "status").stdout)
    assert not load.errors, load.errors[:5]
    assert_all_read_back(b1, topic, load)
    unreachable = subprocess.run([os.environ["STRATA_BIN"], "balance", "status", "--admin",
                                  "127.0.0.1:1"], capture_output=True, text=True, timeout=90)
    assert unreachable.returncode == 2, unreachable.stderr


def test_a_dead_brokers_replicas_are_re_placed_after_the_timeout(four):
    b1, b2, b3, b4 = four
    topic = kit.unique_topic("heal")
    a = kit.admin(b1.bootstrap)
    # retention.ms=-1: the records carry 2023 timestamps, which time retention would
    # delete once a segment rolls.
    a.create_topics([NewTopic(topic, 4, replica_assignment=[[4, 1], [4, 2], [4, 3], [1, 2]],
                              config={"remote.storage.enable": "true", "retention.ms": "-1",
                                      "min.insync.replicas": "1"})])[topic].result(timeout=30)
    wait_until(lambda: all(len(v) == 2 for v in isr(b1, topic).values()), JOIN_WITHIN,
               "the ISRs full", lambda: isr(b1, topic))
    recs = kit.make_records(400, 4, seed=131, tag="heal")
    kit.produce_confluent(b1.bootstrap, topic, recs)
    # The balancer's own topics in sync first: killed while broker 4 alone held
    # __strata_metrics, no broker could publish its load and nothing could be placed.
    internal = ("__strata_metrics", "__strata_balancer_log")

    def internal_in_sync():
        try:
            return all(sorted(isr(b1, t).get(0, [])) == sorted(leaders(b1, t)[0][1])
                       for t in internal)
        except (KeyError, AttributeError):
            return False  # not created yet
    wait_until(internal_in_sync, JOIN_WITHIN, "the balancer's topics in sync",
               lambda: [(isr(b1, t), leaders(b1, t)) for t in internal])
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
    # Broker 4 back, empty-handed: under load, balancing gives it replicas again.
    b4.start()
    wait_until(lambda: 4 in [b.id for b in kit.admin(b1.bootstrap).list_topics(
        timeout=10).brokers.values()], 30, "broker 4 registered again")
    with SteadyLoad(b1.bootstrap, topic, 4, rate=400_000) as load:
        wait_until(lambda: replica_counts(b1, topic, [1, 2, 3, 4])[4] > 0, BALANCED_WITHIN,
                   "replicas back on broker 4",
                   lambda: (replica_counts(b1, topic, [1, 2, 3, 4]),
                            admin_get(controller_of(four), "/v1/balancer")["last_plan"]))
    assert not load.errors, load.errors[:5]
    wait_until(lambda: all(len(v) == 2 for v in isr(b1, topic).values()), JOIN_WITHIN,
               "the ISRs full", lambda: isr(b1, topic))
    got = kit.consume_confluent(b1.bootstrap, topic, 4, timeout=120)
    for p in range(4):
        want = [r.value for r in recs if r.partition == p] + load.acked[p]
        assert [m.value() for m in got[p]] == want, (
            f"partition {p}: {len(got[p])} read from offset "
            f"{got[p][0].offset() if got[p] else None}, {len(want)} acknowledged")


THROTTLE = 500_000  # strata.balancer.replication.throttle.bytes.per.sec


def test_the_balancers_moves_are_throttled_until_done(tmp_path, broker_factory):
    """With strata.balancer.replication.throttle.bytes.per.sec, a move sets Kafka's throttle
    configs as kafka-reassign-partitions --throttle does (the rate on the brokers involved,
    the partition's replicas in the topic's throttled-replicas lists) while it copies, and
    takes them off when done. Here a dead broker's replica of a 2 MB partition without
    remote storage is re-placed: the new replica copies it all, at the throttle."""
    etcd, brokers = start_cluster(
        tmp_path, broker_factory, nodes=(1, 2, 3, 4),
        extra={**BALANCER,
               "strata.balancer.replication.throttle.bytes.per.sec": str(THROTTLE)})
    from confluent_kafka.admin import ConfigResource, ResourceType
    try:
        b1, b4 = brokers[0], brokers[3]
        topic = kit.unique_topic("throttled-heal")
        a = kit.admin(b1.bootstrap)
        a.create_topics([NewTopic(topic, 1, replica_assignment=[[4, 1]], config={
            "retention.ms": "-1", "min.insync.replicas": "1"})])[topic].result(timeout=30)
        recs = kit.make_records(2000, 1, seed=151, tag="throttled", value_size=2000)
        kit.produce_confluent(b1.bootstrap, topic, recs)
        wait_until(lambda: len(isr(b1, topic)[0]) == 2, JOIN_WITHIN, "the ISR full",
                   lambda: isr(b1, topic))
        b4.kill9()

        def configs():
            t = ConfigResource(ResourceType.TOPIC, topic)
            b = ConfigResource(ResourceType.BROKER, "1")
            got = a.describe_configs([t, b])
            tc, bc = got[t].result(timeout=15), got[b].result(timeout=15)
            return (tc["follower.replication.throttled.replicas"].value or "",
                    tc["leader.replication.throttled.replicas"].value or "",
                    bc["leader.replication.throttled.rate"].value)
        seen = []

        def throttled():
            seen.append(configs())
            follower, leader, rate = seen[-1]
            return follower in ("0:2", "0:3") and leader == "0:4,0:1" and rate == str(THROTTLE)
        wait_until(throttled, FAILURE_MS / 1000 + 60, "the throttle set for the move",
                   lambda: (seen[-3:], leaders(b1, topic)), interval=0.2)
        wait_until(lambda: 4 not in leaders(b1, topic)[0][1] and len(isr(b1, topic)[0]) == 2,
                   2_200_000 / THROTTLE * 3 + JOIN_WITHIN, "the move done",
                   lambda: (leaders(b1, topic), isr(b1, topic)))
        unthrottled = str(2**63 - 1)  # Kafka's default rate: none
        wait_until(lambda: configs() == ("", "", unthrottled), 30, "the throttle taken off",
                   lambda: configs())
        kit.assert_same_records(recs, kit.consume_confluent(b1.bootstrap, topic, 1))
        # The copy went at the throttle (a second's worth may go at once).
        size = sum(f.stat().st_size for f in b1.partition_dir(topic, 0).glob("*.log"))
        [move] = [d for d in admin_get(controller_of(brokers), "/v1/balancer")
                  ["recent_decisions"] if d.get("topic") == topic]
        assert move["result"] == "done", move
        assert move["duration_ms"] >= (size - THROTTLE) / THROTTLE * 1000 * 0.8, (move, size)
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()


def test_every_broker_publishes_its_load_to_strata_metrics(broker_factory):
    """One broker, samples every second: the produce and consume rates in `__strata_metrics`,
    times their windows, add up to what was produced and read, and the size is the log's."""
    b = broker_factory(config={"strata.balancer.metrics.interval.ms": str(METRICS_MS),
                               "strata.admin.listener": f"127.0.0.1:{free_port()}"})
    topic = kit.unique_topic("load")
    kit.create_topic(b.bootstrap, topic, 1)
    recs = kit.make_records(2000, 1, seed=141, tag="load", value_size=500)
    kit.produce_confluent(b.bootstrap, topic, recs)
    log_bytes = sum(f.stat().st_size for f in b.partition_dir(topic, 0).glob("*.log"))
    kit.consume_confluent(b.bootstrap, topic, 1)
    # The controller (this broker) makes the topic within a tick of its balancer thread.
    wait_until(lambda: "__strata_metrics" in kit.admin(b.bootstrap).list_topics(
        timeout=10).topics, 30, "__strata_metrics created")

    def totals():
        got = kit.consume_confluent(b.bootstrap, "__strata_metrics", 1, timeout=60)
        s = {"in": 0.0, "out": 0.0, "messages": 0.0, "size": -1, "samples": 0}
        for m in got[0]:
            sample = json.loads(m.value())
            assert m.key() == str(sample["broker"]).encode() and sample["version"] == 1
            assert sample["totals"]["disk_capacity_bytes"] > 0
            assert sample["totals"]["cpu_cores_used"] >= 0
            s["samples"] += 1
            for p in sample["partitions"]:
                if p["topic"] != topic:
                    continue
                w = sample["window_ms"] / 1000
                s["in"] += p["bytes_in_per_sec"] * w
                s["out"] += p["bytes_out_per_sec"] * w
                s["messages"] += p["messages_in_per_sec"] * w
                s["size"] = p["size_bytes"]
        return s
    # Produce and consume are done: once a sample after them is in, the sums are final.
    seen = wait_until(lambda: (lambda t: t if t["size"] == log_bytes and
                               round(t["messages"]) == len(recs) else None)(totals()),
                      10 * METRICS_MS / 1000 + 30, "samples covering the produce",
                      lambda: totals())
    # Produce bytes are the batches as appended: the log holds exactly them.
    assert abs(seen["in"] - log_bytes) <= 0.001 * log_bytes, (seen, log_bytes)
    assert seen["out"] >= 0.999 * log_bytes, (seen, log_bytes)  # read once, from the start


SUSTAIN_MS = 6000  # strata.balancer.scale.sustain.ms
CAPACITY = 100_000  # declared network in and out per broker, bytes/s


def test_sustained_load_activates_a_standby_broker_and_low_load_drains_it_back(
        tmp_path, broker_factory):
    """Brokers 1-3 active and 4 standby, each declaring 100 kB/s of network in and out.
    100 kB/s produced at RF 2 is 200 kB/s in (and, with a member reading along, 200 kB/s
    out): 67 % of the active brokers' capacity, above
    strata.balancer.scale.out.threshold=0.5 for longer than the sustain time, so broker 4
    is activated and load moves onto it. With the load stopped, utilization stays below
    the scale-in threshold, broker 4 (the one scaling brought in) is drained and, holding
    nothing, goes back to standby; new topics skip it again. The hook command sees each
    event; the producer and a consumer group member reading along see no error that is not
    retriable, the member reads every acknowledged record in order, and everything reads
    back identical at the end."""
    hook_log = tmp_path / "scale-events"
    scaling = {**BALANCER,
               "strata.balancer.scaling.enable": "true",
               "strata.balancer.scale.out.threshold": "0.5",
               "strata.balancer.scale.in.threshold": "0.2",
               "strata.balancer.scale.sustain.ms": str(SUSTAIN_MS),
               "strata.balancer.scale.hook.command":
                   f'echo "$STRATA_SCALE_EVENT $STRATA_SCALE_BROKER" >> {hook_log}',
               "strata.broker.capacity.network.in.bytes.per.sec": str(CAPACITY),
               "strata.broker.capacity.network.out.bytes.per.sec": str(CAPACITY),
               "strata.broker.capacity.cpu.cores": "64"}
    etcd, brokers = start_cluster(tmp_path, broker_factory, nodes=(1, 2, 3, 4), extra=scaling,
                                  per_node={4: {"strata.broker.standby": "true"}})
    try:
        b1 = brokers[0]
        topic = kit.unique_topic("surge")
        a = kit.admin(b1.bootstrap)
        a.create_topics([NewTopic(topic, 6, 2, config={
            "remote.storage.enable": "true", "min.insync.replicas": "1"})])[topic].result(30)
        assert replica_counts(b1, topic, [1, 2, 3, 4])[4] == 0
        wait_until(lambda: all(len(v) == 2 for v in isr(b1, topic).values()), JOIN_WITHIN,
                   "the ISRs full", lambda: isr(b1, topic))

        def events():
            return hook_log.read_text().split("\n")[:-1] if hook_log.exists() else []

        def scaling_status():
            ctl = controller_of(brokers)
            return admin_get(ctl, "/v1/balancer")["scaling"] if ctl else None
        # Load is seen within a window of samples, then must last the sustain time; a
        # cycle acts on it.
        surge_within = (3 * METRICS_MS + SUSTAIN_MS + 2 * CYCLE_MS) / 1000 + 30
        with TailingGroup(b1.bootstrap, topic, kit.unique_topic("tail")) as tail:
            with SteadyLoad(b1.bootstrap, topic, 6, rate=100_000) as load:
                wait_until(lambda: "scale_out 4" in events(), surge_within,
                           "standby broker 4 activated", scaling_status)
                assert scaling_status()["activated"] == [4]
                # The admin API's cluster view: registered standby, active by scaling.
                b4 = {b["node_id"]: b for b in admin_get(b1, "/v1/cluster")["brokers"]}[4]
                assert (b4["state"], b4["role"]) == ("standby", "active"), b4
                wait_until(lambda: replica_counts(b1, topic, [1, 2, 3, 4])[4] > 0,
                           BALANCED_WITHIN, "load moved onto broker 4",
                           lambda: (replica_counts(b1, topic, [1, 2, 3, 4]), scaling_status()))
                ctl = controller_of(brokers)
                wait_until(lambda: admin_get(ctl, "/v1/balancer")["moves_in_flight"] == 0, 60,
                           "the moves onto broker 4 done")
            # Stopped and flushed: the group member read what was acknowledged, in order,
            # through the moves.
            wait_until(lambda: all(tail.got.get(p, []) == load.acked[p] for p in range(6)),
                       60, "the tailing consumer caught up",
                       lambda: {p: (len(tail.got.get(p, [])), len(load.acked[p]))
                                for p in range(6)})
        assert not load.errors, load.errors[:5]
        assert not tail.errors, tail.errors[:5]
        # Idle: the window empties within its samples, then the sustain time passes.
        wait_until(lambda: "scale_in 4" in events(), surge_within + BALANCED_WITHIN,
                   "broker 4 drained back to standby",
                   lambda: (events(), scaling_status(), replica_counts(b1, topic, [1, 2, 3, 4])))
        seen = [e for e in events() if e != "standby_wanted -1"]
        assert seen == ["scale_out 4", "drain_started 4", "scale_in 4"], events()
        assert replica_counts(b1, topic, [1, 2, 3, 4])[4] == 0
        status = scaling_status()
        assert status["activated"] == [] and status["draining"] == [], status
        assert status["last_event"]["event"] == "scale_in", status
        cluster = {b["node_id"]: b for b in admin_get(b1, "/v1/cluster")["brokers"]}
        assert (cluster[4]["role"], cluster[4]["replicas"]) == ("standby", 0), cluster[4]
        assert all(cluster[n]["role"] == "active" and cluster[n]["state"] == "active"
                   for n in (1, 2, 3)), cluster
        assert "drained" in status["last_event"]["reason"], status
        # The decision log has the three events with their reasons.
        got = kit.consume_confluent(b1.bootstrap, "__strata_balancer_log", 1, timeout=60)
        logged = [json.loads(m.value()) for m in got[0]]
        logged = [r for r in logged if r["type"] == "scaling" and r["event"] != "standby_wanted"]
        assert [r["event"] for r in logged] == ["scale_out", "drain_started", "scale_in"], logged
        # In and out are both ~67 %: the produce plus its replication in, the replication
        # plus the reading member out. Whichever was higher at the time is named.
        out_reason = logged[0]["reason"]
        assert logged[0]["dimension"] in ("network_in", "network_out"), logged
        assert f"({logged[0]['dimension']}) above" in out_reason, logged
        # Back to standby: new topics are placed on brokers 1-3 only.
        later = kit.unique_topic("after-scale-in")
        kit.create_topic(b1.bootstrap, later, 12)
        assert all(4 not in replicas for _, replicas in leaders(b1, later).values())
        wait_until(lambda: all(len(v) == 2 for v in isr(b1, topic).values()), JOIN_WITHIN,
                   "the ISRs full again", lambda: isr(b1, topic))
        assert_all_read_back(b1, topic, load)
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()
