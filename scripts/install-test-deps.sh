#!/usr/bin/env bash
# Installs everything Strata's black-box integration tests (tests/integration) need on a
# fresh Debian 12 machine (run as root): kcat + librdkafka, etcd, promtool, chromium, a JDK and Maven, the pinned
# Python packages, the Java client program, Apache Kafka's CLI/server jars and the franz-go program
# (tests/integration/go, built with the machine's Go: not installed here, see below).
# Idempotent: every step is skipped when its result is already there, so re-runs are fast.
#
# Environment:
#   PYTHON          python interpreter the tests run with (default: python3)
#   SKIP_APT=1      do not touch apt (e.g. on a non-Debian dev box)
#   FORCE_MAVEN=1   rebuild the Maven projects even if their target dirs exist
#   FORCE_GO=1      rebuild tests/integration/go/bin/franzgo even if it is newer than its sources
#   GOTOOLCHAIN     left as set; default "local" (use the installed go, never download one)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
IT="$ROOT/tests/integration"
PYTHON="${PYTHON:-python3}"

log() { echo "[install-test-deps] $*" >&2; }

# ---- apt ---------------------------------------------------------------------------
apt_missing=()
need_pkg() {  # need_pkg <dpkg-name>: queue it for install unless already installed
  if ! dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; then
    apt_missing+=("$1")
  fi
}
if [[ "${SKIP_APT:-0}" != "1" ]] && command -v apt-get >/dev/null; then
  need_pkg kcat
  need_pkg librdkafka-dev
  need_pkg etcd-server
  need_pkg etcd-client
  command -v promtool >/dev/null || need_pkg prometheus  # test_metrics.py: promtool check metrics
  command -v chromium >/dev/null || need_pkg chromium    # test_console.py: the console, headless
  command -v ip >/dev/null || need_pkg iproute2  # test_network_partition.py: netns, veth, bridge
  command -v java >/dev/null || need_pkg openjdk-17-jdk-headless
  command -v javac >/dev/null || need_pkg openjdk-17-jdk-headless
  command -v mvn >/dev/null || need_pkg maven
  command -v "$PYTHON" >/dev/null || need_pkg python3
  "$PYTHON" -m pip --version >/dev/null 2>&1 || need_pkg python3-pip
  if ((${#apt_missing[@]})); then
    log "apt-get install ${apt_missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${apt_missing[@]}" >/dev/null
  else
    log "apt packages already present"
  fi
fi

# ---- Python ------------------------------------------------------------------------
if "$PYTHON" - "$IT/requirements.txt" <<'EOF'
import sys
from importlib import metadata
ok = True
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, _, want = line.partition("==")
    try:
        ok &= metadata.version(name) == want
    except metadata.PackageNotFoundError:
        ok = False
sys.exit(0 if ok else 1)
EOF
then
  log "python packages already at pinned versions"
else
  pip_flags=(-q --disable-pip-version-check --root-user-action=ignore)
  # Debian's own python refuses global installs (PEP 668) unless told otherwise.
  if [[ -n "$("$PYTHON" -c 'import sysconfig,os;p=os.path.join(sysconfig.get_paths()["stdlib"],"EXTERNALLY-MANAGED");print(p if os.path.exists(p) else "")')" ]]; then
    pip_flags+=(--break-system-packages)
  fi
  log "pip install -r tests/integration/requirements.txt"
  "$PYTHON" -m pip install "${pip_flags[@]}" -r "$IT/requirements.txt"
fi

# ---- Java / Maven ------------------------------------------------------------------
maven_build() {  # maven_build <dir> <marker-file>: `mvn package` unless marker exists
  local dir="$1" marker="$2"
  if [[ "${FORCE_MAVEN:-0}" != "1" && -e "$dir/$marker" && -z "$(find "$dir" -newer "$dir/$marker" \
        \( -name pom.xml -o -name '*.java' \) -not -path '*/target/*' 2>/dev/null)" ]]; then
    log "$dir up to date"
    return
  fi
  log "mvn package in $dir"
  rm -rf "$dir/target/lib"  # no stale jars from an older pom on the classpath
  (cd "$dir" && mvn -q -B package)
  touch "$dir/$marker"
}
maven_build "$IT/java" target/.built
maven_build "$IT/kafka-tools" target/.built
maven_build "$ROOT/tests/hdfs" target/.built
"$ROOT/tests/s3/install.sh"  # S3Proxy, the S3-compatible server of tests/s3 and test_tiered_s3.py

# ---- Go (franz-go) -----------------------------------------------------------------
# test_franz_go.py runs tests/integration/go/bin/franzgo (franz-go and kadm, pinned in
# go.mod/go.sum). Debian 12's golang (1.19) is older than go.mod's `go` line, so Go is not
# installed here: it must already be on the machine (the polyglot image has Go 1.26 at
# /usr/local/go/bin/go).
GO_DIR="$IT/go"
GO_BIN="$GO_DIR/bin/franzgo"
if [[ "${FORCE_GO:-0}" != "1" && -x "$GO_BIN" && -z "$(find "$GO_DIR" -newer "$GO_BIN" \
      \( -name '*.go' -o -name go.mod -o -name go.sum \) -not -path "$GO_DIR/bin/*" 2>/dev/null)" ]]; then
  log "$GO_BIN up to date"
else
  GO="$(command -v go || true)"
  if [[ -z "$GO" && -x /usr/local/go/bin/go ]]; then GO=/usr/local/go/bin/go; fi
  if [[ -z "$GO" ]]; then
    log "ERROR: no 'go' command (not on PATH, not /usr/local/go/bin/go): test_franz_go.py needs"
    log "       Go >= $(awk '$1 == "go" {print $2}' "$GO_DIR/go.mod") to build $GO_BIN; install it"
    log "       from https://go.dev/dl/ (Debian 12's golang package is too old) and re-run"
    exit 1
  fi
  export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
  log "go mod download + go build in $GO_DIR ($("$GO" version), GOTOOLCHAIN=$GOTOOLCHAIN)"
  (cd "$GO_DIR" && "$GO" mod download && "$GO" build -buildvcs=false -o bin/franzgo .)
fi

log "done"
