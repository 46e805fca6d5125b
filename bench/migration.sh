#!/usr/bin/env bash
# Migration benchmark: how long, and how many bytes, moving one partition to another broker takes
# (kafka-reassign-partitions from broker 1 to broker 2), Apache Kafka (bench/kafka/pom.xml's
# version, 3-node KRaft; with tiered storage + KIP-1023, and without: a full copy) against Strata
# (full copy, and three tiered modes) in the same run on the same data. Installs
# what it needs (bench/setup.sh, plus etcd and confluent-kafka from scripts/install-test-deps.sh
# when missing), then runs bench/migration.py.
# Usage: bench/migration.sh [--sizes 200,1024] [--modes ...] [--no-record] [migration.py options, see --help]
# An existing Strata binary is used as is (--strata-bin, $STRATA_BIN, or build/strata); only
# when there is none does bench/setup.sh build one. --kafka-lib / $KAFKA_LIB: Kafka's jars.
set -euo pipefail
BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$(dirname "$BENCH")"
PYTHON="${PYTHON:-python3}"
strata_bin="${STRATA_BIN:-$PWD/build/strata}"
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    -h|--help) exec "$PYTHON" bench/migration.py --help ;;
    --strata-bin) strata_bin="${args[i + 1]:-}" ;;
    --strata-bin=*) strata_bin="${args[i]#*=}" ;;
    --kafka-lib) export KAFKA_LIB="${args[i + 1]:-}" ;;
    --kafka-lib=*) export KAFKA_LIB="${args[i]#*=}" ;;
  esac
done
# setup.sh builds Strata unless STRATA_BIN names a binary: do not rebuild one that is there.
[[ -x "$strata_bin" ]] && export STRATA_BIN="$strata_bin"
bench/setup.sh
if ! command -v etcd >/dev/null || ! "$PYTHON" -c 'import confluent_kafka' 2>/dev/null; then
  scripts/install-test-deps.sh
fi
exec "$PYTHON" bench/migration.py "$@"
