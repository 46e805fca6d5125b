"""The two load generators, driven the same way against both systems:

- `StrataBench`: `strata bench produce|consume` (librdkafka), read through its --json file.
- `KafkaPerf`: Apache Kafka's own org.apache.kafka.tools.ProducerPerformance /
  ConsumerPerformance (what kafka-producer-perf-test.sh / kafka-consumer-perf-test.sh run),
  read from their printed summary.

Each call returns one result dict: records, seconds, records_per_s, mb_per_s (decimal MB of
record values: records/s x record size / 1e6, the same for both tools, whatever unit the
tool prints), p50_ms/p99_ms/p999_ms (produce), ok, error, command. Not thread-safe.
"""
from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import re
import subprocess
import uuid
from pathlib import Path

from . import procs

# kafka-run-class.sh's JVM options, with the 512 MiB heap the perf-test scripts ask for.
TOOL_JVM = ["-Xmx512M", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
            "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
            "-Djava.awt.headless=true"]

PRODUCER_PERF_RE = re.compile(
    r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, "
    r"([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th")
# ProducerPerformance >= 4.2 with --warmup-records (KIP-1052) adds this line after the summary.
STEADY_STATE_RE = re.compile(
    r"(\d+) steady state records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg "
    r"latency, ([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, "
    r"(\d+) ms 99\.9th")


def _summary(fields: tuple) -> dict:
    n, rps, _mib_s, avg, mx, p50, p95, p99, p999 = fields
    return {"records": int(n), "records_per_s": float(rps),
            "seconds": round(int(n) / float(rps), 3) if float(rps) > 0 else 0.0,
            "avg_ms": float(avg),
            "max_ms": float(mx), "p50_ms": float(p50), "p95_ms": float(p95),
            "p99_ms": float(p99), "p999_ms": float(p999)}


def parse_producer_performance(output: str) -> dict:
    """Parses ProducerPerformance's final summary line (the one with percentiles), and with a
    warm-up the steady-state line after it, kept under "steady"."""
    matches = PRODUCER_PERF_RE.findall(output)
    if not matches:
        raise ValueError("no ProducerPerformance summary line in output")
    result = _summary(matches[-1])
    steady = STEADY_STATE_RE.findall(output)
    if steady:
        result["steady"] = _summary(steady[-1])
    return result


def parse_consumer_performance(output: str) -> dict:
    """Parses ConsumerPerformance's header + values lines ("start.time, end.time, ...")."""
    lines = [ln.strip() for ln in output.splitlines()]
    for i, line in enumerate(lines):
        if line.startswith("start.time,") and i + 1 < len(lines):
            keys = [k.strip() for k in line.split(",")]
            vals = [v.strip() for v in lines[i + 1].split(",")]
            if len(vals) != len(keys):
                continue
            row = dict(zip(keys, vals))
            fetch_ms = float(row["fetch.time.ms"])
            return {"records": int(row["data.consumed.in.nMsg"]),
                    "records_per_s": float(row["fetch.nMsg.sec"]),
                    "seconds": fetch_ms / 1000,
                    "rebalance_ms": float(row["rebalance.time.ms"]),
                    "records_per_s_incl_rebalance": float(row["nMsg.sec"])}
    raise ValueError("no ConsumerPerformance summary in output")


def unsupported_reason(output: str) -> str | None:
    """The client's complaint when the broker lacks an API the tool needs (e.g. consumer
    groups), so such a run is reported as unsupported rather than as a harness failure."""
    for line in output.splitlines():
        if "UnsupportedVersionException" in line or "does not support" in line:
            return line.strip()[:200]
    return None


def _failed(cmd: list[str], rc: int, output: str, error: str) -> dict:
    r = {"ok": False, "error": error, "command": cmd, "exit_code": rc}
    reason = unsupported_reason(output)
    if reason:
        r["unsupported"] = reason
    return r


def _finish(result: dict, record_size: int, expected: int) -> dict:
    result["mb_per_s"] = round(result["records_per_s"] * record_size / 1e6, 2)
    if "steady" in result:
        result["steady"]["mb_per_s"] = round(result["steady"]["records_per_s"] * record_size / 1e6, 2)
    if result.get("records", 0) < expected:
        result["ok"] = False
        result.setdefault("error", f"only {result.get('records', 0)} of {expected} records")
    else:
        result.setdefault("ok", True)
    return result


class LoadGenerator:
    name = "?"

    def __init__(self, logdir: Path, record_size: int):
        self.logdir = logdir
        self.record_size = record_size

    def _timeout(self, records: int, rate: int) -> float:
        secs = records / rate if rate > 0 else records * self.record_size / 2e6  # >= 2 MB/s
        return secs * 2 + 120

    def _run(self, cmd: list[str], log_name: str, timeout: float) -> tuple[int, str]:
        return procs.run_logged(cmd, self.logdir / f"{log_name}.log", timeout)


