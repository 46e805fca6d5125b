"""Failure detection faster than the lease: three brokers on one real etcd with a long lease
TTL, so that only the liveness probe can explain a fast reaction.

What is checked: a SIGKILLed leader is noticed by its followers (their fetches fail, its port
refuses connections), its lease is revoked and a new leader elected within seconds, well inside
the TTL, with every acknowledged record kept; a SIGKILLed follower is noticed by its leader (no
fetch for a fetch wait and more), so acks=all writes go on after a short pause instead of one
lease TTL; a SIGSTOPped leader, whose port still accepts connections, is left to its lease and
nothing is revoked.
"""
from __future__ import annotations

import re
import signal
import time

import pytest

import kit
from kit import wait_until
from test_cluster import leaders, prometheus, start_cluster
from test_replication import JOIN_WITHIN, create_rf3, isr

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's cluster mode")

LONG_TTL_MS = 20000
# Probe: a failed fetch (at once on a kill) or a follower silent for replica.fetch.wait.max.ms
# (500) + 1 s, found by the ISR pass (every 500 ms); two refusals 200 ms apart; then the
# controller's election through the watch. Seconds, against a 20 s TTL.
DETECTED_WITHIN = 8
REVOKED = re.compile(r"broker (\d+) \(broker epoch \d+\) refuses connections .* lease revoked")


@pytest.fixture
def long_lease_cluster(tmp_path, broker_factory):
    etcd, brokers = start_cluster(tmp_path, broker_factory,
                                  extra={"strata.etcd.lease.ttl.ms": str(LONG_TTL_MS)})
    yield brokers
    for b in brokers:
        b.stop()
    etcd.stop_all()


def full_rf3_topic(brokers, name: str, assignment: list[list[int]]) -> str:
    topic = kit.unique_topic(name)
    create_rf3(brokers[0], topic, len(assignment), assignment=assignment)
    wait_until(lambda: all(i == [1, 2, 3] for i in isr(brokers[0], topic).values()), JOIN_WITHIN,
               "every ISR full", lambda: isr(brokers[0], topic))
    return topic


def revocations(brokers) -> dict[int, list[int]]:
    """node -> the brokers whose lease it revoked, from its log."""
    return {int(b.config["node.id"]): [int(m) for m in REVOKED.findall(b.log_text())]
            for b in brokers if b.running}


def test_a_killed_leader_is_replaced_long_before_its_lease_expires(long_lease_cluster):
    brokers = long_lease_cluster
    topic = full_rf3_topic(brokers, "probe-leader", [[1, 2, 3]])
    before = kit.make_records(200, 1, seed=91, tag="before")
    kit.produce_confluent(brokers[0].bootstrap, topic, before, extra={"acks": "all"})

    victim = brokers[0]
    survivors = brokers[1:]
    killed_at = time.monotonic()
    victim.kill9()
    wait_until(lambda: leaders(survivors[0], topic)[0][0] in (2, 3), DETECTED_WITHIN,
               "a new leader well inside the lease TTL", lambda: leaders(survivors[0], topic))
    took = time.monotonic() - killed_at
    print(f"leader SIGKILLed -> new leader in {took:.2f} s (lease TTL {LONG_TTL_MS / 1000} s)")
    seen = revocations(survivors)
    assert any(1 in r for r in seen.values()), seen
    assert sum(prometheus(b).get("strata_peer_lease_revocations_total", 0)
               for b in survivors) >= 1

    after = kit.make_records(200, 1, seed=92, tag="after")
    kit.produce_confluent(survivors[0].bootstrap, topic, after, extra={"acks": "all"})
    kit.assert_same_records(before + after,
                            kit.consume_confluent(survivors[1].bootstrap, topic, 1))
    # Restarted, it registers again (its old lease is gone, so no wait for it) and rejoins.
    victim.start()
    wait_until(lambda: isr(survivors[0], topic)[0] == [1, 2, 3], JOIN_WITHIN,
               "the restarted broker back in the ISR", lambda: isr(survivors[0], topic))


def test_a_killed_follower_holds_acks_all_for_seconds_not_a_lease_ttl(long_lease_cluster):
    brokers = long_lease_cluster
    topic = full_rf3_topic(brokers, "probe-follower", [[1, 2, 3]])
    follower = brokers[2]
    follower.kill9()
    killed_at = time.monotonic()
    recs = kit.make_records(50, 1, seed=93, tag="follower-gone")
    kit.produce_confluent(brokers[0].bootstrap, topic, recs,
                          extra={"acks": "all", "message.timeout.ms": str(LONG_TTL_MS)})
    took = time.monotonic() - killed_at
    print(f"follower SIGKILLed -> acks=all acknowledged after {took:.2f} s")
    assert took < DETECTED_WITHIN, took
    assert isr(brokers[0], topic)[0] == [1, 2]
    assert any(3 in r for r in revocations(brokers[:2]).values()), revocations(brokers[:2])
    kit.assert_same_records(recs, kit.consume_confluent(brokers[1].bootstrap, topic, 1))


def test_a_stopped_leader_is_left_to_its_lease(tmp_path, broker_factory):
    """SIGSTOP: the process is alive and the kernel still accepts connections on its port, so
    the probe proves nothing and revokes nothing; the lease TTL decides."""
    ttl_ms = 6000
    etcd, brokers = start_cluster(tmp_path, broker_factory,
                                  extra={"strata.etcd.lease.ttl.ms": str(ttl_ms)})
    try:
        topic = full_rf3_topic(brokers, "probe-stopped", [[1, 2, 3]])
        victim = brokers[0]
        victim.proc.send_signal(signal.SIGSTOP)
        stopped_at = time.monotonic()
        try:
            # The followers' fetches time out or hang; the probe finds the port accepting.
            wait_until(lambda: leaders(brokers[1], topic)[0][0] in (2, 3), ttl_ms / 1000 + 8,
                       "a new leader once the lease expired", lambda: leaders(brokers[1], topic))
            took = time.monotonic() - stopped_at
        finally:
            victim.proc.send_signal(signal.SIGCONT)
        print(f"leader SIGSTOPped -> new leader in {took:.2f} s (lease TTL {ttl_ms / 1000} s)")
        assert took >= ttl_ms / 1000 * 0.6, f"replaced after {took:.2f} s: before its lease ran out"
        assert revocations(brokers) == {1: [], 2: [], 3: []}, revocations(brokers)
        wait_until(lambda: isr(brokers[1], topic)[0] == [1, 2, 3], JOIN_WITHIN,
                   "the stopped broker back in the ISR after SIGCONT",
                   lambda: isr(brokers[1], topic))
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()
