#!/usr/bin/env python3
"""Security benchmark: what TLS and SASL cost Strata and Apache Kafka (the version of
bench/kafka/pom.xml, one KRaft combined node as harness/brokers.py starts it), side by side in
the same run, one system at a time.

    bench/security.sh [--quick|--smoke]      (installs what is needed, then runs this)

Each broker runs with two listeners: PLAINTEXT (set-up, admin, and the PLAINTEXT figures) and
SASL_SSL (SCRAM-SHA-512 over TLSv1.3, TLS_AES_256_GCM_SHA384, a PEM keystore from the openssl
CLI: harness/secure.py), with the same configuration keys and values on both systems. SCRAM users
are created after start through the PLAINTEXT listener: the load generators' user with Kafka's
own kafka-configs (ConfigCommand), the storm's users with the AlterUserScramCredentials request
kafka-configs sends (harness/kadmin.py; one request for all of them instead of a JVM each).

Per system and round, on a fresh broker and data dir:
1. Connection storm (harness/storm.py): `--connections` clients (2,000) released at one instant
   open a TLS connection to the SASL_SSL listener and authenticate (ApiVersions, SaslHandshake
   v1, SaslAuthenticate v2 x2), spread over a few client processes of asyncio Python, which
   compute SCRAM's PBKDF2 once per user and salt (the broker does none per login either).
   Measured: time from the release until every client is authenticated, per-connection p50/p99
   (and per stage: TCP connect, TLS handshake, SASL), failures by stage, the broker's CPU time
   and VmRSS before, with every connection open, at its peak and after they closed, and its
   open fds; the kernel's ListenOverflows. A warm-up storm of a few connections runs first (not
   reported in the table). The storm comes before the throughput runs, so the broker's memory
   growth is the storm's. Kafka listens with a backlog of 50 (socket.listen.backlog.size),
   Strata with SOMAXCONN, and in a storm Kafka's accept queue overflows: full and quick runs
   therefore also run Kafka's storm on a fresh broker with the backlog raised to
   net.core.somaxconn (--backlog-variant), reported in a column of its own.
2. Throughput with Kafka's ProducerPerformance / ConsumerPerformance (harness/loadgen.py's
   KafkaPerf, Java client defaults, the same tool for both systems), over PLAINTEXT and over
   SASL_SSL (the same client with a --command-config of harness/secure.py's properties): a
   warm-up per protocol, then per protocol (the order alternating by round) unthrottled produce
   of --records 1 KiB records into a fresh 16-partition topic for acks=1 with compression none
   and lz4, and a consume of the acks=1/none topic from the start. MB/s, the broker's CPU s/GB
   and peak RSS, as bench/run.py measures them. `strata bench` (librdkafka) is not used: it has
   no security settings (no --command-config), so it cannot reach a SASL_SSL listener.
Reported: each system's TLS cost (SASL_SSL MB/s / PLAINTEXT MB/s) and Strata over SASL_SSL /
Kafka over SASL_SSL, against issue 31's goals (Strata's TLS cost no worse than Kafka's; Strata
over TLS >= 1.5x Kafka over TLS), and the storm side by side. Medians over --reps rounds
(systems alternate which runs first).

Writes bench/results/security-<ts>.json and appends a section to bench/RESULTS.md
(--smoke: Strata only, tiny volumes, 200 connections, everything in a temp dir, outputs checked,
nothing recorded). See bench/README.md ("Security benchmark").
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from harness import (brokers, env, kadmin, limits, loadgen, procs, report, secure,  # noqa: E402
                     storm, test_storm)

SYSTEMS = ["kafka", "strata"]
PROTOCOLS = ["PLAINTEXT", "SASL_SSL"]
PARTITIONS = 16
RECORD_SIZE = 1024
CONSUME_CONFIG = ("1", "none")  # the topic this config wrote is then consumed from the start
BENCH_USER, BENCH_PASSWORD = "bench", "bench-secret"

MODES = {
    "full": dict(records=1_000_000, warmup=200_000, reps=3, connections=2000, storm_procs=2,
                 storm_users=10, storm_warmup=50, produce=[("1", "none"), ("1", "lz4")],
                 systems=SYSTEMS, backlog_variant=True),
    "quick": dict(records=200_000, warmup=50_000, reps=1, connections=2000, storm_procs=2,
                  storm_users=10, storm_warmup=50, produce=[("1", "none"), ("1", "lz4")],
                  systems=SYSTEMS, backlog_variant=True),
    "smoke": dict(records=5_000, warmup=0, reps=1, connections=200, storm_procs=2,
                  storm_users=4, storm_warmup=10, produce=[("1", "none")], systems=["strata"],
                  backlog_variant=False),
}
STORM_TIMEOUT_S = 120  # per connection; a client not authenticated by then counts as failed
FD_HEADROOM = 1024  # descriptors a broker needs besides the storm's connections


def log(msg: str) -> None:
    print(f"[security {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def raise_fd_limit(need: int) -> dict:
    """Raises this process's RLIMIT_NOFILE soft limit (inherited by both brokers and the storm
    clients alike) to at least `need`, up to the hard limit (raised too when allowed, as root).
    The JVM raises its own soft limit to the hard one anyway (-XX:+MaxFDLimit, on by default)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    before = {"soft": soft, "hard": hard}
    if soft < need:
        new_hard = hard if hard == resource.RLIM_INFINITY or hard >= need else need
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (need, new_hard))
        except (ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return {"need": need, "before": before, "after": {"soft": soft, "hard": hard}}


def proc_fd_limit(pid: int) -> int | None:
    """The "Max open files" soft limit of a running process, from /proc/<pid>/limits."""
    try:
        for line in open(f"/proc/{pid}/limits"):
            if line.startswith("Max open files"):
                v = line.split()[3]
                return int(v) if v.isdigit() else -1
    except OSError:
        pass
    return None


def backlog_variant(plan: dict) -> bool:
    """Whether Kafka's storm runs a second time with its listen backlog raised to Strata's."""
    return bool(plan["backlog_variant"] and "kafka" in plan["systems"]
                and "storm" in plan["phases"])


class Runner:
    """Everything against one system in one round; collects into `run`. Not thread-safe."""

    def __init__(self, run: dict, plan: dict, gen: loadgen.KafkaPerf, workdir: Path,
                 kafka_lib: Path, strata_bin: Path, ca: Path, keystore: Path):
        self.run, self.plan, self.gen, self.workdir = run, plan, gen, workdir
        self.kafka_lib, self.strata_bin = kafka_lib, strata_bin
        self.ca, self.keystore = ca, keystore
        self.client_props = secure.java_client_properties(workdir / "client-sasl-ssl.properties",
                                                          ca, BENCH_USER, BENCH_PASSWORD)
        self.storm_users = [(f"storm-{i}", f"storm-{i}-secret")
                            for i in range(plan["storm_users"])]

    def system(self, system: str, rep: int, variant: str = "defaults",
               settings: dict[str, str] | None = None,
               phases: list[str] | None = None) -> None:
        """A fresh broker of `system` (with `settings` on top of the benchmark's), `phases`
        (default: the plan's) against it, stopped and wiped."""
        phases = self.plan["phases"] if phases is None else phases
        sysdir = self.workdir / f"{system}-{variant}-r{rep + 1}"
        broker = (brokers.KafkaBroker(sysdir, self.kafka_lib) if system == "kafka"
                  else brokers.StrataBroker(sysdir, self.strata_bin))
        sasl_port = brokers.free_port()
        secure.add_sasl_ssl_listener(broker.config, sasl_port, self.keystore)
        broker.config.update(settings or {})
        key = system if variant == "defaults" else f"{system} {variant}"
        info = self.run["brokers"].setdefault(key, {"config": broker.config, "rounds": []})
        this = {"round": rep + 1, "loadavg_before": limits.loadavg(), "log": str(broker.log_path)}
        info["rounds"].append(this)
        env.drop_page_cache(log)
        log(f"{key} (round {rep + 1}): starting, PLAINTEXT {broker.bootstrap}, SASL_SSL "
            f"127.0.0.1:{sasl_port}")
        broker.start()
        endpoints = {"PLAINTEXT": broker.bootstrap, "SASL_SSL": f"127.0.0.1:{sasl_port}"}
        try:
            info["command"] = getattr(broker, "command", [])
            this["fd_limit"] = proc_fd_limit(broker.pid)
            if this["fd_limit"] is not None and 0 <= this["fd_limit"] < \
                    self.plan["connections"] + FD_HEADROOM:
                raise RuntimeError(f"{system}'s open-file limit {this['fd_limit']} is below "
                                   f"{self.plan['connections'] + FD_HEADROOM}")
            self._users(key, broker, sasl_port, this)
            if "storm" in phases:
                self._storm(system, rep, broker, sasl_port, variant, key)
            if "throughput" in phases:
                self._throughput(system, rep, broker, endpoints)
        finally:
            log(f"{key}: stopping")
            broker.stop()
            this["exit_code"] = broker.exit_code
            broker.wipe()

    # ---- set-up -----------------------------------------------------------------------------

    def _users(self, system: str, broker, sasl_port: int, this: dict) -> None:
        """The load generators' user through kafka-configs (Kafka's ConfigCommand, as an
        operator makes one), the storm's users through the same request in one go; then waits
        until each can authenticate on the SASL_SSL listener (Kafka applies the credentials
        once its metadata log has them)."""
        t0 = time.monotonic()
        cmd = ["java", "-Xmx256m", f"-Dlog4j2.configurationFile={self.gen.log4j}", "-cp",
               f"{self.kafka_lib}/*", "org.apache.kafka.tools.ConfigCommand",
               "--bootstrap-server", broker.bootstrap, "--alter", "--add-config",
               f"{secure.MECHANISM}=[iterations={secure.SCRAM_ITERATIONS},"
               f"password={BENCH_PASSWORD}]", "--entity-type", "users", "--entity-name",
               BENCH_USER]
        log_path = self.workdir / "logs" / f"{system.replace(' ', '-')}-kafka-configs.log"
        rc, out = procs.run_logged(cmd, log_path, 120)
        if rc != 0:
            raise RuntimeError(f"kafka-configs against {system} failed (exit {rc}): {out[-800:]}")
        this["kafka_configs_command"] = cmd
        kadmin.alter_scram_users(broker.bootstrap, dict(self.storm_users), secure.MECHANISM,
                                 secure.SCRAM_ITERATIONS)
        deadline = time.monotonic() + 60
        for user, password in [(BENCH_USER, BENCH_PASSWORD), *self.storm_users]:
            while (err := storm.authenticate_once("127.0.0.1", sasl_port, str(self.ca), user,
                                                  password, secure.MECHANISM)) is not None:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{system}: {user} cannot authenticate over SASL_SSL: {err}")
                time.sleep(0.2)
        this["users_ready_s"] = round(time.monotonic() - t0, 2)
        log(f"{system}: {1 + len(self.storm_users)} SCRAM users can authenticate "
            f"({this['users_ready_s']} s)")

    # ---- connection storm -------------------------------------------------------------------

    def _storm(self, system: str, rep: int, broker, sasl_port: int, variant: str,
               label: str) -> None:
        p = self.plan
        common = dict(host="127.0.0.1", port=sasl_port, ca=self.ca, users=self.storm_users,
                      processes=p["storm_procs"], broker_pid=broker.pid,
                      log_dir=self.workdir / "logs", mechanism=secure.MECHANISM,
                      timeout=STORM_TIMEOUT_S)
        name = label.replace(" ", "-")
        w = storm.run_storm(connections=p["storm_warmup"], name=f"{name}-r{rep + 1}-warmup",
                            settle_s=1.0, **common)
        self.run["storm_warmup"].append({"system": system, "variant": variant, "rep": rep, **w})
        if w["failed"]:
            raise RuntimeError(f"{label}: warm-up storm: {w['failed']} failed: "
                               f"{w['failure_examples']}")
        log(f"{label} (round {rep + 1}): storm of {p['connections']:,} TLS+SCRAM connections "
            f"from {p['storm_procs']} client processes")
        r = storm.run_storm(connections=p["connections"], name=f"{name}-r{rep + 1}-storm",
                            **common)
        broker.check_alive("the connection storm")
        r.update({"system": system, "variant": variant, "rep": rep})
        self.run["storm"].append(r)
        rss = r["broker_rss_mib"]
        log(f"  -> {r['authenticated']:,}/{r['connections']:,} authenticated, all in "
            f"{r['all_authenticated_s']} s; per connection p50 {r['per_connection_ms']['p50']} "
            f"p99 {r['per_connection_ms']['p99']} ms; failures {r['failures'] or 'none'}; RSS "
            f"{rss['before']} -> {rss['all_open']} MiB (peak {rss['peak']}, after close "
            f"{rss['after_close']}); broker CPU {r['broker_cpu_s']} s, client CPU "
            f"{r['client_cpu_s']} s; listen queue drops {r['listen_queue_drops']}")

    # ---- throughput -------------------------------------------------------------------------

    def _throughput(self, system: str, rep: int, broker, endpoints: dict[str, str]) -> None:
        order = PROTOCOLS if rep % 2 == 0 else list(reversed(PROTOCOLS))
        sampler = procs.ProcSampler(broker.pid)
        try:
            if self.plan["warmup"]:
                for proto in order:
                    self._warmup(system, broker, proto, endpoints[proto])
            for proto in order:
                for acks, comp in self.plan["produce"]:
                    topic = self._produce(system, rep, broker, sampler, proto, endpoints[proto],
                                          acks, comp)
                    if (acks, comp) == CONSUME_CONFIG:
                        self._consume(system, rep, broker, sampler, proto, endpoints[proto], topic)
        finally:
            sampler.close()

    def _props(self, proto: str) -> Path | None:
        return self.client_props if proto == "SASL_SSL" else None

    def _warmup(self, system: str, broker, proto: str, bootstrap: str) -> None:
        """Not reported: JIT, page cache, the client's first TLS sessions, and the consumer
        group offsets topic (created by the first group consumer)."""
        topic = f"warmup-{proto.lower()}"
        kadmin.create_topic(broker.bootstrap, topic, PARTITIONS)
        log(f"{system}: warm-up over {proto} ({self.plan['warmup']:,} records)")
        r = self.gen.produce(bootstrap, topic, self.plan["warmup"], "1", "none", 0,
                             f"{system}-{topic}", client_config=self._props(proto))
        if not r.get("ok"):
            raise RuntimeError(f"{system} warm-up produce over {proto}: {r.get('error')}")
        self.gen.consume(bootstrap, topic, 1000, f"{system}-{topic}-consume",
                         client_config=self._props(proto))

    def _produce(self, system, rep, broker, sampler, proto, bootstrap, acks, comp) -> str:
        # Topics are never deleted during a run: no background deletion overlaps a workload.
        topic = f"produce-{proto.lower()}-acks{acks}-{comp}"
        kadmin.create_topic(broker.bootstrap, topic, PARTITIONS)
        env.drop_page_cache(log)
        n = self.plan["records"]
        log(f"{system} (round {rep + 1}): produce acks={acks} {comp} over {proto} ({n:,} records)")
        sampler.begin()
        r = self.gen.produce(bootstrap, topic, n, acks, comp, 0, f"{system}-r{rep + 1}-{topic}",
                             client_config=self._props(proto))
        r.update(sampler.end())
        broker.check_alive(f"produce over {proto}")
        self._add(system, rep, proto, "produce", f"produce acks={acks} {comp}", acks, comp, n, r)
        return topic

    def _consume(self, system, rep, broker, sampler, proto, bootstrap, topic) -> None:
        env.settle_page_cache(log)
        n = self.plan["records"]
        log(f"{system} (round {rep + 1}): consume from start over {proto} ({n:,} records)")
        sampler.begin()
        r = self.gen.consume(bootstrap, topic, n, f"{system}-r{rep + 1}-consume-{proto.lower()}",
                             client_config=self._props(proto))
        r.update(sampler.end())
        broker.check_alive(f"consume over {proto}")
        self._add(system, rep, proto, "consume", "consume from start", "", "", n, r)

    def _add(self, system, rep, proto, kind, label, acks, comp, records, r) -> None:
        r.setdefault("ok", False)
        if r.get("ok") and r.get("records"):
            r["cpu_s_per_gb"] = round(r["broker_cpu_s"] / (r["records"] * RECORD_SIZE / 1e9), 3)
        self.run["throughput"].append({"system": system, "rep": rep, "protocol": proto,
                                       "kind": kind, "label": label, "acks": acks,
                                       "compression": comp, "workload_records": records, **r})
        if r["ok"]:
            log(f"  -> {r['mb_per_s']:.1f} MB/s; broker {r.get('cpu_s_per_gb', 0):.2f} CPU s/GB, "
                f"peak RSS {r['peak_rss_mib']:.0f} MiB")
        else:
            log(f"  -> FAILED: {str(r.get('error'))[:400]}")


# ---- report ---------------------------------------------------------------------------------

def _median(xs: list[float]) -> float | None:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def _fmt(v, digits: int = 1) -> str:
    return "n/a" if v is None else f"{v:,.{digits}f}"


def _ratio(a, b, digits: int = 2) -> float | None:
    return round(a / b, digits + 2) if a is not None and b else None


def workloads(plan: dict) -> list[tuple[str, str, str, str]]:
    """(kind, label, acks, compression) in report order."""
    out = []
    for acks, comp in plan["produce"]:
        out.append(("produce", f"produce acks={acks} {comp}", acks, comp))
        if (acks, comp) == CONSUME_CONFIG:
            out.append(("consume", "consume from start", "", ""))
    return out


def _entries(run, system, proto, label, rep=None) -> list[dict]:
    return [r for r in run["throughput"] if r["system"] == system and r["protocol"] == proto
            and r["label"] == label and r.get("ok") and (rep is None or r["rep"] == rep)]


def _med(run, system, proto, label, key="mb_per_s"):
    return _median([r.get(key) for r in _entries(run, system, proto, label)])


def summary(run: dict) -> list[dict]:
    """Per workload: medians per system and protocol, TLS costs, Strata/Kafka ratios, the
    issue's goals, and the per-round ratios."""
    rows = []
    for kind, label, _acks, _comp in workloads(run["plan"]):
        m = {(s, p): _med(run, s, p, label) for s in SYSTEMS for p in PROTOCOLS}
        cost = {s: _ratio(m[(s, "SASL_SSL")], m[(s, "PLAINTEXT")]) for s in SYSTEMS}
        tls_ratio = _ratio(m[("strata", "SASL_SSL")], m[("kafka", "SASL_SSL")])
        plain_ratio = _ratio(m[("strata", "PLAINTEXT")], m[("kafka", "PLAINTEXT")])
        rounds = []
        for rep in range(run["plan"]["reps"]):
            v = {(s, p): (_entries(run, s, p, label, rep) or [{}])[0].get("mb_per_s")
                 for s in SYSTEMS for p in PROTOCOLS}
            rounds.append({"round": rep + 1,
                           "tls_cost": {s: _ratio(v[(s, "SASL_SSL")], v[(s, "PLAINTEXT")])
                                        for s in SYSTEMS},
                           "strata_over_kafka_tls": _ratio(v[("strata", "SASL_SSL")],
                                                           v[("kafka", "SASL_SSL")])})
        goals = {}
        if cost["strata"] is not None and cost["kafka"] is not None:
            goals["tls_cost_no_worse_than_kafka"] = cost["strata"] >= cost["kafka"]
        if tls_ratio is not None:
            goals["strata_tls_at_least_1.5x_kafka_tls"] = tls_ratio >= 1.5
        rows.append({"kind": kind, "label": label,
                     "mb_per_s": {f"{s} {p}": m[(s, p)] for s in SYSTEMS for p in PROTOCOLS},
                     "cpu_s_per_gb": {f"{s} {p}": _med(run, s, p, label, "cpu_s_per_gb")
                                      for s in SYSTEMS for p in PROTOCOLS},
                     "peak_rss_mib": {f"{s} {p}": _med(run, s, p, label, "peak_rss_mib")
                                      for s in SYSTEMS for p in PROTOCOLS},
                     "tls_cost": cost, "strata_over_kafka": {"SASL_SSL": tls_ratio,
                                                             "PLAINTEXT": plain_ratio},
                     "goals": goals, "rounds": rounds})
    return rows


def storm_key(r: dict) -> str:
    """The column a storm belongs to: the system, or the system and its variant."""
    return r["system"] if r.get("variant", "defaults") == "defaults" else \
        f"{r['system']} {r['variant']}"


def storm_summary(run: dict) -> dict:
    """Per system (and variant): the median over rounds of each storm figure, and each round's
    time until all were authenticated."""
    out = {}
    for key in dict.fromkeys(storm_key(r) for r in run["storm"]):
        rs = [r for r in run["storm"] if storm_key(r) == key]

        def med(f):
            return _median([f(r) for r in rs])
        out[key] = {
            "rounds": len(rs),
            "connections": rs[0]["connections"],
            "authenticated": med(lambda r: r["authenticated"]),
            "failed": med(lambda r: r["failed"]),
            "failures": [r["failures"] for r in rs],
            "all_authenticated_s": med(lambda r: r["all_authenticated_s"]),
            "all_authenticated_s_rounds": [r["all_authenticated_s"] for r in rs],
            "last_authenticated_s": med(lambda r: r["last_authenticated_s"]),
            "per_connection_p50_ms": med(lambda r: r["per_connection_ms"]["p50"]),
            "per_connection_p99_ms": med(lambda r: r["per_connection_ms"]["p99"]),
            "tcp_connect_p99_ms": med(lambda r: r["tcp_connect_ms"]["p99"]),
            "tcp_connect_max_ms": med(lambda r: r["tcp_connect_ms"]["max"]),
            "tls_p50_ms": med(lambda r: r["tls_handshake_ms"]["p50"]),
            "tls_p99_ms": med(lambda r: r["tls_handshake_ms"]["p99"]),
            "sasl_p50_ms": med(lambda r: r["sasl_ms"]["p50"]),
            "sasl_p99_ms": med(lambda r: r["sasl_ms"]["p99"]),
            "broker_cpu_s": med(lambda r: r["broker_cpu_s"]),
            "broker_cpu_ms_per_connection": med(
                lambda r: r["broker_cpu_s"] * 1000 / r["authenticated"] if r["authenticated"]
                else None),
            "rss_before_mib": med(lambda r: r["broker_rss_mib"]["before"]),
            "rss_all_open_mib": med(lambda r: r["broker_rss_mib"]["all_open"]),
            "rss_peak_mib": med(lambda r: r["broker_rss_mib"]["peak"]),
            "rss_after_close_mib": med(lambda r: r["broker_rss_mib"]["after_close"]),
            "rss_per_connection_kib": med(lambda r: r["broker_rss_per_connection_kib"]),
            "fds_before": med(lambda r: r["broker_fds"]["before"]),
            "fds_all_open": med(lambda r: r["broker_fds"]["all_open"]),
            "listen_overflows": med(lambda r: r["listen_queue_drops"].get("ListenOverflows")),
            "client_cpu_s": med(lambda r: r["client_cpu_s"]),
            "client_pbkdf2_count": med(lambda r: r["client_pbkdf2"]["count"]),
            "start_spread_ms": med(lambda r: r["start_spread_ms"]),
            "ciphers": sorted({c for r in rs for c in r["ciphers"]}),
        }
    return out


def _throughput_section(run: dict) -> list[str]:
    cfg, plan = run["config"], run["plan"]
    lines: list[str] = []
    rows = summary(run)
    lines += [
        "",
        "### Throughput over PLAINTEXT and over SASL_SSL",
        "",
        f"Kafka's ProducerPerformance / ConsumerPerformance ({cfg['load_generator']}, Java client "
        "defaults, 512 MiB heap) against both systems, over SASL_SSL with a `--command-config` of "
        f"`security.protocol=SASL_SSL`, `sasl.mechanism={secure.MECHANISM}`, "
        f"`ssl.enabled.protocols={secure.TLS_VERSION}` and the CA as a PEM truststore. "
        f"{plan['records']:,} records of {RECORD_SIZE} B per produce (fresh {PARTITIONS}-partition "
        "topic each, page cache dropped before each); consume reads the acks=1/none topic from "
        "the start (ConsumerPerformance's fetch rate, group join excluded). "
        + (f"A warm-up of {plan['warmup']:,} records per protocol first. "
           if plan["warmup"] else "")
        + "`strata bench` (librdkafka) is not used here: it takes no security settings. "
        f"Medians over {plan['reps']} round(s); the order of the protocols alternates by round. "
        "**TLS cost** = SASL_SSL MB/s ÷ PLAINTEXT MB/s of the same system (1.00: free; higher is "
        "better). Issue 31's goals: Strata's TLS cost no worse than Kafka's, and Strata over "
        "SASL_SSL at least 1.5x Kafka over SASL_SSL.",
        "",
        "| workload | Strata PLAINTEXT MB/s | Strata SASL_SSL MB/s | Strata TLS cost | Kafka "
        "PLAINTEXT MB/s | Kafka SASL_SSL MB/s | Kafka TLS cost | Strata÷Kafka, SASL_SSL | "
        "Strata÷Kafka, PLAINTEXT | goals (cost; 1.5x) | per round: TLS cost Strata/Kafka, "
        "Strata÷Kafka SASL_SSL |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        mb, cost, sk, g = r["mb_per_s"], r["tls_cost"], r["strata_over_kafka"], r["goals"]

        def met(key):
            return "n/a" if key not in g else ("met" if g[key] else "**not met**")
        per = "; ".join(f"{_fmt(x['tls_cost']['strata'], 2)}/{_fmt(x['tls_cost']['kafka'], 2)}, "
                        f"{_fmt(x['strata_over_kafka_tls'], 2)}" for x in r["rounds"])
        lines.append(
            f"| {r['label']} | {_fmt(mb['strata PLAINTEXT'])} | {_fmt(mb['strata SASL_SSL'])} | "
            f"{_fmt(cost['strata'], 2)} | {_fmt(mb['kafka PLAINTEXT'])} | "
            f"{_fmt(mb['kafka SASL_SSL'])} | {_fmt(cost['kafka'], 2)} | "
            f"{_fmt(sk['SASL_SSL'], 2)} | {_fmt(sk['PLAINTEXT'], 2)} | "
            f"{met('tls_cost_no_worse_than_kafka')}; {met('strata_tls_at_least_1.5x_kafka_tls')} "
            f"| {per} |")
    lines += [
        "",
        "Broker CPU s/GB (user+system CPU of the broker process per GB of record values) and peak "
        "RSS over the same runs, PLAINTEXT → SASL_SSL:",
        "",
        "| workload | Strata CPU s/GB | Kafka CPU s/GB | Strata peak RSS MiB | "
        "Kafka peak RSS MiB |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        c, p = r["cpu_s_per_gb"], r["peak_rss_mib"]
        lines.append(
            f"| {r['label']} "
            f"| {_fmt(c['strata PLAINTEXT'], 2)} → {_fmt(c['strata SASL_SSL'], 2)} "
            f"| {_fmt(c['kafka PLAINTEXT'], 2)} → {_fmt(c['kafka SASL_SSL'], 2)} "
            f"| {_fmt(p['strata PLAINTEXT'], 0)} → {_fmt(p['strata SASL_SSL'], 0)} "
            f"| {_fmt(p['kafka PLAINTEXT'], 0)} → {_fmt(p['kafka SASL_SSL'], 0)} |")

    return lines


def _storm_section(run: dict) -> list[str]:
    cfg, plan = run["config"], run["plan"]
    st = storm_summary(run)
    backlog = cfg["somaxconn"]
    names = {"strata": "Strata", "kafka": "Kafka",
             "kafka backlog": f"Kafka, `socket.listen.backlog.size={backlog}`"}
    cols = [c for c in names if c in st] or ["strata", "kafka"]
    ratios = [c for c in cols if c.startswith("kafka") and "strata" in st]
    lines = [
        "",
        f"### Connection storm: {plan['connections']:,} TLS connections authenticating with "
        f"{secure.MECHANISM} at once",
        "",
        f"{plan['storm_procs']} client processes of asyncio Python (`harness/storm.py`), released "
        "at one CLOCK_MONOTONIC instant, each client: TCP connect, TLS handshake "
        f"({secure.TLS_VERSION}, server certificate checked), ApiVersions v3, SaslHandshake v1, "
        "SaslAuthenticate v2 twice (the server's signature checked); connections spread over "
        f"{plan['storm_users']} users; every connection stays open until the broker's memory is "
        "read; a client not authenticated within "
        f"{STORM_TIMEOUT_S} s (or whose TLS handshake takes over 60 s, asyncio's limit) counts as "
        "failed. The client computes SCRAM's PBKDF2 once per user and salt and reuses it (the "
        "broker stores StoredKey/ServerKey and runs no PBKDF2 per login either), so per "
        "connection both sides do only HMACs and the TLS handshake; the clients' own CPU time is "
        "in the table (on 2 shared cores it competes with the broker's, for both systems alike). "
        f"A warm-up storm of {plan['storm_warmup']} connections runs first on each broker. Medians "
        f"over {plan['reps']} round(s). Each storm runs on a freshly started broker, before the "
        "throughput runs."
        + (f" The last column{'s' if len(ratios) > 1 else ''}: Kafka again, on a fresh broker "
           f"used for the storm only, with its listen backlog raised from its default 50 to "
           f"{backlog} (`net.core.somaxconn`, what Strata listens with), to show how much of "
           "Kafka's time is connections waiting for the kernel to retry a SYN dropped from a "
           "full accept queue." if "kafka backlog" in st else ""),
        "",
        "| figure | " + " | ".join([names[c] for c in cols]
                                   + [f"Strata÷{names[c]}" for c in ratios]) + " |",
        "|---|" + "---|" * (len(cols) + len(ratios)),
    ]

    def row(name, key, digits=1, ratio=True):
        vals = [_fmt(st.get(c, {}).get(key), digits) for c in cols]
        rs = [_fmt(_ratio(st.get("strata", {}).get(key), st[c].get(key)), 2) if ratio else ""
              for c in ratios]
        lines.append(f"| {name} | " + " | ".join(vals + rs) + " |")

    def row2(name, key1, key2, digits=0):
        vals = [f"{_fmt(st.get(c, {}).get(key1), digits)} / {_fmt(st.get(c, {}).get(key2), digits)}"
                for c in cols]
        lines.append(f"| {name} | " + " | ".join(vals + [""] * len(ratios)) + " |")

    row("connections authenticated", "authenticated", 0, False)
    row("failed", "failed", 0, False)
    row("seconds until all authenticated", "all_authenticated_s", 2)
    lines.append("| the same, per round | " + " | ".join(
        [", ".join(_fmt(x, 2) for x in st.get(c, {}).get("all_authenticated_s_rounds", []))
         or "n/a" for c in cols] + [""] * len(ratios)) + " |")
    row("seconds until the last authenticated (if some failed)", "last_authenticated_s", 2)
    row("per connection p50 ms (connect to authenticated)", "per_connection_p50_ms", 0)
    row("per connection p99 ms", "per_connection_p99_ms", 0)
    row2("TCP connect p99 / max ms", "tcp_connect_p99_ms", "tcp_connect_max_ms")
    row("SYNs or ACKs dropped by a full accept queue (ListenOverflows)", "listen_overflows", 0,
        False)
    row2("TLS handshake p50 / p99 ms", "tls_p50_ms", "tls_p99_ms")
    row2("SASL (ApiVersions to authenticated) p50 / p99 ms", "sasl_p50_ms", "sasl_p99_ms")
    row("broker CPU s over the storm", "broker_cpu_s", 2)
    row("broker CPU ms per authenticated connection", "broker_cpu_ms_per_connection", 2)
    row("broker RSS MiB before", "rss_before_mib", 0)
    row("broker RSS MiB with all connections open", "rss_all_open_mib", 0)
    row("broker peak RSS MiB", "rss_peak_mib", 0)
    row("broker RSS MiB after they closed", "rss_after_close_mib", 0)
    row("broker RSS growth per authenticated connection KiB", "rss_per_connection_kib", 1)
    row2("broker open fds before / all open", "fds_before", "fds_all_open")
    row("client CPU s over the storm (all client processes)", "client_cpu_s", 2, False)
    fails = {c: d["failures"] for c, d in st.items() if any(d["failures"])}
    examples = sorted({e for r in run["storm"] for e in r["failure_examples"]})[:3]
    lim = run["fd_limit"]
    bl = {sy: [x.get("fd_limit") for x in b["rounds"]] for sy, b in run["brokers"].items()}
    lines += [
        "",
        f"Failures by stage: {json.dumps(fails) if fails else 'none'}"
        + (f" (e.g. {'; '.join(examples)})" if examples else "") + ". Negotiated: "
        f"{', '.join(sorted({c for d in st.values() for c in d['ciphers']})) or 'n/a'}. "
        f"Open-file limits: this harness's soft limit {lim['after']['soft']} (hard "
        f"{lim['after']['hard']}; it needs {lim['need']}), inherited by both brokers; seen in "
        "/proc/<pid>/limits: "
        + ", ".join(f"{sy} " + "/".join(map(str, v)) for sy, v in bl.items()) + ". "
        "Listen backlogs at each system's default: Kafka's `socket.listen.backlog.size` 50, "
        f"Strata's SOMAXCONN (`net.core.somaxconn` {backlog}). When a listener's accept queue is "
        "full the kernel drops the SYN (or the ACK completing the handshake: the client then "
        "believes it is connected and its first bytes wait with it), and the client's kernel "
        "retransmits after 1 s, 2 s, 4 s, ... (`ListenOverflows`, machine-wide, counts these). "
        "RSS is VmRSS of the broker process: Kafka's includes pages of its 1 GiB heap first "
        "touched during the storm (a JVM does not give them back), Strata's is its own "
        "allocations.",
    ]
    return lines


def markdown(run: dict) -> str:
    cfg, plan = run["config"], run["plan"]
    ts = run["started_utc"]
    ktls = cfg["kernel_tls"]
    lines = [
        f"## {ts[:10]} {ts[11:16]} UTC — Security: TLS and SASL cost, Strata vs Apache Kafka "
        f"{cfg['kafka_version']} (`{run['command']}`)",
        "",
        *report.command_and_machine(run),
        f"TLS libraries: Strata links {cfg['tls']['strata_libssl']} ({cfg['tls']['openssl_cli']}); "
        f"Kafka and the Java clients use the JDK's ({cfg['tls']['java']}). Kernel TLS: "
        f"{'available' if ktls['available'] else 'not available on this machine'}"
        f"{'' if ktls['available'] else ' (' + ktls['note'] + ')'}.",
        "",
        "Systems, one after the other (never both at once), each round on a fresh broker and "
        "data dir: Apache Kafka as one KRaft combined node (JVM -Xmx1g -Xms1g G1, internal "
        "topics at RF 1), Strata `strata serve`; each with a PLAINTEXT listener (set-up, and the "
        "PLAINTEXT figures) and a SASL_SSL listener with the same keys on both: "
        f"`sasl.enabled.mechanisms={secure.MECHANISM}`, `ssl.keystore.type=PEM` (key, "
        "certificate and CA in one file made with the openssl CLI, RSA 2048), "
        f"`ssl.enabled.protocols={secure.TLS_VERSION}`, `ssl.cipher.suites={secure.CIPHER}`, "
        "no client certificates, inter-broker traffic on PLAINTEXT; defaults otherwise. SCRAM "
        f"users ({secure.MECHANISM}, {secure.SCRAM_ITERATIONS} iterations) made after start: "
        "the load generators' with Kafka's kafka-configs (ConfigCommand), the storm's "
        f"{plan['storm_users']} with the AlterUserScramCredentials request kafka-configs sends.",
    ]
    if "throughput" in plan["phases"]:
        lines += _throughput_section(run)
    if "storm" in plan["phases"]:
        lines += _storm_section(run)
    failed = [f"{r['system']} {r['protocol']} {r['label']}: {str(r.get('error'))[:200]}"
              for r in run["throughput"] if not r.get("ok")] + run["errors"]
    if failed:
        lines += ["", "Failed: " + "; ".join(failed)]
    lines += ["", f"Raw data: `{run['files']['json']}`.", ""]
    return "\n".join(lines)


# ---- smoke checks ---------------------------------------------------------------------------

def smoke_checks(run: dict, json_path: Path, md: str) -> list[str]:
    """What --smoke asserts: every workload and the storm ran with sane numbers, every
    connection authenticated and was held open, and the outputs exist and parse."""
    problems = []
    plan = run["plan"]
    expected = len(workloads(plan)) * len(PROTOCOLS) * plan["reps"] * len(plan["systems"]) \
        if "throughput" in plan["phases"] else 0
    if len(run["throughput"]) != expected:
        problems.append(f"{len(run['throughput'])} throughput results, expected {expected}")
    for r in run["throughput"]:
        name = f"{r['system']} {r['protocol']} {r['label']}"
        if not r.get("ok"):
            problems.append(f"{name}: {r.get('error')}")
        elif not (r["records"] >= r["workload_records"] and r["mb_per_s"] > 0
                  and r["peak_rss_mib"] > 0 and r.get("cpu_s_per_gb") is not None):
            problems.append(f"{name}: implausible numbers")
    storms = plan["reps"] * (len(plan["systems"]) + bool(backlog_variant(plan))) \
        if "storm" in plan["phases"] else 0
    if len(run["storm"]) != storms:
        problems.append(f"{len(run['storm'])} storms, expected {storms}")
    for r in run["storm"]:
        if r["authenticated"] != r["connections"] or r["all_authenticated_s"] is None:
            problems.append(f"{r['system']} storm: {r['failed']} failed: {r['failure_examples']}")
        if (r["broker_fds"]["all_open"] or 0) - (r["broker_fds"]["before"] or 0) < \
                0.9 * r["connections"]:
            problems.append(f"{r['system']} storm: the broker did not hold the connections "
                            f"open ({r['broker_fds']})")
        if not (r["broker_rss_mib"]["before"] > 0 and r["per_connection_ms"]["p99"]):
            problems.append(f"{r['system']} storm: implausible numbers")
    for row in summary(run) if expected else []:
        for system in plan["systems"]:
            if row["tls_cost"][system] is None:
                problems.append(f"{row['label']}: no TLS cost for {system}")
    js = json.loads(json_path.read_text())
    if js["throughput"] != run["throughput"] or js["storm"] != run["storm"]:
        problems.append("JSON file does not round-trip")
    if md.count("\n| ") < (len(workloads(plan)) * 2 + 2) * ("throughput" in plan["phases"]) \
            + 18 * ("storm" in plan["phases"]):
        problems.append("markdown tables are missing rows")
    return problems


# ---- main -----------------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true",
                   help="1 round, 0.2 GB per produce; the storm at its full 2,000 connections")
    g.add_argument("--smoke", action="store_true",
                   help="Strata only, 5,000 records, 200 connections, output to a temp dir; "
                        "checks the pipeline")
    ap.add_argument("--systems", help="comma-separated subset of kafka,strata")
    ap.add_argument("--records", type=int, help="records per produce workload (overrides mode)")
    ap.add_argument("--warmup", type=int, help="warm-up records per protocol (overrides mode)")
    ap.add_argument("--reps", type=int, help="rounds per system (overrides mode)")
    ap.add_argument("--connections", type=int, help="clients in the storm (overrides mode)")
    ap.add_argument("--storm-procs", type=int, help="client processes the storm is spread over "
                                                     "(default 2)")
    ap.add_argument("--backlog-variant", choices=["on", "off"],
                    help="also run Kafka's storm with socket.listen.backlog.size raised to "
                         "net.core.somaxconn, Strata's backlog (default: on, off with --smoke)")
    ap.add_argument("--phases", default="storm,throughput",
                    help="subset of storm,throughput (default both)")
    ap.add_argument("--strata-bin",
                    default=os.environ.get("STRATA_BIN", str(REPO / "build/strata")))
    ap.add_argument("--kafka-lib", help="directory with Apache Kafka's jars")
    ap.add_argument("--workdir",
                    help="where data dirs and logs go (default bench/.work/security-<ts>)")
    ap.add_argument("--out-dir", help="where security-<ts>.json goes (default bench/results)")
    ap.add_argument("--no-record", action="store_true", help="do not append to bench/RESULTS.md")
    args = ap.parse_args()

    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    plan = dict(MODES[mode])
    for key in ("records", "warmup", "reps", "connections", "storm_procs"):
        if getattr(args, key) is not None:
            plan[key] = getattr(args, key)
    if args.systems:
        plan["systems"] = [s for s in SYSTEMS if s in args.systems.split(",")]
    plan["phases"] = [p for p in ("storm", "throughput") if p in args.phases.split(",")]
    if args.backlog_variant:
        plan["backlog_variant"] = args.backlog_variant == "on"
    started = datetime.datetime.now(datetime.timezone.utc)
    ts = started.strftime("%Y%m%dT%H%M%SZ")
    tmp = Path(tempfile.mkdtemp(prefix="strata-security-smoke-")) if mode == "smoke" else None
    workdir = Path(args.workdir) if args.workdir else (
        tmp / "work" if tmp else BENCH / ".work" / f"security-{ts}")
    out_dir = Path(args.out_dir) if args.out_dir else (tmp if tmp else BENCH / "results")
    strata_bin = Path(args.strata_bin).resolve()
    kafka_lib = env.find_kafka_lib(args.kafka_lib, log)
    if not strata_bin.exists():
        log(f"no Strata binary at {strata_bin} (set STRATA_BIN or --strata-bin)")
        return 2
    if kafka_lib is None:  # the load generators and kafka-configs are Kafka's, even for Strata
        log("Apache Kafka jars not found (run bench/setup.sh, or pass --kafka-lib)")
        return 2
    for tool in ("java", "openssl"):
        if not shutil.which(tool):
            log(f"{tool} not found")
            return 2

    def on_term(signum, _frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, on_term)

    command = "bench/security.sh" + {"full": "", "quick": " --quick", "smoke": " --smoke"}[mode]
    for key in ("systems", "records", "warmup", "reps", "connections", "storm_procs"):
        if getattr(args, key) is not None:
            command += f" --{key.replace('_', '-')} {getattr(args, key)}"
    if plan["phases"] != ["storm", "throughput"]:
        command += f" --phases {','.join(plan['phases'])}"
    if args.backlog_variant:
        command += f" --backlog-variant {args.backlog_variant}"
    workdir.mkdir(parents=True, exist_ok=True)
    need = (len(plan["produce"]) * len(PROTOCOLS) * plan["records"]
            + len(PROTOCOLS) * plan["warmup"]) * RECORD_SIZE * 1.2 + (2 << 30)
    if shutil.disk_usage(workdir).free < need:
        log(f"not enough disk space in {workdir}: need {need / 1e9:.1f} GB")
        return 2
    fd_limit = raise_fd_limit(plan["connections"] + FD_HEADROOM)
    if fd_limit["after"]["soft"] < fd_limit["need"]:
        log(f"open-file limit {fd_limit['after']} is below {fd_limit['need']} and cannot be raised")
        return 2
    log(f"mode {mode}; systems {plan['systems']}; work dir {workdir}; load average "
        f"{limits.loadavg()}; open-file limit {fd_limit['after']['soft']}")
    if mode == "smoke":
        log(f"storm client checks: {test_storm.run_all()} passed")
    other = limits.OtherLoad()
    t0 = time.time()
    ca, keystore = secure.make_certs(workdir / "certs")
    log4j = workdir / "tools-log4j2.properties"
    log4j.write_text(brokers.LOG4J2)
    gen = loadgen.KafkaPerf(workdir / "logs", RECORD_SIZE, kafka_lib, log4j)
    json_path = out_dir / f"security-{ts}.json"
    try:
        somaxconn = Path("/proc/sys/net/core/somaxconn").read_text().strip()
    except OSError:
        somaxconn = "4096"  # Linux's default since 5.4
    run = {"kind": "security", "mode": mode, "command": command,
           "started_utc": started.strftime("%Y-%m-%d %H:%M:%S"), "plan": plan,
           "config": {**plan, "partitions": PARTITIONS, "record_size": RECORD_SIZE,
                      "mechanism": secure.MECHANISM, "tls_version": secure.TLS_VERSION,
                      "cipher": secure.CIPHER, "scram_iterations": secure.SCRAM_ITERATIONS,
                      "storm_timeout_s": STORM_TIMEOUT_S, "strata_bin": str(strata_bin),
                      "load_generator": next(kafka_lib.glob("kafka-tools-[0-9]*.jar")).stem,
                      "client_properties": (workdir / "client-sasl-ssl.properties").name,
                      "kernel_tls": secure.kernel_tls(), "tls": secure.openssl_versions(strata_bin),
                      "somaxconn": somaxconn, **env.versions(kafka_lib, strata_bin)},
           "machine": limits.machine(workdir), "loadavg_start": limits.loadavg(),
           "fd_limit": fd_limit, "brokers": {}, "storm": [], "storm_warmup": [],
           "throughput": [], "errors": [],
           "files": {"json": str(env.repo_relative(json_path))}}
    runner = Runner(run, plan, gen, workdir, kafka_lib, strata_bin, ca, keystore)
    run["config"]["client_properties_text"] = runner.client_props.read_text()
    try:
        for rep in range(plan["reps"]):
            order = plan["systems"] if rep % 2 == 0 else list(reversed(plan["systems"]))
            for system in order:
                runs = [(system, "defaults", None, None)]
                if system == "kafka" and backlog_variant(plan):
                    runs.append((system, "backlog", {"socket.listen.backlog.size": somaxconn},
                                 ["storm"]))
                for sy, variant, settings, phases in runs:
                    try:
                        runner.system(sy, rep, variant, settings, phases)
                    except (RuntimeError, kadmin.KafkaError, OSError) as e:
                        run["errors"].append(f"{sy} {variant} round {rep + 1}: {e}")
                        log(f"{sy} {variant}: ABORTED: {e}")
    finally:
        procs.kill_all()
    run["elapsed_s"] = round(time.time() - t0, 1)
    run["loadavg_end"] = limits.loadavg()
    run["other_load"] = other.summary()
    run["summary"] = {"throughput": summary(run), "storm": storm_summary(run)}
    md = markdown(run)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(run, indent=1) + "\n")
    (workdir / "section.md").write_text(md)
    print("\n" + md)
    failed = run["errors"] + [f"{r['system']} {r['protocol']} {r['label']}"
                              for r in run["throughput"] if not r.get("ok")] + [
        f"{r['system']} storm: no connection authenticated" for r in run["storm"]
        if not r["authenticated"]]  # some failing is a figure; all failing is a broken run
    if mode == "smoke":
        problems = smoke_checks(run, json_path, md) + run["errors"]
        if problems:
            log(f"SMOKE FAILED (outputs kept in {tmp}):\n  " + "\n  ".join(problems))
            return 1
        shutil.rmtree(tmp, ignore_errors=True)
        log(f"smoke OK: {len(run['throughput'])} workloads and the storm, outputs checked "
            f"({run['elapsed_s']} s)")
        return 0
    if failed:
        log("FAILED: " + "; ".join(failed) + " — not appended to bench/RESULTS.md")
        return 1
    if not args.no_record:
        with open(BENCH / "RESULTS.md", "a") as f:
            f.write("\n" + md)
        log("appended to bench/RESULTS.md")
    log(f"done in {run['elapsed_s'] / 60:.1f} min; JSON {json_path}; logs in {workdir}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        procs.kill_all()