# librdkafka before 2.6.1 builds SCRAM's client-final nonce wrongly, which Kafka 4.x refuses
# ("invalid credentials", librdkafka#4895); older ones also refuse SASL with a broker that does
# not offer SaslHandshake v0 (Strata offers v1 only).
SCRAM_LIBRDKAFKA = (2, 6, 1)


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version)[:3])


def bundled_librdkafka(directory: Path) -> Path | None:
    """`directory` with a librdkafka.so.1 linked to the librdkafka confluent-kafka's wheel
    ships (self-contained, its own OpenSSL), for LD_LIBRARY_PATH; None without the wheel."""
    spec = importlib.util.find_spec("confluent_kafka")
    if spec is None or spec.origin is None:
        return None
    libs = sorted(Path(spec.origin).parent.parent.glob("confluent_kafka.libs/librdkafka*.so*"))
    if not libs:
        return None
    directory.mkdir(parents=True, exist_ok=True)
    link = directory / "librdkafka.so.1"
    link.unlink(missing_ok=True)
    link.symlink_to(libs[0])
    return directory


class StrataBench(LoadGenerator):
    """`strata bench` (librdkafka 1 MiB batches, linger 5 ms as built into the tool).
    lib_dir: run it with LD_LIBRARY_PATH=lib_dir (another librdkafka.so.1 than the one it was
    built against: the C ABI is stable across 1.x-2.x)."""

    name = "strata-bench"

    def __init__(self, logdir: Path, record_size: int, binary: Path, lib_dir: Path | None = None):
        super().__init__(logdir, record_size)
        self.binary = binary
        self.lib_dir = lib_dir

    def _cmd(self, *args: str) -> list[str]:
        env = ["env", f"LD_LIBRARY_PATH={self.lib_dir}"] if self.lib_dir else []
        return [*env, str(self.binary), "bench", *args]

    def use_scram_capable_librdkafka(self, directory: Path) -> str:
        """Keeps the binary's librdkafka if it can authenticate with SCRAM against Kafka 4.x and
        Strata (>= SCRAM_LIBRDKAFKA), else switches to confluent-kafka's bundled one when that
        can. Returns the version the runs will load."""
        version = self.librdkafka_version()
        if version_tuple(version) >= SCRAM_LIBRDKAFKA:
            return version
        lib_dir = bundled_librdkafka(directory)
        if lib_dir is not None:
            old, self.lib_dir = self.lib_dir, lib_dir
            bundled = self.librdkafka_version()
            if version_tuple(bundled) >= SCRAM_LIBRDKAFKA:
                return bundled
            self.lib_dir = old
        return version

    def produce(self, bootstrap: str, topic: str, records: int, acks: str, compression: str,
                rate: int, log_name: str, client_config: Path | None = None) -> dict:
        """client_config: a librdkafka properties file (e.g. security.protocol=SASL_SSL and the
        SASL/TLS settings: harness/secure.py), passed as --command-config."""
        out_json = self.logdir / f"{log_name}.json"
        out_json.unlink(missing_ok=True)
        cmd = self._cmd("produce", "--bootstrap", bootstrap, "--topic", topic, "--records",
                        str(records), "--record-size", str(self.record_size), "--acks", acks,
                        "--compression", compression, "--rate", str(rate), "--json",
                        str(out_json), *self._client_config(client_config))
        rc, out = self._run(cmd, log_name, self._timeout(records, rate))
        return self._read(cmd, rc, out, out_json, records)

    def consume(self, bootstrap: str, topic: str, records: int, log_name: str,
                client_config: Path | None = None) -> dict:
        out_json = self.logdir / f"{log_name}.json"
        out_json.unlink(missing_ok=True)
        cmd = self._cmd("consume", "--bootstrap", bootstrap, "--topic", topic, "--records",
                        str(records), "--timeout", str(int(self._timeout(records, 0))), "--json",
                        str(out_json), *self._client_config(client_config))
        rc, out = self._run(cmd, log_name, self._timeout(records, 0) + 30)
        return self._read(cmd, rc, out, out_json, records)

    @staticmethod
    def _client_config(path: Path | None) -> list[str]:
        return [] if path is None else ["--command-config", str(path)]

    def librdkafka_version(self) -> str:
        """The version of the librdkafka the binary loads (ldd, then rd_kafka_version_str)."""
        env = dict(os.environ, **({"LD_LIBRARY_PATH": str(self.lib_dir)} if self.lib_dir else {}))
        try:
            ldd = subprocess.run(["ldd", str(self.binary)], capture_output=True, text=True,
                                 timeout=10, env=env).stdout
            lib = next((ln.split("=>")[1].split("(")[0].strip() for ln in ldd.splitlines()
                        if "librdkafka" in ln and "=>" in ln), None)
            if lib is None:
                return "static"
            fn = ctypes.CDLL(lib).rd_kafka_version_str
            fn.restype = ctypes.c_char_p
            return fn().decode()
        except (OSError, AttributeError, subprocess.SubprocessError) as e:
            return f"? ({e})"

    def _read(self, cmd, rc, out, out_json: Path, expected: int) -> dict:
        try:
            r = json.loads(out_json.read_text())
        except (OSError, ValueError):
            return _failed(cmd, rc, out, f"exit {rc}, no JSON summary: {out[-600:]}")
        r["command"] = cmd
        r["exit_code"] = rc
        if rc != 0:
            r["ok"] = False
            r["error"] = f"exit {rc}: {out[-600:]}"
        return _finish(r, self.record_size, expected)


