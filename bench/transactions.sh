#!/usr/bin/env bash
# Transactions benchmark: a 3-broker Strata cluster (etcd + 3 brokers) and a 3-node Apache Kafka
# KRaft cluster in the same run: transactional produce throughput and commit latency at 1, 10
# and 100 records per transaction and with eight producers at once, and read_committed vs read_uncommitted reads. Installs what
# it needs (bench/setup.sh, plus etcd and confluent-kafka from scripts/install-test-deps.sh when
# missing), then runs bench/transactions.py. Usage: bench/transactions.sh [--seconds S]
set -euo pipefail
BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$(dirname "$BENCH")"
PYTHON="${PYTHON:-python3}"
for a in "$@"; do [[ "$a" == -h || "$a" == --help ]] && exec "$PYTHON" bench/transactions.py --help; done
bench/setup.sh
if ! command -v etcd >/dev/null || ! "$PYTHON" -c 'import confluent_kafka' 2>/dev/null; then
  scripts/install-test-deps.sh
fi
exec "$PYTHON" bench/transactions.py "$@"
