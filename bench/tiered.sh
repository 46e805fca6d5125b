#!/usr/bin/env bash
# Tiered storage to HDFS (MiniDFSCluster) and S3 (S3Proxy), issues 5 and 32 "Measure", one section
# per store (--store hdfs|s3|both, default both): (a) cold read of remote-only data through a
# fresh Strata vs reading the same objects from the store directly; (b) upload lag under a
# sustained produce rate, serial vs parallel uploads; (c) upload capacity per broker with large
# segments (--capacity-segment-mib, default 256; 1024 with --capacity-backlog-mib 4096 for 1 GiB
# segments) vs writing the same files to the store directly. Prints markdown tables.
# Usage: bench/tiered.sh [bench/tiered/run.py options, see --help]   (STRATA_BIN=... to choose)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
store=both
prev=
for a in "$@"; do
  case "$a" in
    --store=*) store="${a#--store=}" ;;
    *) [[ "$prev" == "--store" ]] && store="$a" ;;
  esac
  prev="$a"
done
if [[ "$store" == hdfs || "$store" == both ]]; then
  "$ROOT/tests/hdfs/build.sh"  # MiniHdfs + HdfsDigest jar (no-op when up to date)
fi
if [[ "$store" == s3 || "$store" == both ]]; then
  "$ROOT/tests/s3/install.sh"  # the S3Proxy jar (no-op when it is there)
fi
exec "${PYTHON:-python3}" "$ROOT/bench/tiered/run.py" "$@"
