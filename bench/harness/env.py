"""What the benchmark scripts (run.py, replication.py, migration.py, replace.py, ...) need from
their surroundings: Kafka's jars (one version for every benchmark, bench/kafka/pom.xml's), the
RemoteStorageManager of the tiered Kafka rows, the versions under test, the checked-out commit
(read from .git, no git commands), and page-cache control between workloads.
"""
from __future__ import annotations

import datetime
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Callable

BENCH = Path(__file__).resolve().parent.parent
REPO = BENCH.parent
KAFKA_POM = BENCH / "kafka" / "pom.xml"


def _pom_property(name: str) -> str:
    m = re.search(rf"<{re.escape(name)}>([^<]+)</{re.escape(name)}>", KAFKA_POM.read_text())
    if not m:
        raise RuntimeError(f"{KAFKA_POM}: no <{name}>")
    return m.group(1).strip()


def kafka_version() -> str:
    """The Apache Kafka version every benchmark runs as its peer (brokers and tools): the one
    place it is named is bench/kafka/pom.xml's kafka.version."""
    return _pom_property("kafka.version")


def _lib_version(lib: Path) -> str | None:
    jars = list(lib.glob("kafka_2.13-*.jar"))
    if not jars or not list(lib.glob("kafka-tools-*.jar")):
        return None
    m = re.match(r"kafka_2\.13-(.+)\.jar", jars[0].name)
    return m.group(1) if m else "?"


def find_kafka_lib(explicit: str | None, log: Callable[[str], None] = print) -> Path | None:
    """Kafka's jars: --kafka-lib or $KAFKA_LIB as given (any version, said in the log when it
    is not kafka_version()), else bench/.deps/kafka-lib if it holds kafka_version() (bench/setup.sh
    puts it there; the integration tests' copy pins its own version and is not used)."""
    want = kafka_version()
    for c in (explicit, os.environ.get("KAFKA_LIB")):
        if c:
            v = _lib_version(Path(c))
            if v is None:
                log(f"no Kafka jars in {c}")
                return None
            if v != want:
                log(f"note: {c} holds Kafka {v}, not {want} (bench/kafka/pom.xml): the "
                    f"figures compare against Kafka {v}")
            return Path(c)
    lib = BENCH / ".deps/kafka-lib"
    return lib if _lib_version(lib) == want else None


def find_rsm_lib() -> Path | None:
    """The RemoteStorageManager the tiered Kafka rows load through
    remote.log.storage.manager.class.path (bench/kafka/pom.xml -> bench/.deps/kafka-rsm):
    Kafka's LocalTieredStorage from its kafka-storage test artifact."""
    lib = BENCH / ".deps/kafka-rsm"
    return lib if (list(lib.glob("kafka-storage-*-test.jar"))
                   and list(lib.glob("classes/org/apache/kafka/common/utils/LogContext*.class"))) else None


def versions(kafka_lib: Path | None, strata_bin: Path) -> dict:
    kv = "?"
    if kafka_lib:
        m = re.match(r"kafka_2\.13-(.+)\.jar", next(kafka_lib.glob("kafka_2.13-*.jar")).name)
        kv = m.group(1) if m else "?"
    rd = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "librdkafka1"],
                        capture_output=True, text=True).stdout.strip() or "?"
    rev = git_head()
    built = datetime.datetime.fromtimestamp(strata_bin.stat().st_mtime).strftime("%Y-%m-%d %H:%M")
    return {"kafka_version": kv, "librdkafka_version": rd,
            "strata_version": f"{rev or '?'} (binary built {built})"}


def repo_relative(p: Path) -> Path:
    """`p` relative to the repository when it is inside it (as reports name files)."""
    try:
        return p.resolve().relative_to(REPO)
    except ValueError:
        return p


def git_head() -> str:
    """The checked-out commit, read from .git directly (the harness runs no git commands)."""
    try:
        gitdir = common = REPO / ".git"
        if gitdir.is_file():  # a worktree: "gitdir: <main>/.git/worktrees/<name>"
            gitdir = Path(gitdir.read_text().split(":", 1)[1].strip())
            common = (gitdir / (gitdir / "commondir").read_text().strip()).resolve()
        head = (gitdir / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head[:7]
        ref = head[5:]
        ref_file = common / ref
        if ref_file.exists():
            return ref_file.read_text().strip()[:7]
        for line in (common / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return line.split()[0][:7]
    except OSError:
        pass
    return ""


def settle_page_cache(log: Callable[[str], None] = print) -> None:
    """Writes back dirty pages before a workload, so none starts while the previous one's
    data is still being flushed (the system whose produce was faster would otherwise start the
    next workload with more dirty data and get throttled by the kernel). Same for both."""
    t0 = time.monotonic()
    os.sync()
    took = time.monotonic() - t0
    if took > 0.5:
        log(f"  (page cache settled: sync took {took:.1f} s)")


def drop_page_cache(log: Callable[[str], None] = print) -> None:
    """Called before each system starts and before every produce workload, so each starts from
    the same page-cache state with nothing to write back or reclaim. On this VM it matters far
    beyond noise: once the page cache grows past ~4 GB, both brokers' produce costs ~6x the CPU
    per GB at ~1/3 of the throughput (Strata alone, acks=all none, 2 GB runs back to back: 0.34-0.41
    CPU s/GB at 1.3-1.4 GB/s while the cache held < 4 GB, then 2.1-2.5 CPU s/GB at 0.38-0.42
    GB/s; 0.39 again after a drop). Needs root; skipped (logged) otherwise."""
    os.sync()
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError as e:
        log(f"  (page cache not dropped: {e})")
