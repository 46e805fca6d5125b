#!/usr/bin/env bash
# Self-healing time of the balancer: a broker holding half of 1,000 RF 2 partitions is
# SIGKILLed; how long until every partition has 2 live replicas in its ISR (goal: the failure
# timeout + 30 s). Installs etcd and confluent-kafka (scripts/install-test-deps.sh) when
# missing, then runs bench/heal.py.
# Usage: bench/heal.sh [--partitions 1000] [--failure-timeout-ms 60000]
#                      [--execution-concurrency N] [--no-record]
set -euo pipefail
BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$(dirname "$BENCH")"
PYTHON="${PYTHON:-python3}"
strata_bin="${STRATA_BIN:-$PWD/build/strata}"
if ! command -v etcd >/dev/null || ! "$PYTHON" -c 'import confluent_kafka' 2>/dev/null; then
  scripts/install-test-deps.sh
fi
exec "$PYTHON" bench/heal.py --strata-bin "$strata_bin" "$@"
