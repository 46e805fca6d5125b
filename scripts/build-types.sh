#!/usr/bin/env bash
# Compiles every product source file (not the tests or tools, to keep the
# test command's time) in the standard CMake build types
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
  # The object files of our own sources only: the generated etcd stubs are
  # built with the same fixed flags (-O1, no warnings) in every type, so
  # build/ has already compiled exactly them.
  mapfile -t objects < <(ninja -C "$dir" -t targets all |
    sed -n 's#^\(CMakeFiles/strata_\(base\|protocol\|config\|storage\|tiered\|cluster\|net\|admin\|coordinator\|broker\)\.dir/src/[^:]*\.o\):.*#\1#p')
  ((${#objects[@]} > 50)) || { echo "found only ${#objects[@]} object targets in $dir"; exit 1; }
  ninja -C "$dir" -j "$(nproc)" "${objects[@]}" > "$dir.log" 2>&1 ||
    { tail -50 "$dir.log"; echo "$type build FAILED"; exit 1; }
done
