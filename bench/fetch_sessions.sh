#!/usr/bin/env bash
# Fetch sessions (KIP-227): Strata and Apache Kafka (bench/kafka/pom.xml's version, one KRaft
# node) in the same run, sessions on and off: one Java consumer of 2,000 partitions, its
# request bytes/s and the broker's CPU. Installs what it needs (bench/setup.sh; STRATA_BIN=
# /path/to/strata skips the build), then runs bench/fetch_sessions.py.
# Usage: bench/fetch_sessions.sh [fetch_sessions.py options, see --help]
set -euo pipefail
BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$(dirname "$BENCH")"
PYTHON="${PYTHON:-python3}"
for a in "$@"; do [[ "$a" == -h || "$a" == --help ]] && exec "$PYTHON" bench/fetch_sessions.py --help; done
bench/setup.sh
exec "$PYTHON" bench/fetch_sessions.py "$@"
