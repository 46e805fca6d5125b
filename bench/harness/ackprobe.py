"""Acknowledgement probe for failover measurements (run as its own process, so the harness's
sampling and waiting never delay a delivery callback):

    ackprobe.py produce --bootstrap B --topic T --partition P --rate N --out ACKS
    ackprobe.py verify  --bootstrap B --topic T --partition P --acks ACKS --out JSON

`produce`: an idempotent acks=all confluent-kafka producer (librdkafka defaults otherwise)
sending N records/s to one partition until SIGTERM, then flushing. Each record's value starts
with its sequence number. One line per delivery report, written as it arrives:
`A seq send_t ack_t offset` or `E seq send_t ack_t error`, where the times are
time.monotonic() (CLOCK_MONOTONIC: the clock the harness reads when it sends SIGKILL): send_t
when produce() was called, ack_t when the delivery callback ran (poll() is called at least
every 2 ms). Last line: `DONE sent acked errors`.

`verify`: reads the partition from the start to its high watermark and checks every
acknowledged record against it: lost (acknowledged, not read), misplaced (read at another
offset than acknowledged), duplicated (read more than once), unacknowledged reads. JSON out.
"""
from __future__ import annotations

import argparse
import json
import signal
import sys
import time
import uuid
from collections import Counter

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition

PAD = b" ackprobe " + b"x" * 80


def produce(a) -> int:
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    out = open(a.out, "w", buffering=1)
    p = Producer({"bootstrap.servers": a.bootstrap, "enable.idempotence": True, "acks": "all"})
    counts = {"acked": 0, "errors": 0}

    def report(seq: int, sent: float):
        def cb(err, msg):
            now = time.monotonic()
            if err is not None:
                counts["errors"] += 1
                out.write(f"E {seq} {sent:.6f} {now:.6f} {str(err).replace(chr(10), ' ')}\n")
            else:
                counts["acked"] += 1
                out.write(f"A {seq} {sent:.6f} {now:.6f} {msg.offset()}\n")
        return cb

    interval = 1.0 / a.rate
    seq = 0
    due = time.monotonic()
    while not stop:
        now = time.monotonic()
        if now >= due:
            try:
                p.produce(a.topic, b"%010d" % seq + PAD, partition=a.partition,
                          on_delivery=report(seq, now))
                seq += 1
                due = max(due + interval, now - interval)  # no burst after a stall
            except BufferError:
                pass
        p.poll(max(0.0, min(due - time.monotonic(), 0.002)))
    left = p.flush(120)
    out.write(f"DONE {seq} {counts['acked']} {counts['errors']} unflushed={left}\n")
    out.close()
    return 0


def read_acks(path: str) -> tuple[dict[int, int], list[str], int]:
    """(seq -> acknowledged offset, error lines, records sent or -1 without a DONE line)."""
    acked, errors, sent = {}, [], -1
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "A" and len(parts) == 5:
                acked[int(parts[1])] = int(parts[4])
            elif parts[0] == "E":
                errors.append(line.strip())
            elif parts[0] == "DONE":
                sent = int(parts[1])
    return acked, errors, sent


def verify(a) -> int:
    acked, errors, sent = read_acks(a.acks)
    c = Consumer({"bootstrap.servers": a.bootstrap, "group.id": f"ackprobe-{uuid.uuid4().hex[:8]}",
                  "enable.auto.commit": False, "enable.partition.eof": True})
    tp = TopicPartition(a.topic, a.partition)
    low, high = c.get_watermark_offsets(tp, timeout=30)
    c.assign([TopicPartition(a.topic, a.partition, OFFSET_BEGINNING)])
    at: dict[int, int] = {}  # offset -> seq
    deadline = time.time() + 300
    done = high <= low
    while not done and time.time() < deadline:
        for m in c.consume(1000, timeout=1.0):
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    done = m.offset() >= high
                    continue
                raise SystemExit(f"consume: {m.error()}")
            at[m.offset()] = int(m.value()[:10])
            done = m.offset() + 1 >= high
    c.close()
    seqs = Counter(at.values())
    read = set(seqs)
    lost = sorted(s for s in acked if s not in read)
    misplaced = sorted(s for s, o in acked.items() if s in read and at.get(o) != s)
    result = {"sent": sent, "acknowledged": len(acked), "delivery_errors": len(errors),
              "first_errors": errors[:5], "log_start": low, "high_watermark": high,
              "read": len(at), "complete_read": done,
              "lost": len(lost), "first_lost": lost[:10],
              "misplaced": len(misplaced), "first_misplaced": misplaced[:10],
              "duplicated": sum(1 for n in seqs.values() if n > 1),
              "read_unacknowledged": len(read - set(acked))}
    result["ok"] = (done and not lost and not misplaced and not result["duplicated"]
                    and not errors and sent == len(acked))
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps(result))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("produce", "verify"):
        s = sub.add_parser(name)
        s.add_argument("--bootstrap", required=True)
        s.add_argument("--topic", required=True)
        s.add_argument("--partition", type=int, default=0)
        s.add_argument("--out", required=True)
        if name == "produce":
            s.add_argument("--rate", type=float, default=500)
        else:
            s.add_argument("--acks", required=True)
    a = ap.parse_args()
    return produce(a) if a.cmd == "produce" else verify(a)


if __name__ == "__main__":
    sys.exit(main())
