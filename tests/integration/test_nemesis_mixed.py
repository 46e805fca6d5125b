"""Mixed nemesis: faults of five kinds, one or two at a time and overlapping, on a random schedule,
against three brokers on a three-member etcd, while idempotent acks=all producers write unique
values and consumers read.

The cluster: each broker in a network namespace of its own on a bridge where the three etcd
members listen (netkit.py), its log dir a small tmpfs of its own; an RF=3 topic of 6 partitions
with min.insync.replicas=2 and unclean election off. Two producers, confluent-kafka ("py-n") and
Kafka's Java client ("java-n", java/.../AckedProducer.java), write round-robin over the partitions
and remember every acknowledgement's offset; two assign()-based confluent-kafka consumers read
every partition from offset 0 throughout, remembering every (partition, offset, value) polled.

Each round takes one or two of these, the second starting while the first is held (or just
after), each held for a random time, then heals them and waits until the cluster has recovered
(the etcd members healthy, every broker registered and in every ISR as every broker describes
it, both producers acknowledging and both consumers reading again):

* kill: SIGKILL of a broker, restarted after the hold;
* pause: SIGSTOP of a broker for longer than the lease TTL (strata.etcd.lease.ttl.ms), then SIGCONT;
* partition: the leader of a partition cut off from the other brokers, etcd and the clients
  (its veth's bridge end down), then reconnected;
* etcd: one etcd member SIGKILLed, restarted after the hold;
* disk: the log dir of a follower of a partition filled to the last byte, then freed.

The checker, after the last round: the producers flushed, every partition read from offset 0;
every acknowledged value there exactly once (lost, duplicated), each producer's values in send
order per partition (reordered), every (partition, offset) a consumer polled or a producer had
acknowledged holding the same value (offset-changed), each consumer's offsets per partition
growing from poll to poll with no gap (non-monotonic polls), nothing read that was not sent, no
delivery error, and every replica's log byte-identical. One summary line gives the counts.

STRATA_MIXED_NEMESIS_ROUNDS sets the number of rounds (10 here, 100 in scripts/soak.sh);
STRATA_NEMESIS_SEED the seed of the schedule (printed; the faults' victims also depend on the
leaders seen when each fault starts, so a seed replays the plan, not every detail).
"""
from __future__ import annotations

import errno
import logging
import os
import random
import shutil
import signal
import struct
import subprocess
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import NewTopic

import kit
import test_nemesis
from kit import wait_until
from netkit import Net, net, partitioned  # noqa: F401 (net: fixture)
from test_cluster import PREFIX, leaders, metadata
from test_replication import JOIN_WITHIN, wait_identical

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's cluster mode")

ROUNDS = int(os.environ.get("STRATA_MIXED_NEMESIS_ROUNDS", "10"))
PARTITIONS = test_nemesis.PARTITIONS  # the Java producer writes round-robin over these
KINDS = ("kill", "pause", "partition", "etcd", "disk")

# replica.lag.time.max.ms: a follower whose disk is full, or that is cut off, leaves the ISR
# after this long (30 s by default: far longer than a fault is held here).
LAG_MS = 4000
BROKER_CONFIG = {
    "replica.lag.time.max.ms": str(LAG_MS),
    "unclean.leader.election.enable": "false",
    # Leaderships go back to their preferred replicas soon after a broker returns: the
    # next round's leaders are spread again, and preferred elections join the faults.
    "leader.imbalance.check.interval.seconds": "5",
}
# Each broker's log dir: a tmpfs of this size (the disk fault fills it). The topic takes under
# 1 MiB a round, so the disk stays below strata.log.dir.high.mark.percent (95) otherwise.
DISK_MB = max(256, 4 * ROUNDS)
FILLER = ".nemesis-filler"

# The clients' Produce timeout and, a second longer, socket timeout: a request to a broker
# that was cut off or stopped is given up after this long and sent again elsewhere.
REQUEST_TIMEOUT_MS = 5000
SOCKET_TIMEOUT_MS = REQUEST_TIMEOUT_MS + 1000
# Large: a record waits out any fault (the checker wants no delivery error).
MESSAGE_TIMEOUT_MS = 600_000
FLUSH_WITHIN = 120
# librdkafka debug contexts for the confluent-kafka producer (e.g. "eos,msg,protocol"),
# written to py-producer.log in the test's directory.
CLIENT_DEBUG = os.environ.get("STRATA_NEMESIS_CLIENT_DEBUG", "")


