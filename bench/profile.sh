#!/usr/bin/env bash
# Where the time goes in the workloads whose ratio against Kafka is client-bound: runs one
# Strata broker and, per workload, the strata-bench client under /usr/bin/time while reading
# the broker's CPU from /proc, then a perf profile of the broker during the consume.
# Usage: bench/profile.sh [records]   (default 2,000,000 x 1 KiB). Writes bench/profiles/<ts>.md.
set -euo pipefail
cd "$(dirname "$0")/.."
records=${1:-2000000}
bin=${STRATA_BIN:-build/strata}
ts=$(date -u +%Y%m%dT%H%M%SZ)
work=$(mktemp -d /tmp/strata-profile.XXXXXX)
out=bench/profiles/$ts.md
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" serve --set node.id=1 --set "listeners=PLAINTEXT://127.0.0.1:$port" \
  --set "log.dirs=$work/data" --set num.partitions=16 >"$work/broker.log" 2>&1 &
broker=$!
trap 'kill $broker 2>/dev/null; wait $broker 2>/dev/null; rm -rf "$work"' EXIT
sleep 1
ticks() { awk '{print $14+$15}' /proc/$broker/stat; }
hz=$(getconf CLK_TCK)
{
  echo "# Client vs broker CPU, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "Command: \`bench/profile.sh $records\` ($(nproc) cores, Strata $(git rev-parse --short HEAD))."
  echo "Client CPU = user+sys of the strata-bench process (librdkafka); broker CPU from /proc."
  echo
  echo "| workload | wall s | MB/s | client CPU s (user+sys) | broker CPU s |"
  echo "|---|---|---|---|---|"
} >"$out"
run() {  # label, then the bench arguments
  local label=$1; shift
  sync
  local t0 t1 line
  t0=$(ticks)
  line=$(/usr/bin/time -f "TIME %e %U %S" "$bin" bench "$@" --bootstrap "127.0.0.1:$port" 2>&1 |
         grep -E "^TIME|done:" | tr '\n' ' ')
  t1=$(ticks)
  local mbs wall user sys
  mbs=$(grep -oE '[0-9.]+ MB/s' <<<"$line" | head -1 | cut -d' ' -f1)
  read -r wall user sys < <(grep -oE 'TIME [0-9.]+ [0-9.]+ [0-9.]+' <<<"$line" | cut -d' ' -f2-)
  printf '| %s | %s | %s | %.2f (%s + %s) | %.2f |\n' "$label" "$wall" "$mbs" \
    "$(echo "$user + $sys" | bc)" "$user" "$sys" "$(echo "($t1 - $t0) / $hz" | bc -l)" >>"$out"
}
for c in none lz4 zstd; do
  run "produce acks=1 $c" produce --topic "p-$c" --records "$records" --record-size 1024 \
    --acks 1 --compression "$c"
done
run "consume from start" consume --topic p-none --records "$records"
{
  echo
  echo "## Broker profile during a consume (perf, top symbols)"
  echo
  echo '```'
} >>"$out"
perf record -F 999 -g -p $broker -o "$work/perf.data" >/dev/null 2>&1 &
perf_pid=$!
sleep 0.5
"$bin" bench consume --topic p-none --records "$records" --bootstrap "127.0.0.1:$port" >/dev/null 2>&1
kill -INT $perf_pid; wait $perf_pid 2>/dev/null || true
perf report -i "$work/perf.data" --no-children --sort sym 2>/dev/null | grep -E '^ +[0-9.]+%' | awk 'NR <= 15' >>"$out"
echo '```' >>"$out"
cat "$out"
