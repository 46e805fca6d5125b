#!/usr/bin/env bash
# Cluster metadata at scale against a real etcd (Debian's etcd-server) on loopback:
#  1. the target scale, simulated (no brokers): `strata bench metadata` writes 1,000 broker
#     registrations and 1,000,000 partition records through the etcd backend and measures one
#     broker's catch-up from its watch, a controller start (view load, election and the
#     Controller's first pass) and one failover in which the Controller moves a broker's 1,000
#     leaders; etcd's database size gives bytes per partition;
#  2. one broker on etcd: partitions created with the AdminClient (topics of 100), then the
#     time for the restarted broker to load and serve them. 6,000 by default: each partition
#     holds 3 files open and this machine's hard limit is 20,000 descriptors per process
#     (10,000 need 30,000: three brokers' worth).
# Usage: bench/metadata.sh [--partitions N] [--brokers N]    Prints a markdown section.
set -euo pipefail
cd "$(dirname "$0")/.."
PARTITIONS=1000000
BROKERS=1000
while (($#)); do
  case "$1" in
    --partitions) PARTITIONS=$2; shift 2 ;;
    --brokers) BROKERS=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
STRATA_BIN=${STRATA_BIN:-build/strata}
LOCAL=${LOCAL_PARTITIONS:-6000}
[[ -x $STRATA_BIN ]] || scripts/build.sh release strata
work=$(mktemp -d /tmp/strata-mdbench.XXXXXX)
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cport=$(port); pport=$(port)
ep=127.0.0.1:$cport
etcd --name b --data-dir "$work/etcd" --listen-client-urls "http://$ep" --advertise-client-urls "http://$ep" \
  --listen-peer-urls "http://127.0.0.1:$pport" --initial-advertise-peer-urls "http://127.0.0.1:$pport" \
  --initial-cluster "b=http://127.0.0.1:$pport" --quota-backend-bytes $((8 << 30)) \
  --auto-compaction-mode revision --auto-compaction-retention 10000 --log-level warn > "$work/etcd.log" 2>&1 &
etcd_pid=$!
broker_pid=
cleanup() { [[ -n $broker_pid ]] && kill "$broker_pid" 2>/dev/null; kill "$etcd_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
export ETCDCTL_API=3
for _ in $(seq 100); do etcdctl --endpoints "$ep" endpoint health >/dev/null 2>&1 && break; sleep 0.1; done
# Bytes of etcd's database in use (bbolt pages holding data, history included).
dbsize() { etcdctl --endpoints "$ep" endpoint status -w json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["Status"]["dbSizeInUse"])'; }
# Bytes of keys and values under a prefix (what the records themselves take).
logical() { etcdctl --endpoints "$ep" get "$1" --prefix -w json | python3 -c 'import base64,json,sys; d=json.load(sys.stdin); print(sum(len(base64.b64decode(k["key"]))+len(base64.b64decode(k.get("value",""))) for k in d.get("kvs",[])))'; }

echo "## Cluster metadata at scale — $(date -u '+%Y-%m-%d %H:%M') UTC, $(nproc) cores, etcd $(etcd --version | head -1 | awk '{print $3}') (\`bench/metadata.sh\`, Strata $(git rev-parse --short HEAD))"
echo
before=$(dbsize)
"$STRATA_BIN" bench metadata --etcd "$ep" --brokers "$BROKERS" --topics 1000 --partitions "$PARTITIONS" \
  --prefix /scale --json "$work/scale.json" > "$work/scale.txt"
etcdctl --endpoints "$ep" compact "$(etcdctl --endpoints "$ep" endpoint status -w json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["Status"]["header"]["revision"])')" >/dev/null
etcdctl --endpoints "$ep" --command-timeout=300s defrag >/dev/null
echo "Simulated target scale: \`strata bench metadata --brokers $BROKERS --topics 1000 --partitions $PARTITIONS\` (one process writes, a second view watches; RF=3 records)"
echo
sed 's/^/    /' "$work/scale.txt"
echo

# 10,000 partitions on one broker on etcd.
bport=$(port)
cat > "$work/broker.properties" <<PROPS
node.id=1
listeners=PLAINTEXT://127.0.0.1:$bport
log.dirs=$work/data
strata.metadata.backend=etcd
strata.etcd.endpoints=$ep
strata.etcd.prefix=/strata
PROPS
start_broker() {
  "$STRATA_BIN" serve --config "$work/broker.properties" >> "$work/broker.log" 2>&1 &
  broker_pid=$!
}
base=$(dbsize)
start_broker
python3 - "$bport" "$work" "$LOCAL" <<'PY'
import sys, time
from confluent_kafka.admin import AdminClient, NewTopic
port, work, total = sys.argv[1], sys.argv[2], int(sys.argv[3])
deadline = time.time() + 30
a = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}"})
while True:
    try:
        a.list_topics(timeout=2); break
    except Exception:
        if time.time() > deadline: raise
        time.sleep(0.1)
t = time.time()
for batch in range(total // 1000):
    fs = a.create_topics([NewTopic(f"t{batch}-{i}", 100, 1) for i in range(10)], request_timeout=120)
    for f in fs.values(): f.result(120)
created = time.time() - t
while sum(len(m.partitions) for m in a.list_topics(timeout=30).topics.values() if m.topic.startswith("t")) < total:
    time.sleep(0.1)
open(f"{work}/create.txt", "w").write(f"{created:.2f}\n")
PY
after=$(dbsize)
records=$(logical /strata/)
kill "$broker_pid"; wait "$broker_pid" || true
t0=$(date +%s.%N)
start_broker
python3 - "$bport" "$LOCAL" <<'PY'
import sys, time
from confluent_kafka.admin import AdminClient
a = AdminClient({"bootstrap.servers": f"127.0.0.1:{sys.argv[1]}"})
total = int(sys.argv[2])
deadline = time.time() + 300
while True:
    try:
        md = a.list_topics(timeout=5)
        if sum(len(m.partitions) for m in md.topics.values() if m.topic.startswith("t")) >= total: break
    except Exception:
        pass
    if time.time() > deadline: raise SystemExit("broker did not come back")
    time.sleep(0.05)
PY
t1=$(date +%s.%N)
python3 - "$(cat "$work/create.txt")" "$base" "$after" "$t0" "$t1" "$LOCAL" "$records" <<'PY'
import sys
created, base, after, t0, t1 = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
n, records = int(sys.argv[6]), int(sys.argv[7])
print(f"One broker on etcd, {n:,} partitions (topics of 100, RF 1) through the AdminClient:")
print()
print("| figure | value |")
print("|---|---|")
print(f"| create {n:,} partitions | {created:.2f} s ({n/created:.0f} partitions/s) |")
print(f"| metadata per partition: keys and values | {records/n:.0f} B |")
print(f"| restarted broker: start to serving all {n:,} in Metadata | {t1-t0:.2f} s |")
PY
