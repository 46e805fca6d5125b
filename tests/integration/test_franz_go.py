"""franz-go (github.com/twmb/franz-go v1.22.3, with kadm v1.20.0) unchanged against the
broker, through the Go program in go/ (built by scripts/install-test-deps.sh into
go/bin/franzgo; its subcommands print JSON lines that are parsed here).

What is checked: an idempotent producer (franz-go's default) with each codec: every
acknowledged record at its own offset, offsets contiguous from 0 per partition, read back
byte-identical (key, value, null and empty values, headers in order, CreateTime) by a
franz-go consumer group and by librdkafka; the group's committed offsets (kadm's
OffsetFetch and librdkafka's) equal the end offsets, and the group resumes there. A
transactional producer committing and aborting in turn: every record at the offset its send
order and one marker per transaction and partition give it, ListOffsets at both isolation
levels at the end, a read_committed consumer (franz-go's and librdkafka's) reads exactly the
committed records and a read_uncommitted one all of them. A GroupTransactSession copying a
topic (read_committed input, output and offsets in one transaction, some transactions
aborted on purpose and redone): the output's read_committed view holds every committed input
record exactly once, the aborted copies are visible only to read_uncommitted, and the
group's offsets are the input's end offsets. The transaction tests run at transaction.version
2 and 1. Last, franz-go's next transaction is not refused while the previous one's markers
are written (the partition leader retries CONCURRENT_TRANSACTIONS with the coordinator, as
Kafka's does, every add.partitions.to.txn.retry.backoff.ms for up to its .max.ms).
"""
from __future__ import annotations

import base64
import json
import subprocess
from collections import Counter

import pytest

import conftest
import kit

GO_DIR = kit.IT_DIR / "go"
BIN = GO_DIR / "bin" / "franzgo"
SOURCES = [*GO_DIR.glob("*.go"), GO_DIR / "go.mod", GO_DIR / "go.sum"]
CONFIG = {
    "transaction.state.log.num.partitions": "4",  # fast to create and load
    "offsets.topic.num.partitions": "4",
    "group.initial.rebalance.delay.ms": "0",  # the only member joins at once
}
TIMEOUT = 90  # seconds a franzgo run may take (it gives up by itself at this)


@pytest.fixture(scope="module", autouse=True)
def franzgo_built():
    if not BIN.exists():
        pytest.fail(f"{BIN} missing: run scripts/install-test-deps.sh")
    stale = [p.name for p in SOURCES if p.stat().st_mtime > BIN.stat().st_mtime]
    if stale:
        pytest.fail(f"{BIN} is older than {stale}: run scripts/install-test-deps.sh")


@pytest.fixture(scope="module")
def fbroker(tmp_path_factory):
    """One broker for the module with a small __transaction_state and __consumer_offsets."""
    b = conftest._make_broker(tmp_path_factory.mktemp("broker"), CONFIG)
    yield b
    b.stop()
    conftest._fail_on_sanitizer_reports([b])
    conftest._fail_on_unclean_stops([b])


@pytest.fixture(scope="module", params=["tv2", "tv1"])
def txbroker(request, tmp_path_factory):
    """A broker for the transaction tests at transaction.version 2 (KIP-890 part 2: the
    Produce adds the partition, the epoch is bumped at every end; Kafka 4.1's and Strata's
    default) and 1 (AddPartitionsToTxn, AddOffsetsToTxn from the client; Kafka downgraded by
    kafka-features, Strata by strata.transaction.version)."""
    from test_transactions import make_txn_broker
    b = make_txn_broker(tmp_path_factory, CONFIG, request.param)
    yield b
    b.stop()
    conftest._fail_on_sanitizer_reports([b])
    conftest._fail_on_unclean_stops([b])


# ---- helpers ---------------------------------------------------------------------------

def franzgo(cmd: str, bootstrap: str, **flags) -> list[dict]:
    """Runs `franzgo CMD -brokers BOOTSTRAP -flag value ...` to the end (it must exit 0);
    its JSON lines, with bytes decoded (see decode)."""
    args = [str(BIN), cmd, "-brokers", bootstrap, "-timeout", f"{TIMEOUT}s"]
    for k, v in flags.items():
        args += [f"-{k.replace('_', '-')}", str(v)]
    r = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT + 30)
    assert r.returncode == 0, (f"{' '.join(args)} exited {r.returncode}:\n"
                               f"{r.stderr[-6000:]}\nstdout tail:\n{r.stdout[-2000:]}")
    return [decode(json.loads(line)) for line in r.stdout.splitlines()]


