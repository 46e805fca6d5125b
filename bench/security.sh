#!/usr/bin/env bash
# Security benchmark: Strata and Apache Kafka (bench/kafka/pom.xml's version, one KRaft combined
# node) in the same run, one after the other: produce and consume MB/s over PLAINTEXT and over
# SASL_SSL (SCRAM-SHA-512, TLSv1.3), each system's TLS cost and Strata-over-TLS / Kafka-over-TLS,
# and a connection storm of 2,000 TLS clients authenticating with SCRAM at once (time until all
# are in, per-connection p50/p99, failures, broker RSS). Installs what it needs (bench/setup.sh;
# STRATA_BIN=/path/to/strata skips the build), then runs bench/security.py.
# Usage: bench/security.sh [--quick|--smoke] [security.py options, see --help]
set -euo pipefail
BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$(dirname "$BENCH")"
PYTHON="${PYTHON:-python3}"
for a in "$@"; do [[ "$a" == -h || "$a" == --help ]] && exec "$PYTHON" bench/security.py --help; done
bench/setup.sh
exec "$PYTHON" bench/security.py "$@"
