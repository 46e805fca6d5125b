#!/usr/bin/env bash
# One command for the side-by-side benchmark: installs what it needs (bench/setup.sh), then
# runs bench/run.py. Usage: bench/run.sh [--quick|--smoke] [run.py options, see --help]
set -euo pipefail
BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$(dirname "$BENCH")"
for a in "$@"; do [[ "$a" == -h || "$a" == --help ]] && exec "${PYTHON:-python3}" bench/run.py --help; done
bench/setup.sh
exec "${PYTHON:-python3}" bench/run.py "$@"