def decode(ev: dict) -> dict:
    """Base64 keys, values and header values (Go's JSON for []byte) to bytes; null stays None."""
    def b(v):
        return None if v is None else base64.b64decode(v)
    if "key" in ev:
        ev["key"], ev["value"] = b(ev["key"]), b(ev["value"])
        ev["headers"] = [(h["key"], b(h["value"])) for h in ev["headers"] or []]
    return ev


def events(lines: list[dict], kind: str) -> list[dict]:
    return [e for e in lines if e["event"] == kind]


def content(r: dict) -> tuple:
    """What must survive the round trip byte for byte."""
    return r["key"], r["value"], r["headers"], r["timestamp"]


def by_position(recs: list[dict], what: str) -> dict[tuple[int, int], dict]:
    """{(partition, offset): record}; no two records at one position."""
    out: dict[tuple[int, int], dict] = {}
    for r in recs:
        pos = (r["partition"], r["offset"])
        assert pos not in out, f"{what}: two records at partition {pos[0]} offset {pos[1]}"
        out[pos] = r
    return out


def assert_same(got: list[dict], want: list[dict], what: str) -> None:
    """Exactly the records of `want` at their positions, each identical, in offset order
    per partition."""
    have, exp = by_position(got, what), by_position(want, f"{what} (expected)")
    missing, extra = sorted(set(exp) - set(have)), sorted(set(have) - set(exp))
    assert not missing and not extra, (f"{what}: {len(missing)} missing, first {missing[:5]}; "
                                       f"{len(extra)} unexpected, first {extra[:5]}")
    for pos, r in exp.items():
        assert content(have[pos]) == content(r), f"{what}: partition {pos[0]} offset {pos[1]}"
    for p in {p for p, _ in have}:
        offsets = [r["offset"] for r in got if r["partition"] == p]
        assert offsets == sorted(offsets), f"{what}: partition {p} delivered out of order"


def offsets(bootstrap: str, topics: list[str], group: str | None = None) -> dict:
    """kadm's view: {"end", "stable" (read_committed end), "start"[, "group"]} as
    {topic: {partition: offset}}."""
    flags = {"topics": ",".join(topics)}
    if group:
        flags["group"] = group
    [ev] = franzgo("offsets", bootstrap, **flags)
    return {k: {t: {int(p): o for p, o in ps.items()} for t, ps in v.items()}
            for k, v in ev.items() if k != "event"}


def committed_offsets(bootstrap: str, group: str) -> dict[tuple[str, int], int]:
    """The group's committed offsets as librdkafka's AdminClient reads them."""
    from confluent_kafka import ConsumerGroupTopicPartitions
    a = kit.admin(bootstrap)
    [f] = a.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)],
                                        request_timeout=30).values()
    return {(tp.topic, tp.partition): tp.offset for tp in f.result(timeout=60).topic_partitions}


def librdkafka_read(bootstrap: str, topic: str, partitions: int, isolation: str) -> list[dict]:
    """Every record up to the high watermark, read by confluent-kafka with `isolation`."""
    got = kit.consume_confluent(bootstrap, topic, partitions,
                                extra={"isolation.level": isolation})
    return [{"partition": p, "offset": m.offset(), "key": m.key(), "value": m.value(),
             "headers": m.headers() or [], "timestamp": m.timestamp()[1]}
            for p, ms in got.items() for m in ms]


def counts(recs: list[dict]) -> dict[int, int]:
    return dict(Counter(r["partition"] for r in recs))


# ---- tests -----------------------------------------------------------------------------

@pytest.mark.parametrize("codec", kit.CODECS)
def test_idempotent_produce_and_group_consume(fbroker, codec):
    bs, n, parts = fbroker.bootstrap, 2000, 4
    topic = kit.unique_topic(f"franz-{codec}")
    kit.create_topic(bs, topic, parts)

    acked = events(franzgo("produce", bs, topic=topic, n=n, codec=codec, prefix="p"), "acked")
    assert len(acked) == n and len({r["key"] for r in acked}) == n
    per = counts(acked)
    assert sorted(per) == list(range(parts)), f"keys hashed to partitions {per}"
    # One idempotent producer on a fresh topic: no gap, no duplicate.
    for p in range(parts):
        assert sorted(r["offset"] for r in acked if r["partition"] == p) == list(range(per[p]))
    assert {r["value"] for r in acked} >= {None, b""}, "null and empty values are produced"
    ends = offsets(bs, [topic])
    assert ends["end"][topic] == per and ends["stable"][topic] == per
    assert ends["start"][topic] == {p: 0 for p in range(parts)}
    kit.assert_stored_with(fbroker, topic, parts, codec)

    group = kit.unique_topic("franz-group")
    out = franzgo("consume", bs, topics=topic, group=group, n=n, commit="true")
    got = events(out, "record")
    assert len(got) == n, f"consumed {len(got)} records, want exactly {n}"
    assert_same(got, acked, "franz-go group consumer")
    assert all(r["producer_id"] >= 0 for r in got), "batches of an idempotent producer"
    [committed] = events(out, "committed")
    assert committed["offsets"] == {topic: {str(p): c for p, c in per.items()}}
    assert committed_offsets(bs, group) == {(topic, p): c for p, c in per.items()}

    assert_same(librdkafka_read(bs, topic, parts, "read_uncommitted"), acked, "librdkafka")

    # The group resumes at its committed offsets: only what is new.
    more = events(franzgo("produce", bs, topic=topic, n=100, codec=codec, prefix="q", seed=2),
                  "acked")
    assert all(r["offset"] >= per[r["partition"]] for r in more)
    out = franzgo("consume", bs, topics=topic, group=group, n=100, commit="true")
    assert_same(events(out, "record"), more, "franz-go group consumer, resumed")
    now = {topic: {p: per[p] + counts(more).get(p, 0) for p in per}}
    end = offsets(bs, [topic], group)
    assert end["group"] == end["end"] == now


