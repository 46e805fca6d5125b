#!/usr/bin/env bash
# Strata's balancer plan against kafka-reassign-partitions --generate, both scored on the same
# measured load of a skewed 4-broker Strata cluster. Installs what it needs (bench/setup.sh for
# Kafka's jars, etcd and confluent-kafka from scripts/install-test-deps.sh when missing), then
# runs bench/plan_vs_generate.py.
# Usage: bench/plan_vs_generate.sh [--topics 4] [--partitions 8] [--rates 400,200,100,50] [--no-record]
set -euo pipefail
BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$(dirname "$BENCH")"
PYTHON="${PYTHON:-python3}"
strata_bin="${STRATA_BIN:-$PWD/build/strata}"
[[ -x "$strata_bin" ]] && export STRATA_BIN="$strata_bin"
bench/setup.sh
if ! command -v etcd >/dev/null || ! "$PYTHON" -c 'import confluent_kafka' 2>/dev/null; then
  scripts/install-test-deps.sh
fi
exec "$PYTHON" bench/plan_vs_generate.py --strata-bin "$strata_bin" "$@"