class KafkaPerf(LoadGenerator):
    """Kafka's ProducerPerformance / ConsumerPerformance with the Java client's defaults.
    perf_lib: the tool jars to produce with when a warm-up is left out of the percentiles
    (ProducerPerformance's --warmup-records, Kafka 4.2 on; bench/replication.py passes lib_dir,
    bench/kafka/pom.xml's Kafka); the consumer tool stays on lib_dir."""

    name = "kafka-perf"

    def __init__(self, logdir: Path, record_size: int, lib_dir: Path, log4j: Path,
                 perf_lib: Path | None = None):
        super().__init__(logdir, record_size)
        self.lib_dir = lib_dir
        self.perf_lib = perf_lib
        self.log4j = log4j

    def _java(self, main: str, *args: str, lib: Path | None = None) -> list[str]:
        return ["java", *TOOL_JVM, f"-Dlog4j2.configurationFile={self.log4j}",
                "-cp", f"{lib or self.lib_dir}/*", main, *args]

    def _client_config(self, path: Path | None, old_flag: str,
                       lib: Path | None = None) -> list[str]:
        """The tool's option for a client properties file (security settings, bench/security.py):
        --command-config from Kafka 4.2 on (which deprecates the old names),
        --producer.config/--consumer.config before."""
        if path is None:
            return []
        jar = next((lib or self.lib_dir).glob("kafka-tools-[0-9]*.jar"), None)
        m = re.match(r"kafka-tools-(\d+)\.(\d+)", jar.name) if jar else None
        new = m is not None and (int(m.group(1)), int(m.group(2))) >= (4, 2)
        return ["--command-config" if new else old_flag, str(path)]

    def produce(self, bootstrap: str, topic: str, records: int, acks: str, compression: str,
                rate: int, log_name: str, payload_file: Path | None = None,
                warmup_records: int = 0, client_config: Path | None = None) -> dict:
        """payload_file: records drawn at random from its lines (ProducerPerformance's
        --payload-file; each line should be record_size bytes) instead of one random buffer.
        warmup_records: the first records, left out of the "steady" figures (needs perf_lib).
        client_config: a producer properties file (e.g. security.protocol=SASL_SSL and the
        SASL/TLS settings), passed as the tool takes one."""
        payload = (["--payload-file", str(payload_file)] if payload_file
                   else ["--record-size", str(self.record_size)])
        warmup = []
        if warmup_records > 0:
            if self.perf_lib is None:
                raise ValueError("a warm-up needs ProducerPerformance >= 4.2 (perf_lib)")
            warmup = ["--warmup-records", str(warmup_records)]
        cmd = self._java("org.apache.kafka.tools.ProducerPerformance", "--topic", topic,
                         "--num-records", str(records), *payload, *warmup,
                         *self._client_config(client_config, "--producer.config", self.perf_lib),
                         "--throughput", str(rate if rate > 0 else -1), "--producer-props",
                         f"bootstrap.servers={bootstrap}", f"acks={acks}",
                         f"compression.type={compression}", lib=self.perf_lib)
        rc, out = self._run(cmd, log_name, self._timeout(records, rate))
        return self._parse(cmd, rc, out, records, parse_producer_performance)

    def consume(self, bootstrap: str, topic: str, records: int, log_name: str,
                client_config: Path | None = None) -> dict:
        cmd = self._java("org.apache.kafka.tools.ConsumerPerformance", "--bootstrap-server",
                         bootstrap, "--topic", topic, "--messages", str(records),
                         *self._client_config(client_config, "--consumer.config"),
                         "--group", f"bench-{uuid.uuid4().hex[:8]}", "--timeout", "30000")
        rc, out = self._run(cmd, log_name, self._timeout(records, 0))
        return self._parse(cmd, rc, out, records, parse_consumer_performance)

    def _parse(self, cmd, rc, out, expected: int, parser) -> dict:
        try:
            r = parser(out)
        except (ValueError, KeyError) as e:
            return _failed(cmd, rc, out, f"exit {rc}, {e}: {out[-600:]}")
        r["command"] = cmd
        r["exit_code"] = rc
        if rc != 0:
            r["ok"] = False
            r["error"] = f"exit {rc}: {out[-600:]}"
        return _finish(r, self.record_size, expected)
