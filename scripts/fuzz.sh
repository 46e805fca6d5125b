#!/usr/bin/env bash
# Runs every libFuzzer target in build-fuzz/ for N seconds each (default 30).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
mkdir -p build-fuzz/corpus
for f in build-fuzz/*_fuzz; do
  name=$(basename "$f")
  mkdir -p "build-fuzz/corpus/$name"
  echo "fuzzing $name for ${seconds}s"
  "$f" -max_total_time="$seconds" -max_len=65536 -print_final_stats=0 \
       "build-fuzz/corpus/$name" 2>&1 | tail -n 3
done
