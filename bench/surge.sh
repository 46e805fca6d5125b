#!/usr/bin/env bash
# Scaling onto a standby broker under a load surge, and draining it back after (bench/surge.py).
# Installs etcd and confluent-kafka (scripts/install-test-deps.sh) when missing.
# Usage: bench/surge.sh [--capacity 1000000] [--rate 1500000] [--sustain-ms 30000] [--no-record]
set -euo pipefail
BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$(dirname "$BENCH")"
PYTHON="${PYTHON:-python3}"
strata_bin="${STRATA_BIN:-$PWD/build/strata}"
if ! command -v etcd >/dev/null || ! "$PYTHON" -c 'import confluent_kafka' 2>/dev/null; then
  scripts/install-test-deps.sh
fi
exec "$PYTHON" bench/surge.py --strata-bin "$strata_bin" "$@"
