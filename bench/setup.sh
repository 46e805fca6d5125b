#!/usr/bin/env bash
# Installs what bench/run.py needs, idempotently (each step is skipped when its result is
# already there): Debian packages (JDK, Maven, build deps), matplotlib from
# bench/requirements.txt, Apache Kafka's jars (reusing tests/integration/kafka-tools/target/lib
# when present, else Maven into bench/.deps/kafka-lib), Kafka 4.2's ProducerPerformance into
# bench/.deps/perf-lib, and a release build of Strata.
#
# Environment:
#   PYTHON       interpreter run.py runs with (default python3)
#   STRATA_BIN   use this Strata binary and skip the build
#   SKIP_APT=1   do not touch apt
set -euo pipefail
BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$BENCH")"
PYTHON="${PYTHON:-python3}"
log() { echo "[bench/setup] $*" >&2; }

# ---- apt ---------------------------------------------------------------------------
if [[ "${SKIP_APT:-0}" != "1" ]] && command -v apt-get >/dev/null; then
  missing=()
  command -v java >/dev/null || missing+=(openjdk-17-jre-headless)
  command -v mvn >/dev/null || missing+=(maven)
  "$PYTHON" -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
  command -v lscpu >/dev/null || missing+=(util-linux)
  if ((${#missing[@]})); then
    log "apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

# ---- Python ------------------------------------------------------------------------
if "$PYTHON" - "$BENCH/requirements.txt" <<'PY'
import sys
from importlib import metadata
ok = True
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if line:
        name, _, want = line.partition("==")
        try:
            ok &= metadata.version(name) == want
        except metadata.PackageNotFoundError:
            ok = False
sys.exit(0 if ok else 1)
PY
then
  log "python packages already at pinned versions"
else
  flags=(-q --disable-pip-version-check --root-user-action=ignore)
  # Debian's own python refuses global installs (PEP 668) unless told otherwise.
  if [[ -n "$("$PYTHON" -c 'import sysconfig,os;p=os.path.join(sysconfig.get_paths()["stdlib"],"EXTERNALLY-MANAGED");print(p if os.path.exists(p) else "")')" ]]; then
    flags+=(--break-system-packages)
  fi
  log "pip install -r bench/requirements.txt"
  "$PYTHON" -m pip install "${flags[@]}" -r "$BENCH/requirements.txt"
fi

# ---- Apache Kafka jars -------------------------------------------------------------
has_kafka() { compgen -G "$1/kafka_2.13-*.jar" >/dev/null && compgen -G "$1/kafka-tools-*.jar" >/dev/null; }
if [[ -n "${KAFKA_LIB:-}" ]] && has_kafka "$KAFKA_LIB"; then
  log "Kafka jars: $KAFKA_LIB"
elif has_kafka "$ROOT/tests/integration/kafka-tools/target/lib"; then
  log "Kafka jars: reusing tests/integration/kafka-tools/target/lib"
elif has_kafka "$BENCH/.deps/kafka-lib" && [[ "$BENCH/.deps/kafka-lib" -nt "$BENCH/kafka/pom.xml" ]]; then
  log "Kafka jars: bench/.deps/kafka-lib"
else
  log "mvn package bench/kafka/pom.xml -> bench/.deps/kafka-lib"
  rm -rf "$BENCH/.deps/kafka-lib"
  mvn -q -B -f "$BENCH/kafka/pom.xml" package
  touch "$BENCH/.deps/kafka-lib"
fi

# Kafka 4.2's ProducerPerformance (its --warmup-records), the producing side of bench/replication.sh.
if compgen -G "$BENCH/.deps/perf-lib/kafka-tools-*.jar" >/dev/null \
    && [[ "$BENCH/.deps/perf-lib" -nt "$BENCH/perf-tools/pom.xml" ]]; then
  log "ProducerPerformance: bench/.deps/perf-lib"
else
  log "mvn package bench/perf-tools/pom.xml -> bench/.deps/perf-lib"
  rm -rf "$BENCH/.deps/perf-lib"
  mvn -q -B -f "$BENCH/perf-tools/pom.xml" package
  touch "$BENCH/.deps/perf-lib"
fi

# ---- Strata ------------------------------------------------------------------------
if [[ -n "${STRATA_BIN:-}" ]]; then
  [[ -x "$STRATA_BIN" ]] || { log "STRATA_BIN=$STRATA_BIN is not executable"; exit 1; }
  log "using STRATA_BIN=$STRATA_BIN (no build)"
else
  "$ROOT/scripts/install-build-deps.sh"
  "$ROOT/scripts/build.sh" release
fi
log "ready"
