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
2. Throughput with two load generators, each against both systems over PLAINTEXT and over
   SASL_SSL: Kafka's ProducerPerformance / ConsumerPerformance (harness/loadgen.py's KafkaPerf,
   Java client defaults; SASL_SSL through a --command-config of harness/secure.py's Java
   properties) and `strata bench produce|consume` (StrataBench, librdkafka; SASL_SSL through a
   --command-config of the same settings in librdkafka's names). A warm-up per protocol
   (kafka-perf), then per protocol and load generator (both orders alternating by round)
   unthrottled produce of --records 1 KiB records into a fresh 16-partition topic for acks=1
   with compression none and lz4, and a consume of the acks=1/none topic from the start. MB/s,
   the broker's CPU s/GB and peak RSS, as bench/run.py measures them.
Reported (harness/security_report.py), per load generator: each system's TLS cost (SASL_SSL
MB/s / PLAINTEXT MB/s) and Strata over SASL_SSL / Kafka over SASL_SSL, against issue 31's goals
(Strata's TLS cost no worse than Kafka's; Strata over TLS >= 1.5x Kafka over TLS), and the storm
side by side. Medians over --reps rounds
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
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from harness import (brokers, env, kadmin, limits, loadgen, procs, secure, storm,  # noqa: E402
                     test_storm)
from harness import security_report as sr  # noqa: E402
from harness.security_report import CONSUME_CONFIG, PROTOCOLS, SYSTEMS  # noqa: E402

PARTITIONS = 16
RECORD_SIZE = 1024
BENCH_USER, BENCH_PASSWORD = "bench", "bench-secret"

