#!/usr/bin/env bash
# A local Strata cluster on loopback: one real etcd (Debian's etcd-server) and
# N brokers (default 3) sharing a file:// remote store, for trying cluster
# mode. Everything lives under ./cluster (override with STRATA_CLUSTER_DIR).
#
#   scripts/cluster.sh up [N]     builds if needed, starts etcd and N brokers, prints addresses
#   scripts/cluster.sh status     what runs, and the cluster's brokers as etcd has them
#   scripts/cluster.sh down       stops the brokers (SIGTERM, then SIGKILL) and etcd
#
# Broker n listens on 127.0.0.1:909(1+n) (9092, 9093, ...; the first is
# STRATA_BROKER_PORT), its admin API on 127.0.0.1:808(4+n) (the first is
# STRATA_ADMIN_PORT); etcd's client port is 2379 (STRATA_ETCD_PORT) and its
# peer port the next one. "down" stops a broker that does not stop on SIGTERM
# within 30 s with SIGKILL, says so and exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
dir=${STRATA_CLUSTER_DIR:-$root/cluster}
etcd_port=${STRATA_ETCD_PORT:-2379}
etcd_peer=$((etcd_port + 1))
broker_port=${STRATA_BROKER_PORT:-9092}
admin_port=${STRATA_ADMIN_PORT:-8085}
bin=${STRATA_BIN:-$root/build/strata}
prefix=/strata

running() { [[ -f $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

wait_port() {  # host port seconds what
  local deadline=$((SECONDS + $3))
  until (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; do
    if ((SECONDS > deadline)); then echo "$4 did not come up on $1:$2 (log: $5)" >&2; tail -20 "$5" >&2; exit 1; fi
    sleep 0.2
  done
}

up() {
  local n=${1:-3}
  command -v etcd >/dev/null || scripts/install-test-deps.sh
  [[ -x $bin ]] || { scripts/install-build-deps.sh && scripts/build.sh release; }
  mkdir -p "$dir/remote"
  if ! running "$dir/etcd.pid"; then
    # History is compacted every 10,000 revisions so the 2 GB quota never
    # fills (watchers that fall behind reload).
    etcd --name strata --data-dir "$dir/etcd" \
      --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
      --listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
      --initial-cluster "strata=http://127.0.0.1:$etcd_peer" \
      --auto-compaction-mode revision --auto-compaction-retention 10000 \
      --log-level warn >"$dir/etcd.log" 2>&1 &
    echo $! >"$dir/etcd.pid"
    wait_port 127.0.0.1 "$etcd_port" 20 etcd "$dir/etcd.log"
  fi
  for ((i = 1; i <= n; i++)); do
    local pid=$dir/broker-$i.pid port=$((broker_port + i - 1)) admin=$((admin_port + i - 1))
    running "$pid" && continue
    mkdir -p "$dir/broker-$i"
    "$bin" serve --config config/server.properties \
      --set node.id="$i" --set listeners="PLAINTEXT://127.0.0.1:$port" \
      --set log.dirs="$dir/broker-$i" --set strata.admin.listener="127.0.0.1:$admin" \
      --set strata.metadata.backend=etcd --set strata.etcd.endpoints="127.0.0.1:$etcd_port" \
      --set strata.etcd.prefix=$prefix \
      --set remote.log.storage.system.enable=true \
      --set strata.remote.storage.uri="file://$dir/remote" >"$dir/broker-$i.log" 2>&1 &
    echo $! >"$pid"
    # One at a time: the first creates the cluster id and __consumer_offsets.
    wait_port 127.0.0.1 "$port" 60 "broker $i" "$dir/broker-$i.log"
  done
  echo "etcd:      127.0.0.1:$etcd_port (prefix $prefix)"
  for ((i = 1; i <= n; i++)); do
    echo "broker $i:  127.0.0.1:$((broker_port + i - 1))  admin http://127.0.0.1:$((admin_port + i - 1))/  log $dir/broker-$i.log"
  done
  echo "bootstrap: $(for ((i = 1; i <= n; i++)); do printf '127.0.0.1:%d,' $((broker_port + i - 1)); done | sed 's/,$//')"
}

status() {
  local any=0
  running "$dir/etcd.pid" && { echo "etcd: running (pid $(cat "$dir/etcd.pid"))"; any=1; } || echo "etcd: stopped"
  for pid in "$dir"/broker-*.pid; do
    [[ -f $pid ]] || continue
    local name; name=$(basename "$pid" .pid)
    if running "$pid"; then echo "$name: running (pid $(cat "$pid"))"; any=1; else echo "$name: stopped"; fi
  done
  if running "$dir/etcd.pid"; then
    echo "registered brokers:"
    ETCDCTL_API=3 etcdctl --endpoints "127.0.0.1:$etcd_port" get "$prefix/brokers/" --prefix --print-value-only 2>/dev/null | sed 's/^/  /'
    echo "controller: $(ETCDCTL_API=3 etcdctl --endpoints "127.0.0.1:$etcd_port" get "$prefix/controller" --print-value-only 2>/dev/null)"
  fi
  ((any)) || true
}

stop_pid() {  # pidfile seconds
  [[ -f $1 ]] || return 0
  local pid; pid=$(cat "$1")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    local deadline=$((SECONDS + $2))
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "$(basename "$1" .pid) did not stop in $2 s: killed" >&2
      kill -KILL "$pid"
      unclean=1
    fi
  fi
  rm -f "$1"
}
unclean=0

down() {
  for pid in "$dir"/broker-*.pid; do stop_pid "$pid" 30; done
  stop_pid "$dir/etcd.pid" 15
  echo "stopped (data kept in $dir; remove it for a fresh cluster)"
  return $unclean
}

case ${1:-} in
  up) up "${2:-3}" ;;
  status) status ;;
  down) down ;;
  *) echo "usage: $0 up [N] | status | down" >&2; exit 2 ;;
esac
