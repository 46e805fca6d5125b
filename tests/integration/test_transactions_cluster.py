"""Transactions on a three-broker cluster (one real etcd, test_cluster.py's `start_cluster`):
data and __transaction_state with 3 replicas and min.insync.replicas 2, and the transaction
coordinator (the leader of the id's __transaction_state partition) SIGKILLed.

What is checked, with confluent-kafka's transactional producer and read_committed consumer:
* killed mid-transaction (records sent and acknowledged, no commit yet): the producer finds the
  new coordinator, which loaded the transaction from __transaction_state on taking the
  partition's leadership, and its commit goes through there. A read_committed consumer then reads
  exactly the transaction's records, once each.
* killed right after a commit is acknowledged (PrepareCommit written, the markers perhaps not
  all): the new coordinator writes the markers again, so the records become readable, and the
  producer's next transaction commits.
* each partition's end offset counts every record and a marker per transaction (the
  transaction whose markers were resent may have two in a partition: Kafka's coordinator resends
  them the same way, and a second marker of an ended transaction changes nothing).
"""
from __future__ import annotations

import time
from collections import Counter

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import NewTopic

import kit
import rawkafka
from kit import wait_until
from test_cluster import TTL_MS, metadata, start_cluster

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's cluster mode")

PARTITIONS = 3
RECORDS = 30  # per transaction, spread over the partitions
TXN_ID = "cluster-txn"
# A dead broker's leaderships move once its lease expires; then the client retries.
FAILOVER_WITHIN = TTL_MS / 1000 * 5 + 20


def txn_coordinator(b, transactional_id: str) -> tuple[int, int]:
    """FindCoordinator v1 for a transactional id, sent to broker `b` -> (error, node id)."""
    with rawkafka.Conn(b.bootstrap) as c:
        body = bytes(rawkafka.Writer().string(transactional_id).i8(1).buf)
        c.send(rawkafka.request(10, 1, 12, body))
        cid, resp = c.recv_frame()
    assert cid == 12
    r = rawkafka.Reader(resp)
    r.i32()  # throttle_time_ms
    code = r.i16()
    r.string()  # error_message
    return code, r.i32()


def isr_full(b, topic: str) -> bool:
    try:
        md = metadata(b, topic).topics[topic]
    except Exception:  # noqa: BLE001 - metadata may fail while a broker restarts
        return False
    return md.error is None and len(md.partitions) > 0 and all(
        len(pm.isrs) == 3 for pm in md.partitions.values())


def run_txn(p: Producer, topic: str, tag: str, after_send=None, after_commit=None) -> None:
    """One transaction of RECORDS records tagged `tag` over every partition; the hooks run
    once the records are acknowledged and once the commit is."""
    p.begin_transaction()
    for i in range(RECORDS):
        p.produce(topic, value=f"{tag}-{i}".encode(), partition=i % PARTITIONS)
    assert p.flush(60) == 0, "records not acknowledged"
    if after_send:
        after_send()
    deadline = time.time() + FAILOVER_WITHIN
    while True:  # librdkafka says when a commit is worth retrying
        try:
            p.commit_transaction(FAILOVER_WITHIN)
            break
        except KafkaException as e:
            err = e.args[0]
            assert err.retriable() and not err.txn_requires_abort(), f"commit failed: {err}"
            assert time.time() < deadline, f"commit still failing: {err}"
    if after_commit:
        after_commit()


def read_committed(b, topic: str, want: int) -> list[str]:
    """Reads every partition from offset 0 at read_committed until `want` records came, then
    until each partition's position reaches its last stable offset (nothing more to see)."""
    c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": kit.unique_topic("rc"),
                  "isolation.level": "read_committed", "enable.auto.commit": False})
    try:
        c.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        got: list[str] = []
        deadline = time.time() + FAILOVER_WITHIN
        while len(got) < want and time.time() < deadline:
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                got.append(m.value().decode())
        assert len(got) >= want, f"read {len(got)} of {want} committed records: {sorted(got)}"
        ends = [c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
                for p in range(PARTITIONS)]
        for m in c.consume(100, 2):
            if m.error() is None:
                got.append(m.value().decode())
        positions = [tp.offset for tp in c.position([TopicPartition(topic, p)
                                                     for p in range(PARTITIONS)])]
        assert all(pos >= end for pos, end in zip(positions, ends)), (positions, ends)
        return got
    finally:
        c.close()


def test_a_killed_transaction_coordinator_loses_no_transaction(tmp_path, broker_factory):
    etcd, brokers = start_cluster(tmp_path, broker_factory, extra={
        "transaction.state.log.num.partitions": "3",
        "transaction.state.log.replication.factor": "3",
        "transaction.state.log.min.isr": "2"})
    by_node = {int(b.config["node.id"]): b for b in brokers}
    try:
        topic = kit.unique_topic("txc")
        a = kit.admin(brokers[0].bootstrap)
        a.create_topics([NewTopic(topic, PARTITIONS, 3, config={"min.insync.replicas": "2"})])[
            topic].result(timeout=30)
        wait_until(lambda: isr_full(brokers[0], topic), 30, f"{topic} ISRs full",
                   lambda: metadata(brokers[0], topic).topics[topic].partitions)
        p = Producer({"bootstrap.servers": ",".join(b.bootstrap for b in brokers),
                      "transactional.id": TXN_ID, "transaction.timeout.ms": 120000,
                      "enable.idempotence": True, "acks": "all"})
        p.init_transactions(60)
        wait_until(lambda: isr_full(brokers[0], "__transaction_state"), 30,
                   "__transaction_state ISRs full",
                   lambda: metadata(brokers[0], "__transaction_state").topics)

        def coordinator() -> int:
            code, node = txn_coordinator(brokers[0] if brokers[0].running else brokers[1],
                                         TXN_ID)
            return node if code == 0 else -1

        def kill_coordinator() -> int:
            node = coordinator()
            assert node in by_node, f"no coordinator for {TXN_ID}: {node}"
            by_node[node].kill9()
            return node

        killed: list[int] = []
        run_txn(p, topic, "t1", after_send=lambda: killed.append(kill_coordinator()))
        survivor = next(b for n, b in by_node.items() if n != killed[0])
        got = read_committed(survivor, topic, RECORDS)
        assert Counter(got) == Counter(f"t1-{i}" for i in range(RECORDS))

        # Back to three, then kill the next coordinator right after it acknowledged a commit.
        by_node[killed[0]].start()
        for t in (topic, "__transaction_state"):
            wait_until(lambda: isr_full(survivor, t), FAILOVER_WITHIN, f"{t} ISRs full again",
                       lambda: metadata(survivor, t).topics[t].partitions)
        run_txn(p, topic, "t2", after_commit=lambda: killed.append(kill_coordinator()))
        survivor = next(b for n, b in by_node.items() if n != killed[1])
        run_txn(p, topic, "t3")
        got = read_committed(survivor, topic, 3 * RECORDS)
        assert Counter(got) == Counter(f"t{t}-{i}" for t in (1, 2, 3) for i in range(RECORDS))
        # Every record once and a marker per transaction (t2's perhaps twice) in each partition.
        c = Consumer({"bootstrap.servers": survivor.bootstrap, "group.id": "ends"})
        ends = [c.get_watermark_offsets(TopicPartition(topic, q), timeout=10)[1]
                for q in range(PARTITIONS)]
        c.close()
        least = 3 * RECORDS // PARTITIONS + 3
        assert all(least <= e <= least + 1 for e in ends), ends
        p.flush(10)
        by_node[killed[1]].start()
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()
