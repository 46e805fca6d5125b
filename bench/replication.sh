#!/usr/bin/env bash
# Replication benchmark: a 3-broker Strata cluster (etcd + 3 brokers) and a 3-node Apache Kafka
# KRaft cluster in the same run, RF=3, acks=all: leader failover after SIGKILL, throughput and
# fixed-rate latency, broker CPU per GB and RSS. Installs what it needs (bench/setup.sh, plus etcd
# and confluent-kafka from scripts/install-test-deps.sh when missing), then runs
# bench/replication.py. Usage: bench/replication.sh [--quick] [replication.py options, see --help]
set -euo pipefail
BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$(dirname "$BENCH")"
PYTHON="${PYTHON:-python3}"
for a in "$@"; do [[ "$a" == -h || "$a" == --help ]] && exec "$PYTHON" bench/replication.py --help; done
bench/setup.sh
if ! command -v etcd >/dev/null || ! "$PYTHON" -c 'import confluent_kafka' 2>/dev/null; then
  scripts/install-test-deps.sh
fi
exec "$PYTHON" bench/replication.py "$@"
