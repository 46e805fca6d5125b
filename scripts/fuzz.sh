#!/usr/bin/env bash
# Runs every libFuzzer target in build-fuzz/ for N seconds each (default 30),
# starting from the seed corpus in fuzz/corpus/<target>/ (made by
# fuzz/make_corpus.py) and the corpus grown by earlier runs in build-fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
mkdir -p build-fuzz/corpus
for f in build-fuzz/*_fuzz; do
  name=$(basename "$f")
  mkdir -p "build-fuzz/corpus/$name"
  echo "fuzzing $name for ${seconds}s"
  seeds=()
  [[ -d "fuzz/corpus/$name" ]] && seeds=("fuzz/corpus/$name")
  "$f" -max_total_time="$seconds" -max_len=65536 -print_final_stats=0 \
       "build-fuzz/corpus/$name" "${seeds[@]}" 2>&1 | tail -n 3
done
