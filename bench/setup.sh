#!/usr/bin/env bash
# Installs what bench/run.py needs, idempotently (each step is skipped when its result is
# already there): Debian packages (JDK, Maven, build deps), matplotlib from
# bench/requirements.txt, Apache Kafka's jars at bench/kafka/pom.xml's version (Maven into
# bench/.deps/kafka-lib, with Kafka's LocalTieredStorage into bench/.deps/kafka-rsm for the
# tiered Kafka rows), and a release build of Strata.
#
# Environment:
#   PYTHON       interpreter run.py runs with (default python3)
#   STRATA_BIN   use this Strata binary and skip the build
#   KAFKA_LIB    use these Kafka jars (any version; the benchmarks name it) and fetch none
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
# One version for every benchmark's Kafka peer, brokers and tools alike: bench/kafka/pom.xml's
# kafka.version (the integration tests pin their own, so their jars are not reused).
KAFKA_VERSION="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$BENCH/kafka/pom.xml" | head -1)"
has_kafka() {
  [[ -f "$1/kafka_2.13-$KAFKA_VERSION.jar" && -f "$1/kafka-tools-$KAFKA_VERSION.jar" ]]
}
if [[ -n "${KAFKA_LIB:-}" ]]; then
  log "Kafka jars: $KAFKA_LIB (as given)"
elif has_kafka "$BENCH/.deps/kafka-lib" && [[ "$BENCH/.deps/kafka-lib" -nt "$BENCH/kafka/pom.xml" ]] \
    && compgen -G "$BENCH/.deps/kafka-rsm/kafka-storage-*-test.jar" >/dev/null \
    && [[ -d "$BENCH/.deps/kafka-rsm/classes" ]]; then
  log "Kafka $KAFKA_VERSION jars: bench/.deps/kafka-lib (RemoteStorageManager: bench/.deps/kafka-rsm)"
else
  log "mvn package bench/kafka/pom.xml -> bench/.deps/kafka-lib, bench/.deps/kafka-rsm (Kafka $KAFKA_VERSION)"
  rm -rf "$BENCH/.deps/kafka-lib" "$BENCH/.deps/kafka-rsm" "$BENCH/.deps/perf-lib"
  mvn -q -B -f "$BENCH/kafka/pom.xml" package
  touch "$BENCH/.deps/kafka-lib"
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
