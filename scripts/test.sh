#!/usr/bin/env bash
# The "test" command: installs every dependency (apt, pip, Maven), builds the
# ASan/UBSan and release configurations (and checks the other build types
# compile), and runs every test: unit tests under ASan/UBSan (the cluster ones
# against real etcd processes), bounded fuzzing of the decoders, and the integration
# suite with real Kafka clients, Kafka's own tools and a real etcd against real
# broker processes.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
step() { echo; echo "=== $* ($(( $(date +%s) - start ))s)"; }

step "dependencies"
scripts/install-build-deps.sh
scripts/install-test-deps.sh

# The unit tests run once, under ASan/UBSan (the release build makes only the
# broker binary that the integration suite and the benchmark smoke run).
step "build: asan+ubsan"
scripts/build.sh asan

# MinSizeRel compiles, one file per compiler run (no unity batches), in the
# background at the lowest priority: it takes only the CPU that the test steps
# below leave idle, and is waited for at the end.
step "build: MinSizeRel (background, nice 19)"
mkdir -p build-types
# (Same session as the steps: with the kernel's autogroup scheduling, nice
# only ranks processes within one session.)
nice -n 19 scripts/build-types.sh > build-types/run.log 2>&1 &
types_pid=$!
# A failed step stops it too (ninja stops its compilers on SIGTERM). Every
# command in the trap is guarded: set -e applies inside traps, so an unguarded
# pkill that finds nothing would turn a passing run into exit status 1.
stop_types_build() {
  pkill -TERM -P "$types_pid" 2>/dev/null || true
  kill "$types_pid" 2>/dev/null || true
}
trap stop_types_build EXIT
step "unit tests (asan+ubsan)"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build-asan --output-on-failure

step "HDFS tests (WebHDFS against MiniDFSCluster, asan+ubsan)"
STRATA_TIERED_TESTS_BIN="$(pwd)/build-asan/strata_tiered_tests" ASAN_OPTIONS=detect_leaks=1 \
  python3 -m pytest -q tests/hdfs

step "build: release"
scripts/build.sh release strata

step "integration tests against the asan+ubsan broker (a sanitizer report fails the test)"
STRATA_BIN="$(pwd)/build-asan/strata" ASAN_OPTIONS=detect_leaks=1 python3 -m pytest -q \
  tests/integration/test_confluent_kafka.py tests/integration/test_kcat.py \
  tests/integration/test_bad_input.py tests/integration/test_consumer_groups.py \
  tests/integration/test_crash.py tests/integration/test_tiered_localfs.py

step "fuzzing (bounded)"
scripts/build.sh fuzz
scripts/fuzz.sh 30

step "benchmark harness smoke (Strata only)"
STRATA_BIN="$(pwd)/build/strata" bench/run.sh --smoke
step "integration tests (real clients against build/strata)"
STRATA_BIN="$(pwd)/build/strata" python3 -m pytest -q --durations=15 tests/integration

step "build: MinSizeRel (waiting for the background build)"
if ! wait "$types_pid"; then
  tail -50 build-types/run.log
  exit 1
fi
trap - EXIT
cat build-types/run.log

step "done in $(( $(date +%s) - start ))s"
