#!/usr/bin/env bash
# Machine replacement benchmark: a broker holding every replica of a 100-partition topic is
# replaced by an empty one with the same node id; seconds until it is back in every ISR and bytes
# copied, Apache Kafka (bench/kafka/pom.xml's version, 3-node KRaft; with tiered storage +
# KIP-1023, and without: a full copy) against Strata in the same run. Installs
# what it needs (bench/setup.sh, plus etcd and confluent-kafka from scripts/install-test-deps.sh
# when missing), then runs bench/replace.py.
# Usage: bench/replace.sh [--partitions 100] [--total-mib 10240] [--modes ...] [replace.py options, see --help]
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
    -h|--help) exec "$PYTHON" bench/replace.py --help ;;
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
exec "$PYTHON" bench/replace.py "$@"
