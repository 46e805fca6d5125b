#!/usr/bin/env bash
# Compiles product source files (not the tests or tools, to keep the test
# command's time) each on its own (no unity batches, so a file that misses an
# include fails here) in a standard CMake build type that scripts/test.sh does
# not otherwise build: MinSizeRel by default, or the types given as arguments
# (RelWithDebInfo MinSizeRel). By default only the subsystems that the test
# command's ThreadSanitizer build (scripts/build.sh tsan, also one file per
# compiler run) does not compile: config, broker, kafka, balancer,
# balancer_service, admin, server, app;
# STRATA_TYPES_MODULES=all compiles every subsystem. Release is build/ and Debug is build-asan/.
# Optimisation levels differ between them, and so do GCC's warnings, which
# -Werror turns into errors: this is how the test command catches a type that
# does not build. -Os is the level furthest from the others (-O3, -O0); -O2
# (RelWithDebInfo) sits between Release's -O3 and MinSizeRel's -Os and is left
# to `scripts/build-types.sh RelWithDebInfo`. Output: build-types/<type>/.
set -euo pipefail
cd "$(dirname "$0")/.."
types=("$@")
((${#types[@]})) || types=(MinSizeRel)
for type in "${types[@]}"; do
  dir="build-types/$type"
  # RelWithDebInfo without its -g: debug info changes no warning and costs a
  # third of the compile time.
  flags=()
  [[ $type == RelWithDebInfo ]] && flags=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG")
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$type" -DSTRATA_UNITY=OFF "${flags[@]}" >/dev/null
  echo "building $type"
  # The object files of our own sources only: the generated etcd stubs are
  # built with the same fixed flags (-O1, no warnings) in every type, so
  # build/ has already compiled exactly them.
  modules=${STRATA_TYPES_MODULES:-config broker kafka balancer balancer_service admin server app}
  [[ $modules == all ]] &&
    modules="base protocol config storage tiered cluster net replication coordinator broker kafka balancer balancer_service admin server app"
  pattern=$(echo $modules | sed 's/ /\\|/g')
  mapfile -t objects < <(ninja -C "$dir" -t targets all |
    sed -n "s#^\\(CMakeFiles/strata_\\($pattern\\)\\.dir/src/[^:]*\\.o\\):.*#\\1#p")
  ((${#objects[@]} > 50)) || { echo "found only ${#objects[@]} object targets in $dir"; exit 1; }
  echo "$type: compiling ${#objects[@]} files of: $modules"
  ninja -C "$dir" -j "$(nproc)" "${objects[@]}" > "$dir.log" 2>&1 ||
    { tail -50 "$dir.log"; echo "$type build FAILED"; exit 1; }
done