MODES = {
    "full": dict(records=1_000_000, warmup=200_000, reps=3, connections=2000, storm_procs=2,
                 storm_users=10, storm_warmup=50, produce=[("1", "none"), ("1", "lz4")],
                 systems=SYSTEMS, backlog_variant=True, generators=sr.GENERATORS),
    "quick": dict(records=200_000, warmup=50_000, reps=1, connections=2000, storm_procs=2,
                  storm_users=10, storm_warmup=50, produce=[("1", "none"), ("1", "lz4")],
                  systems=SYSTEMS, backlog_variant=True, generators=sr.GENERATORS),
    "smoke": dict(records=5_000, warmup=0, reps=1, connections=200, storm_procs=2,
                  storm_users=4, storm_warmup=10, produce=[("1", "none")], systems=["strata"],
                  backlog_variant=False, generators=sr.GENERATORS),
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

    def __init__(self, run: dict, plan: dict, gens: list[loadgen.LoadGenerator], workdir: Path,
                 kafka_lib: Path, strata_bin: Path, ca: Path, keystore: Path):
        """gens: the load generators of plan["generators"], KafkaPerf first (it also runs the
        warm-ups, and kafka-configs takes its log4j configuration)."""
        self.run, self.plan, self.gens, self.workdir = run, plan, gens, workdir
        self.gen = gens[0]
        self.kafka_lib, self.strata_bin = kafka_lib, strata_bin
        self.ca, self.keystore = ca, keystore
        self.client_props = {
            "kafka-perf": secure.java_client_properties(
                workdir / "client-sasl-ssl.properties", ca, BENCH_USER, BENCH_PASSWORD),
            "strata-bench": secure.librdkafka_client_properties(
                workdir / "librdkafka-sasl-ssl.properties", ca, BENCH_USER, BENCH_PASSWORD)}
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
        gens = self.gens if rep % 2 == 0 else list(reversed(self.gens))
        sampler = procs.ProcSampler(broker.pid)
        try:
            if self.plan["warmup"]:
                for proto in order:
                    self._warmup(system, broker, proto, endpoints[proto])
            for proto in order:
                for gen in gens:
                    for acks, comp in self.plan["produce"]:
                        topic = self._produce(gen, system, rep, broker, sampler, proto,
                                              endpoints[proto], acks, comp)
                        if (acks, comp) == CONSUME_CONFIG:
                            self._consume(gen, system, rep, broker, sampler, proto,
                                          endpoints[proto], topic)
        finally:
            sampler.close()

    def _props(self, proto: str, gen: loadgen.LoadGenerator | None = None) -> Path | None:
        """The client properties file for `proto` in `gen`'s dialect (none for PLAINTEXT)."""
        return self.client_props[(gen or self.gen).name] if proto == "SASL_SSL" else None

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

    def _produce(self, gen, system, rep, broker, sampler, proto, bootstrap, acks, comp) -> str:
        # Topics are never deleted during a run: no background deletion overlaps a workload.
        topic = f"produce-{gen.name}-{proto.lower()}-acks{acks}-{comp}"
        kadmin.create_topic(broker.bootstrap, topic, PARTITIONS)
        env.drop_page_cache(log)
        n = self.plan["records"]
        log(f"{system} (round {rep + 1}): produce acks={acks} {comp} over {proto} with "
            f"{gen.name} ({n:,} records)")
        sampler.begin()
        r = gen.produce(bootstrap, topic, n, acks, comp, 0, f"{system}-r{rep + 1}-{topic}",
                        client_config=self._props(proto, gen))
        r.update(sampler.end())
        broker.check_alive(f"produce over {proto} with {gen.name}")
        self._add(gen, system, rep, proto, "produce", f"produce acks={acks} {comp}", acks, comp,
                  n, r)
        return topic

    def _consume(self, gen, system, rep, broker, sampler, proto, bootstrap, topic) -> None:
        env.settle_page_cache(log)
        n = self.plan["records"]
        log(f"{system} (round {rep + 1}): consume from start over {proto} with {gen.name} "
            f"({n:,} records)")
        sampler.begin()
        r = gen.consume(bootstrap, topic, n,
                        f"{system}-r{rep + 1}-consume-{gen.name}-{proto.lower()}",
                        client_config=self._props(proto, gen))
        r.update(sampler.end())
        broker.check_alive(f"consume over {proto} with {gen.name}")
        self._add(gen, system, rep, proto, "consume", "consume from start", "", "", n, r)

    def _add(self, gen, system, rep, proto, kind, label, acks, comp, records, r) -> None:
        r.setdefault("ok", False)
        if r.get("ok") and r.get("records"):
            r["cpu_s_per_gb"] = round(r["broker_cpu_s"] / (r["records"] * RECORD_SIZE / 1e9), 3)
        self.run["throughput"].append({"system": system, "rep": rep, "protocol": proto,
                                       "generator": gen.name, "kind": kind, "label": label,
                                       "acks": acks,
                                       "compression": comp, "workload_records": records, **r})
        if r["ok"]:
            log(f"  -> {r['mb_per_s']:.1f} MB/s; broker {r.get('cpu_s_per_gb', 0):.2f} CPU s/GB, "
                f"peak RSS {r['peak_rss_mib']:.0f} MiB")
        else:
            log(f"  -> FAILED: {str(r.get('error'))[:400]}")


# ---- smoke checks ---------------------------------------------------------------------------

def smoke_checks(run: dict, json_path: Path, md: str) -> list[str]:
    """What --smoke asserts: every workload and the storm ran with sane numbers, every
    connection authenticated and was held open, and the outputs exist and parse."""
    problems = []
    plan = run["plan"]
    gens = sr.generators(plan)
    expected = len(sr.workloads(plan)) * len(PROTOCOLS) * plan["reps"] * len(plan["systems"]) \
        * len(gens) if "throughput" in plan["phases"] else 0
    if len(run["throughput"]) != expected:
        problems.append(f"{len(run['throughput'])} throughput results, expected {expected}")
    for r in run["throughput"]:
        name = f"{r['system']} {r['protocol']} {r['generator']} {r['label']}"
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
    for row in sr.summary(run) if expected else []:
        for system in plan["systems"]:
            if row["tls_cost"][system] is None:
                problems.append(f"{row['generator']} {row['label']}: no TLS cost for {system}")
    js = json.loads(json_path.read_text())
    if js["throughput"] != run["throughput"] or js["storm"] != run["storm"]:
        problems.append("JSON file does not round-trip")
    if md.count("\n| ") < (len(sr.workloads(plan)) * len(gens) * 2 + 2) \
            * ("throughput" in plan["phases"]) + 18 * ("storm" in plan["phases"]) \
            or any(f"\n| {g} | " not in md for g in gens if "throughput" in plan["phases"]):
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
    need = (len(plan["produce"]) * len(PROTOCOLS) * len(plan["generators"]) * plan["records"]
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
    gens = [loadgen.KafkaPerf(workdir / "logs", RECORD_SIZE, kafka_lib, log4j),
            loadgen.StrataBench(workdir / "logs", RECORD_SIZE, strata_bin)]
    gens = [g for g in gens if g.name in plan["generators"]]
    rdkafka = None
    if "strata-bench" in plan["generators"]:
        rdkafka = gens[-1].use_scram_capable_librdkafka(workdir / "librdkafka")
        log(f"strata bench runs with librdkafka {rdkafka}"
            + (f" (confluent-kafka's, LD_LIBRARY_PATH={gens[-1].lib_dir})" if gens[-1].lib_dir
               else ""))
        if loadgen.version_tuple(rdkafka) < loadgen.SCRAM_LIBRDKAFKA:
            log("  it cannot authenticate with SCRAM against Kafka 4.x or Strata: its SASL_SSL "
                "runs will fail (pip install -r bench/requirements.txt brings confluent-kafka's)")
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
                      "librdkafka": rdkafka, "librdkafka_dir": str(gens[-1].lib_dir or ""),
                      "kernel_tls": secure.kernel_tls(), "tls": secure.openssl_versions(strata_bin),
                      "somaxconn": somaxconn, **env.versions(kafka_lib, strata_bin)},
           "machine": limits.machine(workdir), "loadavg_start": limits.loadavg(),
           "fd_limit": fd_limit, "brokers": {}, "storm": [], "storm_warmup": [],
           "throughput": [], "errors": [],
           "files": {"json": str(env.repo_relative(json_path))}}
    runner = Runner(run, plan, gens, workdir, kafka_lib, strata_bin, ca, keystore)
    run["config"]["client_properties_text"] = runner.client_props["kafka-perf"].read_text()
    run["config"]["librdkafka_properties_text"] = runner.client_props["strata-bench"].read_text()
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
    run["summary"] = {"throughput": sr.summary(run), "storm": sr.storm_summary(run)}
    md = sr.markdown(run)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(run, indent=1) + "\n")
    (workdir / "section.md").write_text(md)
    print("\n" + md)
    failed = run["errors"] + [f"{r['system']} {r['protocol']} {r['generator']} {r['label']}"
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
