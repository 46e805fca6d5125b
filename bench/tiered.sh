#!/usr/bin/env bash
# Tiered storage to HDFS, issue 5 "Measure": (a) cold read of HDFS-only data through a fresh
# Strata vs reading the same objects from HDFS directly; (b) upload lag under a sustained
# produce rate, serial vs parallel uploads. Prints markdown tables.
# Usage: bench/tiered.sh [bench/tiered/run.py options, see --help]   (STRATA_BIN=... to choose)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/tests/hdfs/build.sh"  # MiniHdfs + HdfsDigest jar (no-op when up to date)
exec "${PYTHON:-python3}" "$ROOT/bench/tiered/run.py" "$@"
