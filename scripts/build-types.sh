#!/usr/bin/env bash
# Builds the broker's libraries (every product source file; not the tests or
# tools, to keep the test command's time) in the standard CMake build types
# that scripts/test.sh does not otherwise build: RelWithDebInfo and MinSizeRel.
# (Release is build/, Debug is build-asan/.)
# Optimisation levels differ between them, and so do GCC's warnings, which
# -Werror turns into errors: this is how the test command catches a type that
# does not build. Output: build-types/<type>/.
set -euo pipefail
cd "$(dirname "$0")/.."
for type in RelWithDebInfo MinSizeRel; do
  dir="build-types/$type"
  # RelWithDebInfo without its -g: debug info changes no warning and costs a
  # third of the compile time.
  flags=()
  [[ $type == RelWithDebInfo ]] && flags=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG")
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$type" "${flags[@]}" >/dev/null
  echo "building $type"
  ninja -C "$dir" -j "$(nproc)" strata_base strata_protocol strata_config strata_storage \
    strata_tiered strata_cluster strata_net strata_admin strata_coordinator strata_broker \
    > "$dir.log" 2>&1 || { tail -50 "$dir.log"; echo "$type build FAILED"; exit 1; }
done
