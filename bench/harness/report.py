"""Turns one run's results into the markdown section appended to bench/RESULTS.md, the
JSON file and the PNG chart. Pure functions of the run dict (see run.py for its shape).
"""
from __future__ import annotations

import json
import statistics
from pathlib import Path

SYSTEMS = ("strata", "kafka")
# (result key, column title, digits)
METRICS = [("mb_per_s", "MB/s", 1), ("records_per_s", "records/s", 0), ("p50_ms", "p50 ms", 2),
           ("p99_ms", "p99 ms", 2), ("p999_ms", "p99.9 ms", 2),
           ("cpu_s_per_gb", "broker CPU s/GB", 2), ("peak_rss_mib", "peak RSS MiB", 0)]


def rows(run: dict) -> list[tuple[str, str, dict]]:
    """[(workload label, generator, {system: [result of each round]})] in the order the
    workloads first ran."""
    order, table = [], {}
    for r in run["results"]:
        key = (r["workload"]["label"], r["generator"])
        if key not in table:
            order.append(key)
            table[key] = {}
        table[key].setdefault(r["system"], []).append(r)
    return [(w, g, table[(w, g)]) for w, g in order]


def headline(workload: str) -> tuple[str, str, int]:
    """The figure whose per-round ratios a row lists: p99 for fixed-rate rows, else MB/s."""
    return ("p99_ms", "p99", 2) if workload.startswith("latency") else ("mb_per_s", "MB/s", 1)


def median(by_system: dict, system: str, key: str) -> float | None:
    """Median of `key` over the system's successful rounds (None if none succeeded)."""
    vals = [r[key] for r in by_system.get(system, []) if r.get("ok") and r.get(key) is not None]
    return statistics.median(vals) if vals else None


def round_ratios(by_system: dict, key: str) -> list[float]:
    """Strata÷Kafka of `key` for each round both systems completed, in round order."""
    ks = {r.get("rep", 0): r for r in by_system.get("kafka", []) if r.get("ok")}
    out = []
    for s in by_system.get("strata", []):
        k = ks.get(s.get("rep", 0))
        if s.get("ok") and k and s.get(key) is not None and k.get(key):
            out.append(s[key] / k[key])
    return out


def _num(v, digits: int) -> str:
    if v is None:
        return "n/a"
    return f"{v:,.{digits}f}"


def _value(by_system: dict, system: str, key: str, digits: int) -> tuple[float | None, str]:
    rs = by_system.get(system)
    if not rs:
        return None, "n/a"
    if not any(r.get("ok") for r in rs):
        return None, "unsupported" if any(r.get("unsupported") for r in rs) else "failed"
    v = median(by_system, system, key)
    return v, _num(v, digits)


def _cell(by_system: dict, key: str, digits: int) -> str:
    s, s_text = _value(by_system, "strata", key, digits)
    k, k_text = _value(by_system, "kafka", key, digits)
    text = f"{s_text} / {k_text}"
    if s is not None and k is not None and k > 0:
        text += f" ({s / k:.2f})"
    return text