def lease_ttl_s(b) -> float:
    return int(b.config["strata.etcd.lease.ttl.ms"]) / 1000


def recover_within(ttl_s: float) -> float:
    """From the heal until every broker is in every ISR: a paused or cut broker learns its lease
    is gone at its next renewal and registers again (a TTL at most; a restarted one may wait out
    its old registration), then catches up (JOIN_WITHIN); one whose disk was full waits out its
    fetcher's backoff; the ISR of a partition that had lost its leader waits for an election."""
    return 2 * ttl_s + LAG_MS / 1000 + JOIN_WITHIN


# ---- clients --------------------------------------------------------------------------

class PyProducer:
    """An idempotent acks=all confluent-kafka producer writing "py-n" to partition n % 6 from a
    thread of its own (a few hundred a second): what it sent and what was acknowledged where,
    in order."""

    def __init__(self, bootstrap: str, topic: str, debug_log: Path | None = None):
        self.topic = topic
        conf = {"bootstrap.servers": bootstrap, "enable.idempotence": True,
                "acks": "all", "linger.ms": 5,
                # One request in flight per broker: with more, a request refused before its
                # append (KAFKA_STORAGE_ERROR from a full disk, NOT_ENOUGH_REPLICAS) makes
                # the ones pipelined behind it fail with OUT_OF_ORDER_SEQUENCE_NUMBER, and
                # librdkafka (2.16) answers that by bumping the producer epoch for every
                # partition, re-sending a timed-out, possibly written batch of another
                # partition under the new epoch: a duplicate no broker can recognise
                # (librdkafka issue #4953; seen here as the same values under producer
                # epochs 0 and 1). The Java producer keeps Kafka's default of 5.
                "max.in.flight.requests.per.connection": 1,
                "request.timeout.ms": REQUEST_TIMEOUT_MS,
                "socket.timeout.ms": SOCKET_TIMEOUT_MS,
                "message.timeout.ms": MESSAGE_TIMEOUT_MS,
                "error_cb": self._client_error}
        if CLIENT_DEBUG and debug_log is not None:
            # librdkafka's own account of retries, epoch bumps and sequence errors.
            logger = logging.getLogger(f"py-producer-{topic}")
            logger.setLevel(logging.DEBUG)
            handler = logging.FileHandler(debug_log)
            handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
            logger.addHandler(handler)
            logger.propagate = False
            conf.update({"debug": CLIENT_DEBUG, "logger": logger})
        self.p = Producer(conf)
        self.sent: dict[int, list[bytes]] = {p: [] for p in range(PARTITIONS)}
        self.acked: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(PARTITIONS)}
        self.errors: list[str] = []  # failed deliveries and fatal client errors
        self.client_errors: Counter = Counter()  # informational (transport, ...)
        self.acks = 0
        self.unflushed = -1
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _client_error(self, err):
        self.client_errors[err.name()] += 1
        if err.fatal():
            self.errors.append(f"fatal: {err}")

    def _delivered(self, err, msg):
        if err is not None:
            self.errors.append(f"{msg.value()!r} to partition {msg.partition()}: {err}")
        else:
            self.acked[msg.partition()].append((msg.offset(), msg.value()))
            self.acks += 1

    def _run(self):
        i = 0
        while not self.stop.is_set():
            value = b"py-%d" % i
            try:
                self.p.produce(self.topic, value, partition=i % PARTITIONS,
                               on_delivery=self._delivered)
            except BufferError:
                self.p.poll(0.1)
                continue
            self.sent[i % PARTITIONS].append(value)
            i += 1
            self.p.poll(0.005)
        self.unflushed = self.p.flush(FLUSH_WITHIN)

    def finish(self) -> None:
        self.stop.set()
        self.thread.join(FLUSH_WITHIN + 30)
        assert not self.thread.is_alive() and self.unflushed == 0, (
            f"the confluent-kafka producer did not flush: {self.unflushed} left")

    def sent_count(self) -> int:
        return sum(len(v) for v in self.sent.values())


