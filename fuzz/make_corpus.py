#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets into fuzz/corpus/<target>/ (kept in the
repo; scripts/fuzz.sh reads it alongside the corpus it grows in build-fuzz/).

request_fuzz seeds: valid request frames (header and body, no size prefix) of the APIs
the broker serves, classic and flexible versions. record_batch_fuzz seeds: a mode byte
of 1 (fix CRCs) followed by a produce records blob.
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "tests" / "integration"))
import rawkafka as rk  # noqa: E402


def frame(key: int, version: int, body: bytes, flexible: bool = False) -> bytes:
    return rk.request(key, version, 7, body, flexible_header=flexible)[4:]


def main() -> None:
    batch = rk.record_batch([(b"k", b"value", [("h", b"v")]), (None, b"x" * 40, [])], 1_700_000_000_000)
    seeds = {
        "api_versions_v0": frame(18, 0, b""),
        "api_versions_v3": frame(18, 3, bytes(rk.Writer(True).string("strata-fuzz")
                                              .string("1.0").tags().buf), True),
        "metadata_v1": frame(3, 1, bytes(rk.Writer().array(["t"], lambda w, t: w.string(t)).buf)),
        "produce_v8": frame(0, 8, rk.produce_body(8, "t", 0, batch, acks=-1)),
        "create_topics_v4": frame(19, 4, rk.create_topics_body(4, "t", 3, 1)),
        "create_topics_v7": frame(19, 7, rk.create_topics_body(7, "t", 3, 1), True),
        "delete_topics_v3": frame(20, 3, bytes(rk.Writer().array(["t"], lambda w, t: w.string(t))
                                               .i32(30000).buf)),
        "create_partitions_v1": frame(37, 1, bytes(
            rk.Writer().array([0], lambda w, _: w.string("t").i32(6).i32(-1)).i32(30000)
            .boolean(False).buf)),
        "describe_topic_partitions_v0": frame(75, 0, bytes(
            rk.Writer(True).array(["a", "b"], lambda w, t: w.string(t).tags()).i32(2000)
            .i8(1).string("b").i32(3).tags().tags().buf), True),
        "describe_topic_partitions_v0_all": frame(75, 0, bytes(
            rk.Writer(True).array([], None).i32(1).i8(-1).tags().buf), True),
        "describe_log_dirs_v1": frame(35, 1, bytes(
            rk.Writer().array([("t", [0, 1])], lambda w, t: w.string(t[0])
                              .array(t[1], lambda w, p: w.i32(p))).buf)),
        "describe_log_dirs_v4": frame(35, 4, bytes(
            rk.Writer(True).array([("t", [2])], lambda w, t: w.string(t[0])
                                  .array(t[1], lambda w, p: w.i32(p)).tags()).tags().buf), True),
        "describe_log_dirs_v4_all": frame(35, 4, bytes(rk.Writer(True).uvarint(0).tags().buf),
                                          True),
    }
    # Fetch v7, incremental (session 7, epoch 3): t-0 changed, u-1 forgotten.
    seeds["fetch_v7_incremental"] = frame(1, 7, bytes(
        rk.Writer().i32(-1).i32(500).i32(1).i32(1 << 20).i8(0).i32(7).i32(3)
        .array([0], lambda w, _: w.string("t").array(
            [0], lambda w2, p: w2.i32(p).i64(42).i64(-1).i32(1 << 20)))
        .array([0], lambda w, _: w.string("u").array([1], lambda w2, p: w2.i32(p))).buf))
    # Produce v8 of a keyless record (refused with record errors on a compacted topic).
    keyless = rk.record_batch([(None, b"no key", [])], 1_700_000_000_000)
    seeds["produce_v8_keyless"] = frame(0, 8, rk.produce_body(8, "t", 0, keyless, acks=1))
    # GetTelemetrySubscriptions v0 (first request: zero instance id) and PushTelemetry v0.
    seeds["get_telemetry_subscriptions_v0"] = frame(71, 0, bytes(16) + b"\x00", True)
    seeds["push_telemetry_v0"] = frame(72, 0, bytes(
        rk.Writer(True).raw(bytes(range(16))).i32(9).boolean(False).i8(0)
        .bytes_(b"metrics").tags().buf), True)
    # ConsumerGroupHeartbeat v1: a join (epoch 0, topics, empty owned partitions) and a
    # heartbeat owning t's partitions 0 and 2; ConsumerGroupDescribe v1 of one group.
    seeds["consumer_group_heartbeat_v1_join"] = frame(68, 1, bytes(
        rk.Writer(True).string("g").string("m-1").i32(0).string(None).string("r1").i32(300000)
        .array(["t"], lambda w, t: w.string(t)).string(None).string("uniform")
        .array([], lambda w, _: w).tags().buf), True)
    seeds["consumer_group_heartbeat_v1_owned"] = frame(68, 1, bytes(
        rk.Writer(True).string("g").string("m-1").i32(3).string(None).string(None).i32(-1)
        .uvarint(0).string(None).string(None)
        .array([0], lambda w, _: w.raw(bytes(range(16))).array([0, 2], lambda w2, p: w2.i32(p))
               .tags()).tags().buf), True)
    seeds["consumer_group_describe_v1"] = frame(69, 1, bytes(
        rk.Writer(True).array(["g"], lambda w, g: w.string(g)).boolean(True).tags().buf), True)
    # WriteTxnMarkers v1: one COMMIT marker for t-0 and t-1 (flexible from v1).
    seeds["write_txn_markers_v1"] = frame(27, 1, bytes(
        rk.Writer(True).array([0], lambda w, _: w.i64(4242).i16(3).boolean(True)
                              .array([0], lambda w2, _: w2.string("t").array(
                                  [0, 1], lambda w3, p: w3.i32(p)).tags())
                              .i32(5).tags()).tags().buf), True)
    # DescribeProducers v0 (flexible): t-0.
    seeds["describe_producers_v0"] = frame(61, 0, bytes(
        rk.Writer(True).array([0], lambda w, _: w.string("t").array(
            [0], lambda w2, p: w2.i32(p)).tags()).tags().buf), True)
    txn = rk.record_batch([(b"k", b"in-txn", [])], 1_700_000_000_000, 4242, 3, 0,
                          transactional=True)
    seeds["produce_v8_transactional"] = frame(0, 8, rk.produce_body(
        8, "t", 0, txn, acks=-1, transactional_id="fuzz-txn"))
    # Transactions: a producer's InitProducerId, AddPartitionsToTxn (client and broker
    # forms), AddOffsetsToTxn, TxnOffsetCommit, EndTxn; kafka-transactions' list/describe.
    W = lambda: rk.Writer(True)  # noqa: E731 (flexible writer)

    def topics(w, names_parts):
        return w.array(names_parts, lambda w2, t: w2.string(t[0]).array(
            t[1], lambda w3, p: w3.i32(p)).tags())
    seeds["init_producer_id_v4"] = frame(22, 4, bytes(
        W().string("fuzz-txn").i32(60000).i64(-1).i16(-1).tags().buf), True)
    seeds["add_partitions_to_txn_v3"] = frame(24, 3, bytes(
        topics(W().string("fuzz-txn").i64(4242).i16(3), [("t", [0, 1])]).tags().buf), True)
    seeds["add_partitions_to_txn_v5_verify"] = frame(24, 5, bytes(
        W().array([0], lambda w, _: topics(w.string("fuzz-txn").i64(4242).i16(3).boolean(True),
                                           [("t", [0]), ("u", [2])]).tags()).tags().buf), True)
    seeds["add_offsets_to_txn_v3"] = frame(25, 3, bytes(
        W().string("fuzz-txn").i64(4242).i16(3).string("group").tags().buf), True)
    seeds["end_txn_v5"] = frame(26, 5, bytes(
        W().string("fuzz-txn").i64(4242).i16(3).boolean(True).tags().buf), True)
    seeds["txn_offset_commit_v3"] = frame(28, 3, bytes(
        W().string("fuzz-txn").string("group").i64(4242).i16(3).i32(5).string("member-1")
        .string(None).array([0], lambda w, _: w.string("t").array(
            [0], lambda w2, p: w2.i32(p).i64(77).i32(2).string("md").tags()).tags())
        .tags().buf), True)
    seeds["list_transactions_v1"] = frame(66, 1, bytes(
        W().array(["Ongoing"], lambda w, st: w.string(st)).array([4242], lambda w, p: w.i64(p))
        .i64(1000).tags().buf), True)
    seeds["describe_transactions_v0"] = frame(65, 0, bytes(
        W().array(["fuzz-txn", "other"], lambda w, t: w.string(t)).tags().buf), True)
    inner = frame(19, 7, rk.create_topics_body(7, "t", 1, 1), True)
    seeds["envelope_v0"] = frame(58, 0, bytes(rk.Writer(True).bytes_(inner).bytes_(None)
                                              .bytes_(bytes([127, 0, 0, 1])).tags().buf), True)
    # Authentication: SaslHandshake v1, SaslAuthenticate v2, the SCRAM user APIs.
    seeds["sasl_handshake_v1"] = frame(17, 1, bytes(rk.Writer().string("SCRAM-SHA-256").buf))
    seeds["sasl_authenticate_v2"] = frame(36, 2, bytes(
        W().bytes_(b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO").tags().buf), True)
    seeds["describe_user_scram_credentials_v0"] = frame(50, 0, bytes(
        W().array(["alice"], lambda w, u: w.string(u).tags()).tags().buf), True)
    seeds["alter_user_scram_credentials_v0"] = frame(51, 0, bytes(
        W().array([("bob", 2)], lambda w, d: w.string(d[0]).i8(d[1]).tags())
        .array([0], lambda w, _: w.string("alice").i8(1).i32(8192).bytes_(b"salt")
               .bytes_(b"p" * 32).tags()).tags().buf), True)
    out = ROOT / "corpus" / "request_fuzz"
    out.mkdir(parents=True, exist_ok=True)
    for name, data in seeds.items():
        (out / name).write_bytes(data)
    out = ROOT / "corpus" / "record_batch_fuzz"
    out.mkdir(parents=True, exist_ok=True)
    (out / "uncompressed_batch").write_bytes(b"\x01" + batch)
    (out / "two_batches").write_bytes(b"\x01" + batch + batch)
    # sasl_fuzz: a path byte (0 PLAIN, 1 SCRAM server, 2 SCRAM client, 3 OAUTHBEARER), then
    # the token(s); two rounds are split at a 0xFF byte.
    out = ROOT / "corpus" / "sasl_fuzz"
    out.mkdir(parents=True, exist_ok=True)
    sasl = {
        "plain_ok": b"\x00\x00user\x00pencil",
        "plain_authzid": b"\x00user\x00user\x00pencil",
        "scram_server_first": b"\x01n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
        "scram_server_two_rounds": b"\x01n,,n=user,r=abc\xffc=biws,r=abcdef,"
                                   b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
        "scram_client": b"\x02r=fixednonceSERVER,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096\xff"
                        b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
        "oauth_gs2": b"\x03n,,\x01auth=Bearer eyJhbGciOiJFUzI1NiIsImtpZCI6ImsifQ."
                     b"eyJzdWIiOiJ1In0.AAAA\x01\x01",
        "oauth_authzid": b"\x03n,a=u,\x01host=h\x01auth=Bearer a.b.c\x01\x01",
    }
    for name, data in sasl.items():
        (out / name).write_bytes(data)


if __name__ == "__main__":
    main()
