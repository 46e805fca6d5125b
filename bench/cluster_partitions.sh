#!/usr/bin/env bash
# 10,000 partitions on 3 brokers sharing a real etcd (scripts/cluster.sh on loopback,
# brokers on 127.0.0.1:9092-9094): the time to create them with the AdminClient (100
# topics of 100, RF 1), etcd bytes per partition, how evenly leaders spread, and the
# time for a restarted broker to register, load and lead its partitions again.
# Usage: bench/cluster_partitions.sh [--partitions N]    Prints a markdown section.
set -euo pipefail
cd "$(dirname "$0")/.."
PARTITIONS=10000
while (($#)); do
  case "$1" in
    --partitions) PARTITIONS=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
export STRATA_CLUSTER_DIR; STRATA_CLUSTER_DIR=$(mktemp -d /tmp/strata-clusterbench.XXXXXX)
export STRATA_ETCD_PORT; STRATA_ETCD_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
trap 'scripts/cluster.sh down >/dev/null 2>&1; rm -rf "$STRATA_CLUSTER_DIR"' EXIT
scripts/cluster.sh up 3 >/dev/null
python3 - "$PARTITIONS" "$STRATA_CLUSTER_DIR" "$STRATA_ETCD_PORT" "$(git rev-parse --short HEAD)" <<'PY'
import base64, json, os, signal, subprocess, sys, time
from confluent_kafka.admin import AdminClient, NewTopic
total, cdir, etcd_port, rev = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
boot = "127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094"
a = AdminClient({"bootstrap.servers": boot})
ep = f"127.0.0.1:{etcd_port}"
env = dict(os.environ, ETCDCTL_API="3")

def etcdctl(*args):
    return subprocess.run(["etcdctl", "--endpoints", ep, *args], env=env, check=True,
                          capture_output=True, text=True).stdout

def logical(prefix):
    d = json.loads(etcdctl("get", prefix, "--prefix", "-w", "json"))
    return sum(len(base64.b64decode(k["key"])) + len(base64.b64decode(k.get("value", "")))
               for k in d.get("kvs", []))

def wait(pred, timeout, what):
    deadline = time.time() + timeout
    while not pred():
        if time.time() > deadline:
            raise SystemExit(f"{what}: not within {timeout}s")
        time.sleep(0.05)

def led_by(md):
    out = {}
    for t in md.topics.values():
        if t.topic.startswith("bench-"):
            for p in t.partitions.values():
                out[p.leader] = out.get(p.leader, 0) + 1
    return out

wait(lambda: len(a.list_topics(timeout=5).brokers) == 3, 30, "3 brokers")
before = logical("/strata/")
t = time.time()
topics = total // 100
for batch in range(0, topics, 10):
    fs = a.create_topics([NewTopic(f"bench-{i}", 100, 1) for i in range(batch, min(topics, batch + 10))],
                         request_timeout=120)
    for f in fs.values():
        f.result(120)
created = time.time() - t
wait(lambda: sum(led_by(a.list_topics(timeout=30)).values()) == total, 60, "every partition led")
spread = led_by(a.list_topics(timeout=30))
per_partition = (logical("/strata/") - before) / total

pidfile = f"{cdir}/broker-2.pid"
pid = int(open(pidfile).read())
os.kill(pid, signal.SIGTERM)
while True:
    try:
        os.kill(pid, 0)
        time.sleep(0.05)
    except ProcessLookupError:
        break
mine = spread.get(2, 0)
wait(lambda: led_by(a.list_topics(timeout=30)).get(-1, 0) == mine, 60, "broker 2's partitions offline")
offline_at = time.time()
t0 = time.time()
subprocess.run(["scripts/cluster.sh", "up", "3"], check=True, capture_output=True)
listening = time.time() - t0
wait(lambda: led_by(a.list_topics(timeout=30)).get(2, 0) == mine, 120, "broker 2 leading again")
back = time.time() - t0
log = open(f"{cdir}/broker-2.log").read()
load = [l for l in log.splitlines() if "opened" in l and "partition logs" in l][-1]
print(f"## 10,000 partitions on 3 brokers — {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, "
      f"{os.cpu_count()} cores (`bench/cluster_partitions.sh`, Strata {rev})")
print()
print(f"{total:,} partitions in {topics} topics of 100 (RF 1), created with confluent-kafka's AdminClient "
      f"through the 3 bootstrap brokers, 10 topics per request:")
print()
print("| figure | value |")
print("|---|---|")
print(f"| create {total:,} partitions | {created:.2f} s ({total/created:.0f} partitions/s) |")
print(f"| leaders per broker | {', '.join(f'{n}: {c}' for n, c in sorted(spread.items()))} |")
print(f"| etcd keys and values per partition (topic record shared) | {per_partition:.0f} B |")
print(f"| broker 2 restarted (SIGTERM): its {mine:,} partitions offline, then start to accepting connections | {listening:.2f} s |")
print(f"| start to leading all {mine:,} again (registration, log load, controller re-election) | {back:.2f} s |")
print(f"| its log load | `{load.split('] ', 1)[1]}` |")
PY