class JavaProducer(test_nemesis.JavaProducer):
    """test_nemesis.py's Java producer, also remembering each acknowledgement's offset."""

    def __init__(self, bootstrap: str, topic: str):
        self.acked_at: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(PARTITIONS)}
        self.acks = 0
        super().__init__(bootstrap, topic)

    def _read(self):
        for line in self.proc.stdout:
            parts = line.split()
            self.lines += 1
            if parts and parts[0] == "ACK":
                p, offset, value = int(parts[1]), int(parts[2]), parts[3].encode()
                self.acked[p].append(value)
                self.acked_at[p].append((offset, value))
                self.acks += 1
            elif parts and parts[0] == "ERR":
                self.errors.append(line.strip())
            elif parts and parts[0] == "DONE":
                self.sent = int(parts[1].split("=")[1])


# Consumer errors that mean a position was lost, not a broker out of reach for a while.
POSITION_ERRORS = {KafkaError.OFFSET_OUT_OF_RANGE, KafkaError._AUTO_OFFSET_RESET,
                   KafkaError._LOG_TRUNCATION}


class Reader:
    """An assign()-based consumer of every partition from offset 0, polling from a thread of its
    own: every (partition, offset) -> value it got, and each poll that went back (an offset not
    above the last one of its partition) or skipped offsets. auto.offset.reset=error: a position
    the broker calls out of range is reported, not silently moved."""

    def __init__(self, name: str, bootstrap: str, topic: str, extra: dict | None = None):
        self.name = name
        self.c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-{name}",
                           "enable.auto.commit": False, "enable.auto.offset.store": False,
                           "auto.offset.reset": "error", "enable.partition.eof": False,
                           "check.crcs": True, "socket.timeout.ms": SOCKET_TIMEOUT_MS,
                           "fetch.wait.max.ms": 200, **(extra or {})})
        self.c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
        self.seen: dict[int, dict[int, bytes]] = {p: {} for p in range(PARTITIONS)}
        self.last = {p: -1 for p in range(PARTITIONS)}
        self.count = 0
        self.polls = 0
        self.non_monotonic: list[str] = []  # one per poll that went back
        self.gaps: list[str] = []
        self.errors: Counter = Counter()
        self.position_errors: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            while not self.stop.is_set():
                msgs = self.c.consume(num_messages=500, timeout=0.2)
                self.polls += 1
                back = []
                for m in msgs:
                    err = m.error()
                    if err is not None:
                        self.errors[err.name()] += 1
                        if err.code() in POSITION_ERRORS or err.fatal():
                            self.position_errors.append(f"poll {self.polls}: {err}")
                        continue
                    p, off = m.partition(), m.offset()
                    if off <= self.last[p]:
                        back.append(f"{p}@{off} after {p}@{self.last[p]}")
                    elif off != self.last[p] + 1:
                        self.gaps.append(f"poll {self.polls}: {p}@{off} after {p}@{self.last[p]}")
                    self.last[p] = max(self.last[p], off)
                    if off in self.seen[p] and self.seen[p][off] != m.value():
                        back.append(f"{p}@{off} read as {self.seen[p][off]!r}, then {m.value()!r}")
                    self.seen[p][off] = m.value()
                    self.count += 1
                if back:
                    self.non_monotonic.append(f"poll {self.polls}: " + ", ".join(back[:5]))
        finally:
            self.c.close()

    def finish(self) -> None:
        self.stop.set()
        self.thread.join(30)


# ---- the nemesis ----------------------------------------------------------------------

@dataclass
class Fault:
    kind: str
    hold: float  # seconds from its start to its heal
    offset: float  # seconds from the round's start to its start
    target: int | None = None  # broker node, or etcd member index
    note: str = ""
    started: float | None = None
    healed: bool = False

    def describe(self) -> str:
        what = {"kill": f"SIGKILL broker {self.target}", "pause": f"SIGSTOP broker {self.target}",
                "partition": f"cut off broker {self.target}",
                "etcd": f"SIGKILL etcd member m{self.target}",
                "disk": f"fill broker {self.target}'s disk"}[self.kind]
        note = f" ({self.note})" if self.note else ""
        return f"+{self.offset:.1f}s {what}{note} for {self.hold:.1f}s"


