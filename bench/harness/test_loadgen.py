"""Checks of the perf-tool output parsers against output captured verbatim from Apache
Kafka 4.1.1's ProducerPerformance and ConsumerPerformance. Runnable with pytest; --smoke
runs them too (run_all)."""
from __future__ import annotations

from . import loadgen

PRODUCER_OUT = """\
96436 records sent, 19237.2 records/sec (18.79 MB/sec), 1143.7 ms avg latency, 2094.0 ms max latency.
250000 records sent, 35683.7 records/sec (34.85 MB/sec), 646.65 ms avg latency, 2094.00 ms max latency, 511 ms 50th, 1551 ms 95th, 1920 ms 99th, 2043 ms 99.9th.
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


def run_all() -> int:
    tests = [v for k, v in sorted(globals().items()) if k.startswith("test_")]
    for t in tests:
        t()
    return len(tests)