def check_txn_layout(acked: list[dict], ended: list[dict], parts: int) -> dict[int, int]:
    """Transaction by transaction, the records it put in a partition take the next offsets
    there in one run, and its marker the one after (the next transaction could not begin
    its writes to that partition before the marker). Returns each partition's end."""
    pos = {p: 0 for p in range(parts)}
    for ev in ended:
        t = ev["txn"]
        mine = [r for r in acked if r["txn"] == t]
        assert len(mine) == ev["records"]
        for p, k in sorted(counts(mine).items()):
            offs = sorted(r["offset"] for r in mine if r["partition"] == p)
            assert offs == list(range(pos[p], pos[p] + k)), (
                f"transaction {t}: partition {p} offsets {offs}, expected from {pos[p]}")
            pos[p] += k + 1  # and its marker
    return pos


def test_transactions_read_committed(txbroker):
    bs, parts, txns, per = txbroker.bootstrap, 3, 6, 30
    topic = kit.unique_topic("franz-txn")
    kit.create_topic(bs, topic, parts)

    out = franzgo("txn", bs, topic=topic, transactional_id=kit.unique_topic("franz-tid"),
                  txns=txns, per=per, abort_every=2)
    ended = events(out, "ended")
    assert [(e["txn"], e["committed"]) for e in ended] == [(t, t % 2 == 0) for t in range(txns)]
    acked = events(out, "acked")
    assert len(acked) == txns * per and len({r["key"] for r in acked}) == txns * per
    ends = check_txn_layout(acked, ended, parts)
    # A plain record after the transactions on every partition: a reader that has it has
    # everything before it.
    sentinels = events(franzgo("sentinels", bs, topic=topic, partitions=parts, prefix="end-"),
                       "acked")
    assert {r["partition"]: r["offset"] for r in sentinels} == ends
    total = {p: e + 1 for p, e in ends.items()}
    o = offsets(bs, [topic])
    assert o["end"][topic] == total and o["stable"][topic] == total, o

    committed = [r for r in acked if r["committed"]]
    aborted_keys = {r["key"] for r in acked if not r["committed"]}
    stop = {"stop_prefix": "end-", "stop_count": parts}
    rc = events(franzgo("consume", bs, topics=topic, isolation="committed", **stop), "record")
    assert not aborted_keys & {r["key"] for r in rc}, "read_committed saw aborted records"
    assert_same(rc, committed + sentinels, "franz-go read_committed")
    ru = events(franzgo("consume", bs, topics=topic, isolation="uncommitted", **stop), "record")
    assert_same(ru, acked + sentinels, "franz-go read_uncommitted")
    txn_pids = {r["producer_id"] for r in ru if r["key"] not in
                {s["key"] for s in sentinels}}
    assert len(txn_pids) == 1 and min(txn_pids) >= 0, f"transactional producer ids {txn_pids}"

    assert_same(librdkafka_read(bs, topic, parts, "read_committed"), committed + sentinels,
                "librdkafka read_committed")
    assert_same(librdkafka_read(bs, topic, parts, "read_uncommitted"), acked + sentinels,
                "librdkafka read_uncommitted")