def hold_until(t: float) -> None:
    """Sleeps until monotonic time `t`: a fault is held this long (not a wait for a condition)."""
    while (left := t - time.monotonic()) > 0:
        time.sleep(min(left, 0.2))


def fill_disk(path: Path) -> tuple[int, int]:
    """Fills the filesystem of `path` to the last page with a filler file -> (its bytes, bytes
    left free)."""
    fd = os.open(path / FILLER, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        st = os.statvfs(path)
        try:
            os.posix_fallocate(fd, 0, st.f_bavail * st.f_frsize)
        except OSError as e:  # the broker wrote meanwhile: top it up below
            if e.errno != errno.ENOSPC:
                raise
        for chunk in (1 << 20, 1 << 16, 4096):
            block = b"\0" * chunk
            while True:
                try:
                    os.write(fd, block)
                except OSError as e:
                    if e.errno != errno.ENOSPC:
                        raise
                    break
        size = os.fstat(fd).st_size
    finally:
        os.close(fd)
    st = os.statvfs(path)
    return size, st.f_bavail * st.f_frsize


class Nemesis:
    """Starts and heals faults on the cluster and waits for it to recover."""

    def __init__(self, net: Net, etcd, brokers, disks: dict[int, Path]):
        self.net = net
        self.etcd = etcd
        self.nodes = {n: b for n, b in enumerate(brokers, start=1)}
        self.disks = disks
        self.ttl_s = lease_ttl_s(brokers[0])
        self.topic = ""
        self.rnd = random.Random(0)
        self.active: list[Fault] = []
        self.history: list[str] = []
        self.kinds: Counter = Counter()
        self.keep_data = False  # set on failure: the fixture copies the log dirs out of tmpfs
        self.progress = None  # () -> counts that grow while clients get through
        self.workdir = disks[1].parent

    # -- schedule -------------------------------------------------------------------------

    def hold_for(self, kind: str) -> float:
        ttl, r = self.ttl_s, self.rnd
        lag = LAG_MS / 1000
        # Some shorter than the lease TTL (or the lag time), most longer.
        return {"kill": r.uniform(1, 3 * ttl),  # restarted before or after its lease is out
                "pause": r.uniform(ttl + 0.5, 2 * ttl + 2),  # always past the lease
                "partition": r.uniform(1, 3 * ttl + 2),
                "etcd": r.uniform(2, 4 * ttl),
                "disk": r.uniform(2, 2 * lag + 2)}[kind]  # often out of the ISR for it

    def plan(self) -> list[Fault]:
        kinds = self.rnd.sample(KINDS, 1 if self.rnd.random() < 0.35 else 2)
        faults = [Fault(kinds[0], self.hold_for(kinds[0]), 0.0)]
        for kind in kinds[1:]:
            # Mostly while the first is held, sometimes just after.
            faults.append(Fault(kind, self.hold_for(kind),
                                self.rnd.uniform(0, 1.2 * faults[0].hold)))
        return faults

    def run_round(self, r: int) -> None:
        faults = self.plan()
        t0 = time.monotonic()
        try:
            while any(not f.healed for f in faults):
                due = [(t0 + f.offset, 0, i) if f.started is None else (f.started + f.hold, 1, i)
                       for i, f in enumerate(faults) if not f.healed]
                at, heal, i = min(due)
                hold_until(at)
                (self.heal if heal else self.start)(faults[i])
        finally:
            for f in faults:  # on an error: leave nothing behind
                if f.started is not None and not f.healed:
                    self.heal(f)
        healed_at = time.monotonic()
        plan = "; ".join(f.describe() for f in faults)
        self.history.append(f"round {r}: {plan}")
        self.wait_recovered(f"round {r} ({plan})")
        print(f"round {r}: {plan}; recovered {time.monotonic() - healed_at:.1f}s after the "
              f"last heal", flush=True)

    # -- faults ---------------------------------------------------------------------------

    def healthy(self) -> list[int]:
        """Brokers under no fault now."""
        taken = {f.target for f in self.active if f.kind != "etcd"}
        return [n for n in self.nodes if n not in taken]

    def view(self) -> dict[int, tuple[int, list[int]]]:
        """partition -> (leader, replicas) as a broker under no fault describes them."""
        for n in self.rnd.sample(self.healthy(), len(self.healthy())):
            try:
                return leaders(self.nodes[n], self.topic)
            except Exception:  # noqa: BLE001 (another broker may answer)
                continue
        return {}

    def pick(self, kind: str) -> tuple[int, str]:
        healthy = self.healthy()
        if kind == "etcd":
            return self.rnd.randrange(len(self.etcd.members)), ""
        if kind in ("kill", "pause"):
            return self.rnd.choice(healthy), ""
        view = self.view()
        parts = self.rnd.sample(sorted(view), len(view))
        for p in parts:
            leader, replicas = view[p]
            if kind == "partition" and leader in healthy:
                return leader, f"leader of {p}"
            followers = [n for n in replicas if n != leader and n in healthy]
            if kind == "disk" and followers:
                return self.rnd.choice(followers), f"follower of {p}, led by {leader}"
        return self.rnd.choice(healthy), f"no {'leader' if kind == 'partition' else 'follower'} " \
                                         f"among {healthy} in {view}"

    def start(self, f: Fault) -> None:
        f.target, f.note = self.pick(f.kind)
        if f.kind == "kill":
            self.nodes[f.target].kill9()
        elif f.kind == "pause":
            os.kill(self.nodes[f.target].proc.pid, signal.SIGSTOP)
        elif f.kind == "partition":
            self.net.cut(f.target)
        elif f.kind == "etcd":
            self.etcd.stop(f.target, kill=True)
        elif f.kind == "disk":
            size, free = fill_disk(self.disks[f.target])
            f.note += f"; {size >> 20} MiB filler, {free} bytes left"
            assert free < (1 << 20), f"broker {f.target}'s disk not full: {free} bytes free"
        f.started = time.monotonic()
        self.active.append(f)
        self.kinds[f.kind] += 1

    def heal(self, f: Fault) -> None:
        f.healed = True
        if f in self.active:
            self.active.remove(f)
        if f.kind == "kill":
            self.nodes[f.target].start()
        elif f.kind == "pause":
            os.kill(self.nodes[f.target].proc.pid, signal.SIGCONT)
        elif f.kind == "partition":
            self.net.heal(f.target)
        elif f.kind == "etcd":
            self.etcd.start(f.target)
        elif f.kind == "disk":
            (self.disks[f.target] / FILLER).unlink()

    def heal_everything(self, restart: bool) -> list[str]:
        """Heals every fault still on (SIGCONT before anything else); with `restart`, starts
        brokers and etcd members that are down. Returns what failed."""
        problems = []
        for f in sorted(self.active, key=lambda f: f.kind != "pause"):
            if f.kind == "kill" and not restart:
                f.healed = True
                self.active.remove(f)
                continue
            try:
                self.heal(f)
            except Exception as e:  # noqa: BLE001 (heal the rest)
                problems.append(f"healing {f.describe()}: {e}")
        self.net.heal_all()
        for d in self.disks.values():
            (d / FILLER).unlink(missing_ok=True)
        if restart:
            for i, m in enumerate(self.etcd.members):
                if m["proc"] is None:
                    self.etcd.start(i)
        return problems

    # -- recovery -------------------------------------------------------------------------

    def describe_all(self) -> dict:
        """partition -> (leader, ISR) as each broker describes them (or its error)."""
        out = {}
        for n, b in self.nodes.items():
            try:
                md = metadata(b, self.topic)
                out[n] = {"brokers": sorted(md.brokers),
                          "partitions": {p: (pm.leader, sorted(pm.isrs))
                                         for p, pm in md.topics[self.topic].partitions.items()}}
            except Exception as e:  # noqa: BLE001 (shown while waiting)
                out[n] = repr(e)
        return out

    def recovered(self) -> bool:
        views = self.describe_all()
        return all(isinstance(v, dict) and v["brokers"] == [1, 2, 3]
                   and len(v["partitions"]) == PARTITIONS
                   and all(leader in (1, 2, 3) and isr == [1, 2, 3]
                           for leader, isr in v["partitions"].values())
                   for v in views.values())

    def wait_recovered(self, what: str) -> None:
        for n, b in self.nodes.items():
            assert b.running, (f"{what}: broker {n} is not running "
                               f"(exit code {b.proc and b.proc.returncode}):\n{b.log_tail(8000)}")
        within = recover_within(self.ttl_s)
        self.etcd.wait_healthy(within)
        registered = f"{PREFIX}/brokers/"
        wait_until(lambda: sorted(self.etcd.get_prefix(registered)) ==
                   [f"{registered}{n}" for n in (1, 2, 3)], within,
                   f"{what}: every broker registered in etcd",
                   lambda: sorted(self.etcd.get_prefix(registered)))
        wait_until(self.recovered, within, f"{what}: every broker in every ISR, as every broker "
                   f"describes it", self.describe_all, interval=0.5)
        if self.progress is not None:
            before = self.progress()
            wait_until(lambda: all(a > b for a, b in zip(self.progress(), before)),
                       within + SOCKET_TIMEOUT_MS / 1000,
                       f"{what}: both producers acknowledged and both consumers read again",
                       lambda: (before, self.progress()))


@pytest.fixture
def mixed_cluster(net, tmp_path, broker_factory):
    """Three brokers (netkit.partitioned) on three etcd members, each broker's log dir a tmpfs
    of DISK_MB -> Nemesis. At teardown: healed, stopped, the tmpfs unmounted (copied out first
    when the test failed, as nemesis.keep_data says)."""
    disks: dict[int, Path] = {}
    nemesis = None
    try:
        for n in (1, 2, 3):
            d = tmp_path / f"disk-{n}"
            d.mkdir()
            r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK_MB}m,mode=0755",
                                f"strata-nemesis-{n}", str(d)], capture_output=True, text=True)
            if r.returncode != 0:
                message = f"cannot mount a tmpfs log dir: {r.stderr.strip()}"
                if os.geteuid() == 0:
                    pytest.fail(message)
                pytest.skip(message + " (mount needs root)")
            disks[n] = d
        with partitioned(net, tmp_path, broker_factory, etcd_members=3, extra=BROKER_CONFIG,
                         per_node={n: {"log.dirs": str(d)} for n, d in disks.items()}) \
                as (etcd, brokers):
            for n, b in enumerate(brokers, start=1):
                b.data_dir = disks[n]  # what partition_dir() and wait_identical() read
            nemesis = Nemesis(net, etcd, brokers, disks)
            try:
                yield nemesis
            finally:
                for problem in nemesis.heal_everything(restart=False):
                    print(problem)
    finally:
        for n, d in disks.items():
            if nemesis is not None and nemesis.keep_data:
                shutil.copytree(d, tmp_path / f"data-{n}", ignore=shutil.ignore_patterns(FILLER),
                                dirs_exist_ok=True)
            if subprocess.run(["umount", str(d)], capture_output=True).returncode != 0:
                subprocess.run(["umount", "-l", str(d)], capture_output=True)