def markdown(run: dict) -> str:
    m, lim, cfg = run["machine"], run["limits"], run["config"]
    ts = run["started_utc"]
    reps = cfg.get("reps", 1)
    lines = [
        f"## {ts[:10]} {ts[11:16]} UTC — Strata vs Apache Kafka {cfg['kafka_version']}, "
        f"side by side (`{run['command']}`)",
        "",
        f"Command: `{run['command']}` (mode {run['mode']}): {cfg['records']:,} records of "
        f"{cfg['record_size']} B per produce workload ({cfg['records'] * cfg['record_size'] / 1e9:.2f} GB) "
        f"into a fresh {cfg['partitions']}-partition topic; consume reads the acks=1/none topic "
        f"from the start; latency runs last {cfg['latency_seconds']} s (at most "
        f"{cfg.get('latency_max_bytes', 0) / 1e9:.0f} GB) at {cfg['latency_rate_rule']}, the same "
        f"rate in every round. The page cache is dropped before every produce workload. "
        f"Whole run: {run['elapsed_s'] / 60:.1f} min.",
        "",
        f"Machine: {m['cpu_model']}, {m['cores']} cores, {m['ram_gib']} GiB RAM, Linux {m['kernel']}, "
        f"log dirs on `{m['log_dir_fs']}`; load average at start {' '.join(m['loadavg_at_start'])}.",
        "",
        f"Machine limits (measured in this run): sequential write {lim['disk']['mb_per_s']:,.1f} MB/s "
        f"(`{lim['disk']['tool']}` on the log-dir filesystem); loopback TCP "
        f"{lim['loopback']['mb_per_s']:,.1f} MB/s ({lim['loopback']['tool']}).",
        "",
        f"Systems, one after the other, each round on a fresh data dir: Strata {cfg['strata_version']} "
        f"(`strata serve`, defaults + 1 GiB segments); Apache Kafka {cfg['kafka_version']} as one "
        f"KRaft broker+controller node, JVM -Xmx1g -Xms1g G1 (kafka-server-start's options). Both "
        f"PLAINTEXT on 127.0.0.1, 1 GiB segments, no per-message fsync. Load generators: "
        f"`strata bench` (librdkafka {cfg['librdkafka_version']}, 1 MiB batches, linger 5 ms) and "
        f"Kafka's ProducerPerformance / ConsumerPerformance (Java client defaults).",
        "",
        f"Each cell: **Strata / Kafka (Strata÷Kafka)**, each figure the median over "
        f"{reps} round{'s' if reps > 1 else ''} per system (rounds alternate which system runs "
        f"first). Higher is better for MB/s and records/s, lower for latency, CPU and RSS. The last "
        f"column lists Strata÷Kafka of each round (MB/s, or p99 on fixed-rate rows).",
        "",
        "| workload | load generator | " + " | ".join(t for _, t, _ in METRICS) +
        " | per-round ratios |",
        "|---|---|" + "---|" * (len(METRICS) + 1),
    ]
    for workload, gen, by_system in rows(run):
        cells = [_cell(by_system, key, d) for key, _, d in METRICS]
        key, name, _ = headline(workload)
        ratios = round_ratios(by_system, key)
        cells.append(f"{name}: " + ", ".join(f"{x:.2f}" for x in ratios) if ratios else "n/a")
        rates = sorted({r["workload"]["rate"] for rs in by_system.values() for r in rs
                        if r["workload"]["rate"]})
        if rates:
            workload += " at " + " / ".join(f"{x:,}" for x in rates) + " records/s"
        lines.append(f"| {workload} | {gen} | " + " | ".join(cells) + " |")
    failed = [r for r in run["results"] if not r.get("ok")]
    unsupported = [r for r in failed if r.get("unsupported")]
    lines += [
        "",
        "Notes: produce latency of an unthrottled run is mostly queueing in the client; compare "
        "latency on the fixed-rate rows. ProducerPerformance reports whole milliseconds. Consume "
        "rates exclude the consumer-group join (ConsumerPerformance's fetch rate). Broker CPU s/GB "
        "= broker user+system CPU seconds per GB of record values (uncompressed) moved; peak RSS = "
        "highest VmRSS sampled every 100 ms during the workload. n/a: system not run in this mode.",
    ]
    if unsupported:
        lines.append("")
        lines.append("Unsupported (the broker lacks an API the load generator needs): " + "; ".join(
            f"{r['system']} {r['workload']['label']} {r['generator']}: {r['unsupported']}"
            for r in unsupported))
    failed = [r for r in failed if not r.get("unsupported")]
    if failed:
        lines.append("")
        lines.append("Failed workloads: " + "; ".join(
            f"{r['system']} {r['workload']['label']} {r['generator']}: "
            f"{str(r.get('error', '?')).splitlines()[0][:160]}" for r in failed))
    lines += ["", f"Raw data: `{run['files']['json']}`, chart: `{run['files']['png']}`.", ""]
    return "\n".join(lines)


def write_json(run: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(run, indent=1, sort_keys=False) + "\n")


