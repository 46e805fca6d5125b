"""The report of bench/security.py: medians per system, protocol, load generator and workload
(summary: TLS costs, Strata over Kafka, issue 31's goals), the connection storm's figures
(storm_summary), and the section appended to bench/RESULTS.md (markdown). Reads only the run
dict security.py collects (its "plan", "config", "throughput", "storm", "brokers" ...).
"""
from __future__ import annotations

import json
import statistics

from . import report, secure

SYSTEMS = ["kafka", "strata"]
PROTOCOLS = ["PLAINTEXT", "SASL_SSL"]
# harness/loadgen.py's names, in report order.
GENERATORS = ["kafka-perf", "strata-bench"]
CONSUME_CONFIG = ("1", "none")  # the topic this config wrote is then consumed from the start

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


def generators(plan: dict) -> list[str]:
    """The load generators of a run, in report order (runs before strata-bench had only
    kafka-perf)."""
    return [g for g in GENERATORS if g in plan.get("generators", ["kafka-perf"])]


def _entries(run, gen, system, proto, label, rep=None) -> list[dict]:
    return [r for r in run["throughput"] if r["system"] == system and r["protocol"] == proto
            and r["label"] == label and r.get("generator", "kafka-perf") == gen and r.get("ok")
            and (rep is None or r["rep"] == rep)]


def _med(run, gen, system, proto, label, key="mb_per_s"):
    return _median([r.get(key) for r in _entries(run, gen, system, proto, label)])