# ---- the checker ----------------------------------------------------------------------

def batch_at(b, topic: str, p: int, offset: int) -> str:
    """The header of the batch holding `offset` in broker `b`'s log of partition p: which
    producer session (id, epoch) and sequence wrote it, at which leader epoch."""
    for seg in sorted(b.partition_dir(topic, p).glob("*.log")):
        data = seg.read_bytes()
        pos = 0
        while pos + 61 <= len(data):
            base, length, leader_epoch = struct.unpack_from(">qii", data, pos)
            if length < 49 or pos + 12 + length > len(data):
                break
            last = base + struct.unpack_from(">i", data, pos + 23)[0]
            if base <= offset <= last:
                pid, epoch, seq = struct.unpack_from(">qhi", data, pos + 43)
                return (f"batch {base}..{last}: producer {pid} epoch {epoch} sequence {seq}, "
                        f"leader epoch {leader_epoch}")
            pos += 12 + length
    return "no batch"


def check(py: PyProducer, java: JavaProducer, readers: list[Reader],
          final: dict[int, list[tuple[int, bytes]]]) -> dict[str, list]:
    """What the final read shows against what was sent, acknowledged and polled: a list of
    examples per kind of anomaly (empty = none)."""
    at = {p: dict(records) for p, records in final.items()}
    counts = Counter(v for records in final.values() for _, v in records)
    where: dict[bytes, list[tuple[int, int]]] = {}
    for p, records in final.items():
        for off, v in records:
            if counts[v] > 1:
                where.setdefault(v, []).append((p, off))
    acked = [(p, off, v) for src in (py.acked, java.acked_at)
             for p, records in src.items() for off, v in records]
    acked_at = {v: (p, off) for p, off, v in acked}
    sent = {v for vs in py.sent.values() for v in vs} | {b"java-%d" % i
                                                         for i in range(max(java.sent, 0))}
    out: dict[str, list] = {
        "lost": [(p, off, v) for p, off, v in acked if v not in counts],
        "duplicated": [(v, copies, "acked at", acked_at.get(v)) for v, copies in where.items()],
        "reordered": [],
        "offset-changed": [],
        "non-monotonic polls": [f"{r.name} {x}" for r in readers for x in r.non_monotonic],
        "unsent": [v for v in counts if v not in sent],
        "holes": [(p, [o for o, _ in records][:3]) for p, records in final.items()
                  if [o for o, _ in records] != list(range(len(records)))],
        "consumer gaps": [f"{r.name} {x}" for r in readers for x in r.gaps],
        "consumer position errors": [f"{r.name} {x}" for r in readers for x in r.position_errors],
        "delivery errors": py.errors + java.errors,
    }
    for prefix in (b"py-", b"java-"):
        for p, records in final.items():
            seq = [int(v[len(prefix):]) for _, v in records if v.startswith(prefix)]
            out["reordered"] += [(p, a, b) for a, b in zip(seq, seq[1:]) if b < a]
    for p, off, v in acked:
        if at[p].get(off) != v:
            out["offset-changed"].append(f"acked {p}@{off}={v!r}, now {at[p].get(off)!r}")
    for r in readers:
        for p, seen in r.seen.items():
            for off, v in seen.items():
                if at[p].get(off) != v:
                    out["offset-changed"].append(f"{r.name} read {p}@{off}={v!r}, now "
                                                 f"{at[p].get(off)!r}")
    return out


