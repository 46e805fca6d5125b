#!/usr/bin/env bash
# Builds Strata. Usage: scripts/build.sh [release|asan|fuzz] [ninja targets...]
# (default: release, all targets; the fuzz build makes only the fuzz targets)
# Output: build/ (release), build-asan/, build-fuzz/.
# The release and ASan builds are unity builds (STRATA_UNITY in CMakeLists.txt:
# a quarter less compile time); STRATA_UNITY=OFF in the environment turns that
# off, for quick incremental rebuilds while editing one file.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-release}
shift || true
targets=("$@")
jobs=$(nproc)
case "$kind" in
  release) dir=build; args=(-DCMAKE_BUILD_TYPE=Release -DSTRATA_UNITY="${STRATA_UNITY:-ON}") ;;
  asan) dir=build-asan; args=(-DCMAKE_BUILD_TYPE=Debug -DSTRATA_SANITIZE=ON
                              -DSTRATA_UNITY="${STRATA_UNITY:-ON}") ;;
  fuzz) dir=build-fuzz; args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTRATA_FUZZ=ON
                              -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
        ((${#targets[@]})) || targets=(record_batch_fuzz request_fuzz) ;;
  *) echo "unknown build kind $kind" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" -G Ninja "${args[@]}" >/dev/null
ninja -C "$dir" -j "$jobs" "${targets[@]}"
