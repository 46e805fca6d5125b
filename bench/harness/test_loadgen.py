"""Checks of the perf-tool output parsers against output captured verbatim from Apache
Kafka 4.1.1's ProducerPerformance and ConsumerPerformance, and of StrataBench's command line.
Runnable with pytest; --smoke runs them too (run_all)."""
from __future__ import annotations

from pathlib import Path

from . import loadgen

PRODUCER_OUT = """\
96436 records sent, 19237.2 records/sec (18.79 MB/sec), 1143.7 ms avg latency, 2094.0 ms max latency.
250000 records sent, 35683.7 records/sec (34.85 MB/sec), 646.65 ms avg latency, 2094.00 ms max latency, 511 ms 50th, 1551 ms 95th, 1920 ms 99th, 2043 ms 99.9th.
"""

# Kafka 4.2.1's ProducerPerformance with --warmup-records 111740 (a Strata run, 2026-12-04).
PRODUCER_WARMUP_OUT = """\
Warmup first 111740 records. Steady state results will print after the complete test summary.
55837 records sent, 11167.4 records/sec (10.91 MB/sec), 19.0 ms avg latency, 464.0 ms max latency.
In steady state.
55838 records sent, 11165.4 records/sec (10.90 MB/sec), 2.2 ms avg latency, 11.0 ms max latency.
446960 records sent, 11163.394775 records/sec (10.90 MB/sec), 4.78 ms avg latency, 464.00 ms max latency, 2 ms 50th, 7 ms 95th, 115 ms 99th, 161 ms 99.9th.
335220 steady state records sent, 11152.067600 records/sec (10.89 MB/sec), 2.82 ms avg latency, 23.00 ms max latency, 2 ms 50th, 7 ms 95th, 9 ms 99th, 14 ms 99.9th.
"""

CONSUMER_OUT = """\
start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
2026-11-29 10:55:20:022, 2026-11-29 10:55:25:415, 244.1406, 45.2699, 250000, 46356.3879, 3486, 1907, 128.0234, 131095.9622
"""

CONSUMER_UNSUPPORTED = """\
start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
The node does not support FIND_COORDINATOR
org.apache.kafka.common.errors.UnsupportedVersionException: The node does not support FIND_COORDINATOR
"""


def test_producer_performance_uses_final_line():
    r = loadgen.parse_producer_performance(PRODUCER_OUT)
    assert r["records"] == 250000
    assert r["records_per_s"] == 35683.7
    assert (r["p50_ms"], r["p95_ms"], r["p99_ms"], r["p999_ms"]) == (511, 1551, 1920, 2043)
    assert r["avg_ms"] == 646.65 and r["max_ms"] == 2094.0


def test_producer_performance_keeps_the_steady_state_after_a_warmup():
    r = loadgen.parse_producer_performance(PRODUCER_WARMUP_OUT)
    assert r["records"] == 446960 and r["p99_ms"] == 115
    s = r["steady"]
    assert s["records"] == 335220 and s["records_per_s"] == 11152.0676
    assert (s["p50_ms"], s["p95_ms"], s["p99_ms"], s["p999_ms"]) == (2, 7, 9, 14)
    assert s["max_ms"] == 23.0
    assert "steady" not in loadgen.parse_producer_performance(PRODUCER_OUT)


def test_producer_performance_without_summary_is_an_error():
    try:
        loadgen.parse_producer_performance(PRODUCER_OUT.splitlines()[0])
    except ValueError:
        return
    raise AssertionError("progress line alone must not parse as a summary")


def test_consumer_performance_uses_fetch_rate():
    r = loadgen.parse_consumer_performance(CONSUMER_OUT)
    assert r["records"] == 250000
    assert r["records_per_s"] == 131095.9622  # excludes the 3486 ms group join
    assert r["seconds"] == 1.907 and r["rebalance_ms"] == 3486
    assert r["records_per_s_incl_rebalance"] == 46356.3879


def test_unsupported_broker_is_recognised():
    try:
        loadgen.parse_consumer_performance(CONSUMER_UNSUPPORTED)
        raise AssertionError("header without values must not parse")
    except ValueError:
        pass
    assert "FIND_COORDINATOR" in loadgen.unsupported_reason(CONSUMER_UNSUPPORTED)
    assert loadgen.unsupported_reason(PRODUCER_OUT) is None


def test_mb_per_s_is_decimal_megabytes_of_values():
    r = loadgen._finish({"records": 10, "records_per_s": 1000.0}, 1024, 10)
    assert r["mb_per_s"] == 1.02 and r["ok"]
    r = loadgen._finish({"records": 9, "records_per_s": 1000.0}, 1024, 10)
    assert not r["ok"] and "only 9 of 10" in r["error"]


def test_strata_bench_takes_a_client_config_and_another_librdkafka():
    g = loadgen.StrataBench(Path("/logs"), 1024, Path("/b/strata"))
    assert g._cmd("consume", *g._client_config(Path("/c.properties"))) == \
        ["/b/strata", "bench", "consume", "--command-config", "/c.properties"]
    g.lib_dir = Path("/lib")
    assert g._cmd("produce", *g._client_config(None)) == \
        ["env", "LD_LIBRARY_PATH=/lib", "/b/strata", "bench", "produce"]
    assert loadgen.version_tuple("2.0.2") < loadgen.SCRAM_LIBRDKAFKA
    assert loadgen.version_tuple("2.16.0") >= loadgen.SCRAM_LIBRDKAFKA


def run_all() -> int:
    tests = [v for k, v in sorted(globals().items()) if k.startswith("test_")]
    for t in tests:
        t()
    return len(tests)
