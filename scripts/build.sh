#!/usr/bin/env bash
# Builds Strata. Usage: scripts/build.sh [release|asan|tsan|fuzz] [ninja targets...]
# (default: release, all targets; the fuzz build makes only the fuzz targets,
# the tsan build the unit tests of the most concurrent subsystems)
# Output: build/ (release), build-asan/, build-tsan/, build-fuzz/.
# The release and ASan builds are unity builds (STRATA_UNITY in CMakeLists.txt:
# a quarter less compile time); STRATA_UNITY=OFF in the environment turns that
# off, for quick incremental rebuilds while editing one file.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-release}
shift || true
targets=("$@")
jobs=$(nproc)
# The unit tests run under ThreadSanitizer: the subsystems with threads of
# their own (leases, watches, elections, fetchers, uploads, the group
# coordinator's timers, the network loops).
TSAN_TARGETS=(strata_cluster_tests strata_replication_tests strata_net_tests
              strata_coordinator_tests strata_tiered_tests)
case "$kind" in
  release) dir=build; args=(-DCMAKE_BUILD_TYPE=Release -DSTRATA_UNITY="${STRATA_UNITY:-ON}") ;;
  # Debug information is line tables only (-g1): enough for the sanitizers'
  # stack traces with file and line, and a fifth less compile time than -g.
  asan) dir=build-asan; args=(-DCMAKE_BUILD_TYPE=Debug -DSTRATA_SANITIZE=ON -DCMAKE_CXX_FLAGS_DEBUG="-g1"
                              -DSTRATA_UNITY="${STRATA_UNITY:-ON}") ;;
  # ThreadSanitizer with clang, one file per compiler run: besides the
  # races, it is the test command's check that each file of these
  # subsystems compiles on its own (scripts/build-types.sh does the rest).
  # Line tables only, as for ASan.
  tsan) dir=build-tsan; args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTRATA_TSAN=ON -DSTRATA_UNITY=OFF
                              -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only"
                              -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
        ((${#targets[@]})) || targets=("${TSAN_TARGETS[@]}") ;;
  fuzz) dir=build-fuzz; args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTRATA_FUZZ=ON
                              -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
        ((${#targets[@]})) || targets=(record_batch_fuzz request_fuzz sasl_fuzz) ;;
  *) echo "unknown build kind $kind" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" -G Ninja "${args[@]}" >/dev/null
ninja -C "$dir" -j "$jobs" "${targets[@]}"
