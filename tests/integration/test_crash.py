"""Crash safety: kill -9 mid-stream loses nothing that was acknowledged, and a damaged log
tail (garbage appended / last batch cut in half while the broker is down) is truncated at
start-up with everything before it still served."""
from __future__ import annotations

import os
import time
import random
import re
import struct
from pathlib import Path

import pytest
from confluent_kafka import Producer

import kit

PARTITIONS = 4


def stream_until_killed(b, topic: str, codec: str, kill_after: int) -> tuple[list[kit.Rec], dict]:
    """Produces continuously (acks=all) and kill -9s the broker once `kill_after` records
    are acknowledged, while more are in flight. Returns (all records tried, {index: ok?})."""
    recs = kit.make_records(kill_after * 4, PARTITIONS, seed=len(codec) * 7919, tag=codec)
    p = Producer({"bootstrap.servers": b.bootstrap, "acks": "all", "compression.type": codec,
                  "enable.idempotence": False, "linger.ms": 2, "batch.num.messages": 500,
                  "message.timeout.ms": 4000, "retries": 0})
    status: dict[int, bool] = {}
    acked = [0]

    def cb(rec):
        def on_delivery(err, msg):
            status[rec.index] = err is None
            if err is None:
                rec.offset = msg.offset()
                acked[0] += 1
        return on_delivery

    killed_at = None
    for rec in recs:
        while True:
            try:
                p.produce(topic, key=rec.key, value=rec.value, partition=rec.partition,
                          headers=rec.headers, timestamp=rec.timestamp, on_delivery=cb(rec))
                break
            except BufferError:
                p.poll(0.05)
        p.poll(0)
        if killed_at is None and acked[0] >= kill_after:
            b.kill9()
            killed_at = rec.index
        if killed_at is not None and rec.index > killed_at + 2000:
            break
    # On a loaded machine the producer may queue every record before enough acks
    # come back: keep polling until the kill point, then kill.
    deadline = time.time() + 60
    while killed_at is None and time.time() < deadline:
        p.poll(0.05)
        if acked[0] >= kill_after:
            b.kill9()
            killed_at = recs[-1].index
    assert killed_at is not None, "never reached the kill point"
    p.flush(30)  # everything still queued now fails (broker down)
    return recs, status


@pytest.mark.parametrize("codec", kit.CODECS)
def test_kill9_mid_stream_keeps_acknowledged_records(broker_factory, codec):
    b = broker_factory()
    topic = kit.unique_topic(f"crash-{codec}")
    kit.create_topic(b.bootstrap, topic, PARTITIONS)
    recs, status = stream_until_killed(b, topic, codec, kill_after=10_000)
    acked = [r for r in recs if status.get(r.index)]
    assert len(acked) >= 10_000 and any(v is False for v in status.values()), (
        "the kill did not interrupt the stream")

    b.start()
    got = kit.retry(lambda: kit.consume_confluent(b.bootstrap, topic, PARTITIONS))
    by_idx = {r.index: r for r in recs}
    for p in range(PARTITIONS):
        offsets = [m.offset() for m in got[p]]
        assert offsets == list(range(len(offsets))), f"partition {p}: offsets not contiguous"
        for m in got[p]:  # every stored record is one we sent, intact (acked or not)
            idx = int(dict(m.headers())["idx"])
            r = by_idx[idx]
            assert (m.partition(), m.key(), m.value(), m.headers(), m.timestamp()[1]) == (
                r.partition, r.key, r.value, r.headers, r.timestamp), f"record {idx} corrupted"
            if status.get(idx):
                assert m.offset() == r.offset, f"record {idx} acked at {r.offset}, found at {m.offset()}"
    stored = {int(dict(m.headers())["idx"]) for p in got for m in got[p]}
    lost = [r.index for r in acked if r.index not in stored]
    assert not lost, f"{len(lost)} acknowledged records lost, e.g. {lost[:5]}"

    # The log stays writable after recovery: new records follow the recovered end.
    more = kit.make_records(100, PARTITIONS, seed=1, tag="after")
    kit.produce_confluent(b.bootstrap, topic, more)
    for r in more:
        assert r.offset == len(got[r.partition]) + r.index // PARTITIONS


def batches(path: Path) -> list[tuple[int, int, int]]:
    """(base offset, file position, total size) of each batch in a segment file."""
    data = path.read_bytes()
    out, pos = [], 0
    while pos + 12 <= len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        if length < 49 or pos + 12 + length > len(data):  # 61-byte minimum batch
            break
        out.append((base, pos, 12 + length))
        pos += 12 + length
    assert out and pos == len(data), (
        f"segment {path}: {len(data) - pos} trailing bytes are not a whole batch "
        "(after kill -9 the file should end with the last acknowledged batch)")
    return out


@pytest.mark.parametrize("damage", ["append-garbage", "truncate-mid-batch"])
def test_damaged_tail_is_truncated_on_restart(broker_factory, damage):
    b = broker_factory()
    topic = kit.unique_topic("crash-tail")
    kit.create_topic(b.bootstrap, topic, 2)
    recs = []
    for n, codec in enumerate(kit.CODECS):
        chunk = kit.make_records(2000, 2, seed=300 + n, tag=codec)
        for r in chunk:
            r.index += 2000 * n
            r.timestamp += 2000 * n
        kit.produce_confluent(b.bootstrap, topic, chunk, {"compression.type": codec})
        recs += chunk
    b.kill9()  # unclean: the broker must check the log tail when it starts again

    pdir = b.partition_dir(topic, 0)
    seg = max(pdir.glob("*.log"), key=lambda f: int(f.stem))
    segment_batches = batches(seg)
    last_base, last_pos, last_size = segment_batches[-1]
    end0 = max(r.offset for r in recs if r.partition == 0) + 1
    if damage == "append-garbage":
        with open(seg, "ab") as f:
            f.write(random.Random(5).randbytes(777))
        survivors0 = end0
    else:
        os.truncate(seg, last_pos + last_size // 2)
        survivors0 = last_base
    assert survivors0 > 0

    b.start()
    log = b.log_text(since_start=True)
    assert re.search("truncat", log, re.I), f"no truncation logged:\n{log[-5000:]}"

    expected = [r for r in recs if r.partition == 1 or r.offset < survivors0]
    got = kit.retry(lambda: kit.consume_confluent(b.bootstrap, topic, 2))
    kit.assert_same_records(expected, got)

    more = kit.make_records(50, 1, seed=9, tag="after")
    kit.produce_confluent(b.bootstrap, topic, more)
    assert [r.offset for r in more] == list(range(survivors0, survivors0 + 50))
    got = kit.consume_confluent(b.bootstrap, topic, 2, start={0: survivors0, 1: 0})
    kit.assert_same_records(more + [r for r in recs if r.partition == 1], got,
                            contiguous_from=None)
