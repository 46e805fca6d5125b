"""A broker SIGKILLed with transactions open: what it recovers from its logs on restart.

Three librdkafka transactional producers on one broker, a topic of 2 partitions:
* A commits before the crash: its records stay readable.
* B has its records acknowledged, not committed, when the broker is killed. After the restart
  the last stable offset is still held at B's first record (the open transaction is rebuilt
  from the log and the producer state), and B's producer commits: the coordinator found the
  transaction in __transaction_state, writes the markers, and B's records become readable.
* C is open at the crash too and its producer never comes back: the coordinator aborts it when
  its transaction.timeout.ms passes (counted from before the crash), so the last stable offset
  reaches the end and read_committed readers never see C's records; C's late commit fails.

Both isolation levels then read exactly the records at the offsets the send order gives, with
one marker per transaction and partition.
"""
from __future__ import annotations

import time

from confluent_kafka import KafkaException, Producer

import kit
from test_transactions import (CLEANUP_INTERVAL_MS, MARKER_SLACK_S, TXN_CONFIG, Layout,
                               check_partitions, list_offsets, new_topics)

RECORDS = 10
C_TIMEOUT_MS = 6000  # the abandoned transaction's transaction.timeout.ms
# Loading __transaction_state and the partitions after a SIGKILL, on a busy two-core machine.
RECOVERY_S = 60


def producer(bs: str, name: str, timeout_ms: int) -> Producer:
    p = Producer({"bootstrap.servers": bs, "transactional.id": kit.unique_topic(name),
                  "transaction.timeout.ms": timeout_ms, "linger.ms": 5})
    p.init_transactions(60)
    return p


def send(p: Producer, tps, prefix: str) -> None:
    """RECORDS records, record i to partition i mod len(tps), all acknowledged."""
    errors = []
    for i in range(RECORDS):
        topic, part = tps[i % len(tps)]
        p.produce(topic, value=f"{prefix}r{i}", partition=part,
                  on_delivery=lambda err, msg: err and errors.append(err))
    assert p.flush(60) == 0 and not errors, errors


def commit_retrying(p: Producer, within: float) -> None:
    """librdkafka says when a failed commit is worth retrying (the coordinator loading)."""
    deadline = time.time() + within
    while True:
        try:
            p.commit_transaction(within)
            return
        except KafkaException as e:
            err = e.args[0]
            assert err.retriable() and not err.txn_requires_abort(), f"commit failed: {err}"
            assert time.time() < deadline, f"commit still failing: {err}"


def test_open_transactions_survive_a_broker_crash(broker_factory):
    b = broker_factory(config=dict(TXN_CONFIG))
    bs = b.bootstrap
    tps = new_topics(bs, a=2)
    layout = Layout(tps)

    pa = producer(bs, "tid-a", 60000)
    pa.begin_transaction()
    send(pa, tps, "a-")
    pa.commit_transaction(60)
    layout.txn("a-", RECORDS, committed=True)

    pb = producer(bs, "tid-b", 120000)
    pb.begin_transaction()
    send(pb, tps, "b-")
    layout.txn("b-", RECORDS, committed=True, ended=False)
    pc = producer(bs, "tid-c", C_TIMEOUT_MS)
    pc.begin_transaction()
    c_opened = time.time()
    send(pc, tps, "c-")
    layout.txn("c-", RECORDS, committed=False, ended=False)
    b_first = {tp: recs[0][0] for tp, recs in records_of(layout, "b-").items()}
    assert list_offsets(bs, tps, committed=True) == b_first, "B holds the last stable offset"

    b.kill9()
    b.start()
    # The open transactions are back: B still holds the last stable offset (C's abort, if it
    # came already, does not move it past B).
    held = kit.wait_until(lambda: try_list_offsets(bs, tps, committed=True), RECOVERY_S,
                          "ListOffsets answered after the restart")
    assert held == b_first, f"last stable offsets {held}, B's first records at {b_first}"
    assert list_offsets(bs, tps, committed=False) == {
        tp: b_first[tp] + 2 * (RECORDS // len(tps)) for tp in tps}, "high watermarks"

    commit_retrying(pb, RECOVERY_S)
    for tp in tps:
        layout.marker(tp)  # B's commit
        layout.marker(tp)  # C's abort, whichever came first
    abort_within = (C_TIMEOUT_MS + CLEANUP_INTERVAL_MS) / 1000 + MARKER_SLACK_S + RECOVERY_S
    kit.wait_until(lambda: list_offsets(bs, tps, committed=True) == layout.end,
                   abort_within - (time.time() - c_opened),
                   f"last stable offsets at the ends {layout.end} (C aborted on its timeout)",
                   lambda: {"read_committed": list_offsets(bs, tps, committed=True),
                            "read_uncommitted": list_offsets(bs, tps, committed=False)},
                   interval=0.2)
    check_partitions(bs, layout)

    try:
        pc.commit_transaction(30)
        raise AssertionError("the abandoned producer's late commit succeeded")
    except KafkaException as e:
        print("C's late commit:", e.args[0])
    # Nothing more reached the partitions.
    check_partitions(bs, layout)


def records_of(layout: Layout, prefix: str) -> dict:
    """Each partition's (offset, value) records of the transaction written with `prefix`."""
    return {tp: [(o, v) for o, v, _ in recs if v.startswith(prefix)]
            for tp, recs in layout.records.items()}


def try_list_offsets(bs: str, tps, committed: bool):
    try:
        return list_offsets(bs, tps, committed)
    except Exception:  # noqa: BLE001 - the broker may still be loading
        return None
