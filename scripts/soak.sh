#!/usr/bin/env bash
# The long versions of tests whose short versions run in scripts/test.sh, by
# hand (not in CI): the tiered-storage test with 1 GiB of log instead of 64 MiB,
# compared byte for byte on HDFS and on S3 (STRATA_TIERED_BIG_MIB), the nemesis tests (idempotent producers,
# and transactions with an exactly-once copier) with 100 rounds of broker kills
# and restarts instead of 10 (STRATA_NEMESIS_ROUNDS), and the mixed
# nemesis (SIGKILL, SIGSTOP past the lease, network partitions, etcd member
# loss, full disks; needs root) with 100 rounds instead of 10
# (STRATA_MIXED_NEMESIS_ROUNDS; STRATA_NEMESIS_SEED replays a schedule). Builds
# the release broker if needed.
# Usage: scripts/soak.sh
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -x build/strata ]] || scripts/build.sh release strata
STRATA_BIN="$(pwd)/build/strata" STRATA_TIERED_BIG_MIB=1024 python3 -m pytest -q -s \
  tests/integration/test_tiered_remote.py -k big_log
STRATA_BIN="$(pwd)/build/strata" STRATA_NEMESIS_ROUNDS=100 python3 -m pytest -q -s \
  tests/integration/test_nemesis.py tests/integration/test_nemesis_txn.py
STRATA_BIN="$(pwd)/build/strata" STRATA_MIXED_NEMESIS_ROUNDS=100 python3 -m pytest -q -s \
  tests/integration/test_nemesis_mixed.py
