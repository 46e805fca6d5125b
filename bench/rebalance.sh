#!/usr/bin/env bash
# Consumer group rebalances: Strata and Apache Kafka (bench/kafka/pom.xml's version, one KRaft
# node) in the same run, the classic protocol (eager range) and KIP-848's consumer protocol: a
# 7th member joins a group of 6 consuming 60 partitions; the time until the group is balanced
# again and the longest stall of the 6. Installs what it needs (bench/setup.sh; STRATA_BIN=
# /path/to/strata skips the build), then runs bench/rebalance.py.
# Usage: bench/rebalance.sh [rebalance.py options, see --help]
set -euo pipefail
BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$(dirname "$BENCH")"
PYTHON="${PYTHON:-python3}"
for a in "$@"; do [[ "$a" == -h || "$a" == --help ]] && exec "$PYTHON" bench/rebalance.py --help; done
bench/setup.sh
exec "$PYTHON" bench/rebalance.py "$@"