def summary(run: dict) -> list[dict]:
    """Per load generator and workload: medians per system and protocol, TLS costs,
    Strata/Kafka ratios, the issue's goals, and the per-round ratios."""
    rows = []
    for gen, (kind, label, _acks, _comp) in ((g, w) for g in generators(run["plan"])
                                             for w in workloads(run["plan"])):
        m = {(s, p): _med(run, gen, s, p, label) for s in SYSTEMS for p in PROTOCOLS}
        cost = {s: _ratio(m[(s, "SASL_SSL")], m[(s, "PLAINTEXT")]) for s in SYSTEMS}
        tls_ratio = _ratio(m[("strata", "SASL_SSL")], m[("kafka", "SASL_SSL")])
        plain_ratio = _ratio(m[("strata", "PLAINTEXT")], m[("kafka", "PLAINTEXT")])
        rounds = []
        for rep in range(run["plan"]["reps"]):
            v = {(s, p): (_entries(run, gen, s, p, label, rep) or [{}])[0].get("mb_per_s")
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
        rows.append({"generator": gen, "kind": kind, "label": label,
                     "mb_per_s": {f"{s} {p}": m[(s, p)] for s in SYSTEMS for p in PROTOCOLS},
                     "cpu_s_per_gb": {f"{s} {p}": _med(run, gen, s, p, label, "cpu_s_per_gb")
                                      for s in SYSTEMS for p in PROTOCOLS},
                     "peak_rss_mib": {f"{s} {p}": _med(run, gen, s, p, label, "peak_rss_mib")
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
    gens = generators(plan)
    lines: list[str] = []
    rows = summary(run)
    tools = [f"Kafka's ProducerPerformance / ConsumerPerformance (**kafka-perf**, "
             f"{cfg['load_generator']}, Java client defaults, 512 MiB heap, TLS of the JDK), over "
             "SASL_SSL with a `--command-config` of `security.protocol=SASL_SSL`, "
             f"`sasl.mechanism={secure.MECHANISM}`, `ssl.enabled.protocols={secure.TLS_VERSION}` "
             "and the CA as a PEM truststore"]
    if "strata-bench" in gens:
        tools.append(
            f"`strata bench produce|consume` (**strata-bench**, librdkafka "
            f"{cfg.get('librdkafka', '?')}"
            + (" as confluent-kafka's wheel ships it, with its own OpenSSL, loaded through "
               "LD_LIBRARY_PATH as the system's is too old for SASL with Kafka 4.x and Strata"
               if cfg.get("librdkafka_dir") else " with the system's OpenSSL")
            + ": 1 MiB batches, linger 5 ms; consume "
            "assigns every partition, no group), over SASL_SSL with a `--command-config` of "
            f"`security.protocol=SASL_SSL`, `sasl.mechanism={secure.MECHANISM}`, "
            "`sasl.username`/`sasl.password`, `ssl.ca.location` (the CA PEM) and "
            "`ssl.endpoint.identification.algorithm=https` (the broker's address checked against "
            "its certificate, as the Java client does; the TLS version is the broker's only one)")
    lines += [
        "",
        "### Throughput over PLAINTEXT and over SASL_SSL",
        "",
        "Load generators, each against both systems over both protocols: "
        + "; and ".join(tools) + ". "
        f"{plan['records']:,} records of {cfg['record_size']} B per produce (a fresh "
        f"{cfg['partitions']}-partition topic each, page cache dropped before each); consume "
        "reads the acks=1/none topic the same load generator wrote from the start "
        "(ConsumerPerformance's fetch rate, group join excluded). "
        + (f"A warm-up of {plan['warmup']:,} records per protocol (kafka-perf) first. "
           if plan["warmup"] else "")
        + f"Medians over {plan['reps']} round(s); the order of the protocols, and of the load "
        "generators, alternates by round. **TLS cost** = SASL_SSL MB/s ÷ PLAINTEXT MB/s of the "
        "same system and load generator (1.00: free; higher is better). Issue 31's goals: "
        "Strata's TLS cost no worse than Kafka's, and Strata over SASL_SSL at least 1.5x Kafka "
        "over SASL_SSL (per load generator).",
        "",
        "| load generator | workload | Strata PLAINTEXT MB/s | Strata SASL_SSL MB/s | Strata TLS "
        "cost | Kafka PLAINTEXT MB/s | Kafka SASL_SSL MB/s | Kafka TLS cost | Strata÷Kafka, "
        "SASL_SSL | Strata÷Kafka, PLAINTEXT | goals (cost; 1.5x) | per round: TLS cost "
        "Strata/Kafka, Strata÷Kafka SASL_SSL |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        mb, cost, sk, g = r["mb_per_s"], r["tls_cost"], r["strata_over_kafka"], r["goals"]

        def met(key):
            return "n/a" if key not in g else ("met" if g[key] else "**not met**")
        per = "; ".join(f"{_fmt(x['tls_cost']['strata'], 2)}/{_fmt(x['tls_cost']['kafka'], 2)}, "
                        f"{_fmt(x['strata_over_kafka_tls'], 2)}" for x in r["rounds"])
        lines.append(
            f"| {r['generator']} | {r['label']} | {_fmt(mb['strata PLAINTEXT'])} | "
            f"{_fmt(mb['strata SASL_SSL'])} | {_fmt(cost['strata'], 2)} | "
            f"{_fmt(mb['kafka PLAINTEXT'])} | {_fmt(mb['kafka SASL_SSL'])} | "
            f"{_fmt(cost['kafka'], 2)} | {_fmt(sk['SASL_SSL'], 2)} | {_fmt(sk['PLAINTEXT'], 2)} | "
            f"{met('tls_cost_no_worse_than_kafka')}; {met('strata_tls_at_least_1.5x_kafka_tls')} "
            f"| {per} |")
    lines += [
        "",
        "Broker CPU s/GB (user+system CPU of the broker process per GB of record values) and peak "
        "RSS over the same runs, PLAINTEXT → SASL_SSL:",
        "",
        "| load generator | workload | Strata CPU s/GB | Kafka CPU s/GB | Strata peak RSS MiB | "
        "Kafka peak RSS MiB |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        c, p = r["cpu_s_per_gb"], r["peak_rss_mib"]
        lines.append(
            f"| {r['generator']} | {r['label']} "
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
        f"read; a client not authenticated within {cfg['storm_timeout_s']} s (or whose TLS "
        "handshake takes over 60 s, asyncio's limit) counts as failed. The client computes "
        "SCRAM's PBKDF2 once per user and salt and reuses it (the broker stores "
        "StoredKey/ServerKey and runs no PBKDF2 per login either), so per connection both "
        "sides do only HMACs and the TLS handshake; the clients' own CPU time is in the table "
        "(on 2 shared cores it competes with the broker's, for both systems alike). "
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
        f"Kafka and the Java clients use the JDK's ({cfg['tls']['java']}); `strata bench` "
        "librdkafka's (below). Kernel TLS: "
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
    failed = [f"{r['system']} {r['protocol']} {r.get('generator', 'kafka-perf')} {r['label']}: "
              f"{str(r.get('error'))[:200]}"
              for r in run["throughput"] if not r.get("ok")] + run["errors"]
    if failed:
        lines += ["", "Failed: " + "; ".join(failed)]
    lines += ["", f"Raw data: `{run['files']['json']}`.", ""]
    return "\n".join(lines)
