#!/usr/bin/env bash
# The "run" command: installs build dependencies, builds, and starts one broker
# on 127.0.0.1:9092 with embedded metadata, data under ./data and tiered
# storage to ./data/remote (file://; topics tier with remote.storage.enable=true).
# Extra arguments are passed to `strata serve` (e.g. --set log.segment.bytes=1048576).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-build-deps.sh
# Only the broker binary (not the tests and tools), and the compiler's output
# only when the build fails: GCC 12's -Warray-bounds notes from libstdc++ are
# warnings, not errors, and would fill the screen of someone trying it out.
mkdir -p build
echo "building the broker (build/strata; compiler output in build/run-build.log)"
if ! scripts/build.sh release strata > build/run-build.log 2>&1; then
  tail -60 build/run-build.log
  echo "build FAILED: the whole output is in build/run-build.log" >&2
  exit 1
fi
mkdir -p data/remote
echo "starting strata on 127.0.0.1:9092 (data in $(pwd)/data, remote tier in $(pwd)/data/remote); Ctrl-C stops it"
exec build/strata serve --config config/server.properties \
  --set remote.log.storage.system.enable=true \
  --set "strata.remote.storage.uri=file://$(pwd)/data/remote" "$@"