# ---- the test -------------------------------------------------------------------------

@pytest.mark.timeout(240 + 45 * ROUNDS)
def test_mixed_overlapping_faults_lose_reorder_and_rewrite_nothing(mixed_cluster):
    nemesis = mixed_cluster
    brokers = list(nemesis.nodes.values())
    seed = int(os.environ.get("STRATA_NEMESIS_SEED") or random.SystemRandom().randrange(1 << 31))
    print(f"\nmixed nemesis: seed {seed} (STRATA_NEMESIS_SEED={seed} to replay), {ROUNDS} rounds, "
          f"lease TTL {nemesis.ttl_s}s, replica.lag.time.max.ms {LAG_MS}, log dirs tmpfs "
          f"{DISK_MB} MiB", flush=True)
    nemesis.rnd = random.Random(seed)
    topic = nemesis.topic = kit.unique_topic("mixed")
    a = kit.admin(brokers[0].bootstrap)
    a.create_topics([NewTopic(topic, PARTITIONS, 3, config={
        "min.insync.replicas": "2", "unclean.leader.election.enable": "false"})])[topic].result(30)
    wait_until(nemesis.recovered, JOIN_WITHIN, "every ISR full", nemesis.describe_all)

    bootstrap = [b.bootstrap for b in brokers]
    started = time.monotonic()
    py = PyProducer(",".join(bootstrap), topic, nemesis.workdir / "py-producer.log")
    readers: list[Reader] = []
    java = None
    final: dict[int, list[tuple[int, bytes]]] = {}
    failure = None
    try:
        py.thread.start()
        java = JavaProducer(",".join(bootstrap), topic)
        readers += [Reader("reader-a", ",".join(bootstrap), topic),
                    # Small fetches: many polls, each a chance to see a position go back.
                    Reader("reader-b", ",".join(reversed(bootstrap)), topic,
                           {"max.partition.fetch.bytes": 2048})]
        nemesis.progress = lambda: (py.acks, java.acks, *(r.count for r in readers))
        wait_until(lambda: py.acks >= 300 and java.acks >= 300, 60, "both producers under way",
                   lambda: (py.acks, java.acks, py.errors[:3], java.stderr[-2000:]))
        for r in range(ROUNDS):
            nemesis.run_round(r)
    except Exception as e:  # noqa: BLE001 (the checker still reports what was written)
        failure = e
        nemesis.keep_data = True
        print(f"FAILED in the rounds: {e}\nfaults so far:\n" + "\n".join(nemesis.history))
    finally:
        for problem in nemesis.heal_everything(restart=True):
            print(problem)
    try:
        if failure is not None:
            nemesis.wait_recovered("after the failure")
        py.finish()
        java.finish()
        got = kit.consume_confluent(brokers[0].bootstrap, topic, PARTITIONS, timeout=120)
        final = {p: [(m.offset(), m.value()) for m in got[p]] for p in range(PARTITIONS)}
        ends = {p: len(final[p]) for p in range(PARTITIONS)}
        wait_until(lambda: all(r.last[p] >= ends[p] - 1 for r in readers for p in ends), 60,
                   "both consumers at the end of every partition",
                   lambda: {r.name: (r.last, r.errors, r.position_errors[:3]) for r in readers})
    except Exception as e:  # noqa: BLE001 (reported below, after the counts)
        nemesis.keep_data = True
        if failure is None:
            failure = e
        else:
            print(f"and then: {e}")
    finally:
        py.stop.set()
        for r in readers:
            r.finish()
        if java is not None and java.proc.poll() is None:
            java.proc.kill()
    elapsed = time.monotonic() - started
    if not final:
        raise failure

    found = check(py, java, readers, final)
    acked = py.acks + java.acks
    read = sum(len(v) for v in final.values())
    faults = ", ".join(f"{k} {nemesis.kinds[k]}" for k in KINDS)
    # Informational: acknowledgements that came back below an earlier one's offset (a retried
    # request answered after a later request, as a duplicate of what it had written).
    late_acks = sum(b < a for src in (py.acked, java.acked_at) for records in src.values()
                    for (a, _), (b, _) in zip(records, records[1:]))
    print(f"mixed nemesis: seed {seed}, {ROUNDS} rounds ({faults}) in {elapsed:.0f}s: "
          f"sent {py.sent_count() + max(java.sent, 0)}, acknowledged {acked}, read {read}, "
          + ", ".join(f"{k} {len(v)}" for k, v in found.items())
          + f"; consumers polled {sum(r.count for r in readers)} records in "
          f"{sum(r.polls for r in readers)} polls, their errors "
          f"{dict(sum((r.errors for r in readers), Counter()))}; producer client errors "
          f"{dict(py.client_errors)}; acknowledgements below an earlier one's offset "
          f"{late_acks}", flush=True)
    if failure is not None:
        raise failure
    bad = {k: v[:5] for k, v in found.items() if v}
    for value, copies, _, _ in found["duplicated"][:5]:
        # A second copy under the same producer id and epoch: the broker took a retry as new.
        # Under a higher epoch: the client started a new session and sent it again.
        print(f"duplicate {value!r}: " + "; ".join(
            f"{p}@{off} in {batch_at(brokers[0], topic, p, off)}" for p, off in copies))
    history = "\n".join(nemesis.history)
    try:
        assert not bad, f"seed {seed}: {bad}\nfaults:\n{history}"
        for p in range(PARTITIONS):
            # Every value sent read back in send order per producer and partition (the Java
            # producer sends value n to partition n % 6).
            assert [v for _, v in final[p] if v.startswith(b"py-")] == py.sent[p], p
            assert [v for _, v in final[p] if v.startswith(b"java-")] == [
                b"java-%d" % n for n in range(p, java.sent, PARTITIONS)], p
        assert read == py.sent_count() + java.sent == acked, (
            read, py.sent_count(), java.sent, acked)
        wait_identical(brokers, topic, PARTITIONS)
    except BaseException:
        nemesis.keep_data = True
        raise
