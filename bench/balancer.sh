#!/usr/bin/env bash
# The balancer's planner on synthetic clusters (`strata balance simulate`): plan time, moves
# and network-in balance (max/avg) at 100 and 1,000 brokers with 10,000 and 1,000,000
# partitions (RF 3, 3 racks, partition load zipf:1.1 within each topic of 100 partitions),
# against Kafka's rack-aware round-robin placement of the same partitions (the "before").
# Usage: bench/balancer.sh [extra simulate flags]     Prints a markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
STRATA_BIN=${STRATA_BIN:-build/strata}
[[ -x $STRATA_BIN ]] || scripts/build.sh release strata
echo "| brokers | partitions | plan s | leadership moves | replica moves | network in max/avg: round robin | after plan | leader count max/avg after |"
echo "|---|---|---|---|---|---|---|---|"
for brokers in 100 1000; do
  for partitions in 10000 1000000; do
    out=$("$STRATA_BIN" balance simulate --brokers "$brokers" --partitions "$partitions" \
      --racks 3 --skew zipf:1.1 --json "$@")
    python3 - "$out" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
g = {x["goal"]: x for x in r["goals"]}
lc = g.get("leader_count")
lc_ratio = f'{lc["max_after"] / lc["average"]:.3f}' if lc and lc["average"] else "-"
n = r["network_in_max_over_avg"]
print(f'| {r["brokers"]:,} | {r["partitions"]:,} | {r["plan_ms"] / 1000:.2f} | '
      f'{r["leadership_moves"]:,} | {r["replica_moves"]:,} | {n["round_robin"]:.3f} | '
      f'{n["after"]:.3f} | {lc_ratio} |')
PY
  done
done