def test_group_transact_session_copies_exactly_once(txbroker):
    bs, parts = txbroker.bootstrap, 3
    src, dst = kit.unique_topic("franz-eos-in"), kit.unique_topic("franz-eos-out")
    kit.create_topic(bs, src, parts)
    kit.create_topic(bs, dst, parts)
    out = franzgo("txn", bs, topic=src, transactional_id=kit.unique_topic("franz-tid"),
                  txns=8, per=25, abort_every=2, prefix="in")
    acked = events(out, "acked")
    check_txn_layout(acked, events(out, "ended"), parts)
    src_end = events(franzgo("sentinels", bs, topic=src, partitions=parts, prefix="in-end-"),
                     "acked")
    inputs = [r for r in acked if r["committed"]] + src_end
    aborted_keys = {r["key"] for r in acked if not r["committed"]}

    group = kit.unique_topic("franz-eos-group")
    out = franzgo("eos", bs, **{"in": src}, out=dst, group=group,
                  transactional_id=kit.unique_topic("franz-eos-tid"), n=len(inputs),
                  abort_every=3, max_poll=25)
    txns = events(out, "ended")
    assert all(t["committed"] == t["want_commit"] for t in txns), txns
    redone = sum(t["records"] for t in txns if not t["committed"])
    assert redone > 0, f"no transaction with records was aborted: {txns}"
    assert sum(t["records"] for t in txns if t["committed"]) == len(inputs), txns
    [done] = events(out, "done")
    assert done["copied"] == len(inputs), done

    o = offsets(bs, [src, dst], group)
    src_total = {r["partition"]: r["offset"] + 1 for r in src_end}
    assert o["group"] == {src: src_total}, "the group's offsets are the input's ends"
    assert committed_offsets(bs, group) == {(src, p): e for p, e in src_total.items()}
    assert o["end"][dst] == o["stable"][dst], "no transaction left open on the output"

    dst_end = events(franzgo("sentinels", bs, topic=dst, partitions=parts, prefix="out-end-"),
                     "acked")
    stop = {"stop_prefix": "out-end-", "stop_count": parts}
    src_by_pos = {(r["partition"], r["offset"]): r for r in inputs}

    def origin(r: dict) -> dict:
        """The input record a copy names in its last header ("from": topic/partition/offset),
        which must be the copy's content with that header added."""
        name, where = r["headers"][-1]
        assert name == "from", r["headers"]
        topic, p, off = where.decode().split("/")
        assert topic == src
        orig = src_by_pos[(int(p), int(off))]
        assert (r["key"], r["value"], r["headers"][:-1], r["timestamp"]) == content(orig), where
        return orig

    rc = events(franzgo("consume", bs, topics=dst, isolation="committed", **stop), "record")
    copies = [r for r in rc if not r["key"].startswith(b"out-end-")]
    assert_same([r for r in rc if r["key"].startswith(b"out-end-")], dst_end, "output ends")
    assert not aborted_keys & {r["key"] for r in copies}, "an aborted input record was copied"
    origins = Counter((origin(r)["partition"], origin(r)["offset"]) for r in copies)
    assert origins == Counter(list(src_by_pos)), (
        f"read_committed output: missing {set(src_by_pos) - set(origins)}, "
        f"more than once {[k for k, c in origins.items() if c > 1]}")

    ru = events(franzgo("consume", bs, topics=dst, isolation="uncommitted", **stop), "record")
    copies_all = [r for r in ru if not r["key"].startswith(b"out-end-")]
    assert len(copies_all) == len(inputs) + redone, (
        f"read_uncommitted output: {len(copies_all)} copies, want {len(inputs)} committed "
        f"+ {redone} aborted")
    all_origins = Counter((origin(r)["partition"], origin(r)["offset"]) for r in copies_all)
    assert set(all_origins) == set(src_by_pos) and sum(all_origins.values()) == len(copies_all)


def test_next_transaction_is_not_refused(fbroker):
    """franz-go begins its next transaction as soon as EndTxn is answered. At transaction
    version 2 its first Produce adds the partitions (the broker asks the coordinator), while
    the coordinator may still be writing the last transaction's markers: Kafka 4.1 retries
    CONCURRENT_TRANSACTIONS on the server, so the Produce is taken. A refused batch is
    resent by franz-go only after a metadata refresh (MetadataMinAge, 5 s by default; 100 ms
    here to keep the test short); franz-go's own log counts the refusals."""
    bs, parts, txns, per = fbroker.bootstrap, 3, 20, 5
    topic = kit.unique_topic("franz-txn-next")
    kit.create_topic(bs, topic, parts)
    out = franzgo("txn", bs, topic=topic, transactional_id=kit.unique_topic("franz-tid"),
                  txns=txns, per=per, abort_every=0, metadata_min_age="100ms")
    acked = events(out, "acked")
    assert len(acked) == txns * per and all(e["committed"] for e in events(out, "ended"))
    [done] = events(out, "done")
    slow = [e["ms"] for e in events(out, "ended")]
    assert done["produce_retries"] == {}, (
        f"transactional Produce batches refused (per error, partitions) "
        f"{done['produce_retries']}; transaction times (ms) {slow}")