def _ok_value(by_system: dict, system: str, key: str) -> float:
    return median(by_system, system, key) or 0


def chart(run: dict, path: Path) -> None:
    """Two panels: throughput (MB/s) of every unthrottled workload, and p50/p99/p99.9 of the
    fixed-rate runs; Strata and Kafka side by side in each."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {"strata": "#1f77b4", "kafka": "#d62728"}
    shades = {"strata": ["#9ecae1", "#4292c6", "#08306b"], "kafka": ["#fcae91", "#ef3b2c", "#67000d"]}
    all_rows = rows(run)
    tp_rows = [r for r in all_rows if not r[0].startswith("latency")]
    lat_rows = [r for r in all_rows if r[0].startswith("latency")]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(13, 10), gridspec_kw={"height_ratios": [3, 2]})

    width = 0.4
    for i, system in enumerate(SYSTEMS):
        xs = [x + (i - 0.5) * width for x in range(len(tp_rows))]
        ax1.bar(xs, [_ok_value(b, system, "mb_per_s") for _, _, b in tp_rows], width,
                label=system, color=colors[system])
    ax1.set_xticks(range(len(tp_rows)), [f"{w}\n{g}" for w, g, _ in tp_rows], rotation=55,
                   ha="right", fontsize=7)
    ax1.set_ylabel("MB/s (record values)")
    ax1.set_title(f"Throughput, unthrottled ({run['mode']} run, {run['started_utc']} UTC)")
    ax1.legend()
    ax1.grid(axis="y", alpha=0.3)

    pcts = [("p50_ms", "p50"), ("p99_ms", "p99"), ("p999_ms", "p99.9")]
    width = 0.8 / (len(SYSTEMS) * len(pcts))
    for i, system in enumerate(SYSTEMS):
        for j, (key, name) in enumerate(pcts):
            k = i * len(pcts) + j
            xs = [x - 0.4 + (k + 0.5) * width for x in range(len(lat_rows))]
            ax2.bar(xs, [max(_ok_value(b, system, key), 0.01) if _ok_value(b, system, key) else 0
                         for _, _, b in lat_rows], width, label=f"{system} {name}",
                    color=shades[system][j])
    ax2.set_xticks(range(len(lat_rows)), [f"{w}\n{g}" for w, g, _ in lat_rows], fontsize=8)
    ax2.set_yscale("log")
    ax2.set_ylabel("produce latency, ms (log)")
    ax2.set_title("Produce latency at a fixed rate (half of Kafka's unthrottled rate)")
    ax2.legend(ncol=2, fontsize=7)
    ax2.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def command_and_machine(run: dict) -> list[str]:
    """The "Command:" and "Machine:" paragraphs of a section (bench/replication.py,
    bench/security.py): what ran, on what, and how busy the machine was meanwhile."""
    cfg, m, other = run["config"], run["machine"], run["other_load"]
    shared = other["mean_cores"] >= 0.2 or any(
        n in other["seen"] for n in ("cc1plus", "ninja", "ctest", "pytest"))
    return [
        f"Command: `{run['command']}` (mode {run['mode']}), Strata {cfg['strata_version']}, "
        f"`{cfg['strata_bin']}`. Whole run: {run['elapsed_s'] / 60:.1f} min.",
        "",
        f"Machine: {m['cpu_model']}, {m['cores']} cores, {m['ram_gib']} GiB RAM, Linux "
        f"{m['kernel']}, data dirs on `{m['log_dir_fs']}`; load average "
        f"{' '.join(run['loadavg_start'])} at the start, {' '.join(run['loadavg_end'])} at the "
        f"end. Processes outside this benchmark used {other['mean_cores']:.2f} cores on average "
        f"(peak {other['peak_cores']:.2f}; sampled every {other['interval_s']:.0f} s; seen: "
        f"{', '.join(f'{k} {v}x' for k, v in list(other['seen'].items())[:8]) or 'nothing'})"
        + (" — **the machine was shared with a concurrent build/test**, so absolute figures are "
           "lower and noisier than on an idle machine." if shared else "."),
    ]
