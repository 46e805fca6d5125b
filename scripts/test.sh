#!/usr/bin/env bash
# The "test" command: installs every dependency (apt, pip, Maven), builds the
# ASan/UBSan, ThreadSanitizer and release configurations (and checks the
# other build types compile), and runs every test: unit tests under ASan/UBSan
# (the cluster ones against real etcd processes) and those of the concurrent
# subsystems under TSan, bounded fuzzing of the decoders, and the integration
# suite with real Kafka clients, Kafka's own tools and a real etcd against real
# broker processes: the single-broker crash and client files and the cluster
# fault tests (nemesis, network partitions, fast migration, a balancer heal)
# against the ASan/UBSan broker, the rest against the release broker.
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

step "build: tsan (clang; unit tests of cluster, replication, net, coordinator, tiered)"
scripts/build.sh tsan

step "unit tests (tsan)"
# halt_on_error: the first report fails the test binary, with both stacks.
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(pwd)/scripts/tsan.supp" ctest --test-dir build-tsan \
  --output-on-failure -R '^(cluster|replication|net|coordinator|tiered)_unit$'

step "HDFS and S3 tests (WebHDFS against MiniDFSCluster, S3 against S3Proxy; asan+ubsan)"
STRATA_TIERED_TESTS_BIN="$(pwd)/build-asan/strata_tiered_tests" ASAN_OPTIONS=detect_leaks=1 \
  python3 -m pytest -q tests/hdfs tests/s3

step "build: release"
scripts/build.sh release strata

# These run once, here: the release run below leaves them out.
asan_tests=(test_confluent_kafka.py test_kcat.py test_bad_input.py test_consumer_groups.py
            test_crash.py test_tiered_localfs.py test_transactions_restart.py
            test_nemesis.py test_network_partition.py test_fast_migration.py
            test_tls.py test_sasl.py
            "test_balancer.py::test_a_dead_brokers_replicas_are_re_placed_after_the_timeout")
# Two test files at a time (pytest-xdist; each file on one worker, so its module fixtures are
# its own; tests/integration/ports.py gives each worker its own port range): most of a test's
# time is spent waiting on brokers, so two share 2 cores well.
parallel=(-n 2 --dist loadfile)
step "integration tests against the asan+ubsan broker (a sanitizer report fails the test)"
STRATA_BIN="$(pwd)/build-asan/strata" ASAN_OPTIONS=detect_leaks=1 python3 -m pytest -q \
  "${parallel[@]}" --durations=10 "${asan_tests[@]/#/tests/integration/}"
release_skip=()
for t in "${asan_tests[@]}"; do
  if [[ $t == *::* ]]; then release_skip+=(--deselect "tests/integration/$t")
  else release_skip+=(--ignore "tests/integration/$t"); fi
done

step "fuzzing (bounded)"
scripts/build.sh fuzz
scripts/fuzz.sh 30

step "benchmark harness smoke (Strata only)"
STRATA_BIN="$(pwd)/build/strata" bench/run.sh --smoke
step "integration tests (real clients against build/strata)"
STRATA_BIN="$(pwd)/build/strata" python3 -m pytest -q "${parallel[@]}" --durations=15 \
  "${release_skip[@]}" tests/integration

step "build: MinSizeRel (waiting for the background build)"
if ! wait "$types_pid"; then
  tail -50 build-types/run.log
  exit 1
fi
trap - EXIT
cat build-types/run.log

step "done in $(( $(date +%s) - start ))s"
