#!/usr/bin/env bash
# The "run" command: installs build dependencies, builds, and starts one broker
# on 127.0.0.1:9092 with embedded metadata, data under ./data and tiered
# storage to ./data/remote (file://; topics tier with remote.storage.enable=true).
# Extra arguments are passed to `strata serve` (e.g. --set log.segment.bytes=1048576).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-build-deps.sh
scripts/build.sh release
mkdir -p data/remote
echo "starting strata on 127.0.0.1:9092 (data in $(pwd)/data, remote tier in $(pwd)/data/remote); Ctrl-C stops it"
exec build/strata serve --config config/server.properties \
  --set remote.log.storage.system.enable=true \
  --set "strata.remote.storage.uri=file://$(pwd)/data/remote" "$@"
