#!/usr/bin/env bash
# A local Strata cluster on loopback: one real etcd (Debian's etcd-server) and
# N brokers (default 3) sharing a file:// remote store, for trying cluster
# mode. Everything lives under ./cluster (override with STRATA_CLUSTER_DIR).
#
#   scripts/cluster.sh up [N] [--secure]
#                                 builds if needed, starts etcd and N brokers, prints addresses;
#                                 --secure: SASL_SSL everywhere (a CA and certificates made in
#                                 $dir/secure), ACLs, HTTPS admin API with a token, and the
#                                 client settings written to $dir/secure/client.properties
#   scripts/cluster.sh status     what runs, and the cluster's brokers as etcd has them
#   scripts/cluster.sh down       stops the brokers (SIGTERM, then SIGKILL) and etcd
#
# Broker n listens on 127.0.0.1:909(1+n) (9092, 9093, ...; the first is
# STRATA_BROKER_PORT; with --secure its inter-broker listener on 9192, ...,
# STRATA_INTERBROKER_PORT), its admin API on 127.0.0.1:808(4+n) (the first is
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
# --secure: brokers reach each other on a listener of their own.
interbroker_port=${STRATA_INTERBROKER_PORT:-$((broker_port + 100))}
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

# The CA, the brokers' certificate (localhost, 127.0.0.1), passwords and the
# admin API token of a --secure cluster, made once.
make_secrets() {
  local s=$dir/secure
  mkdir -p "$s" && chmod 700 "$s"
  [[ -f $s/broker.keystore.pem ]] && return
  (
    cd "$s"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 365 \
      -subj "/CN=Strata local CA" 2>/dev/null
    echo "subjectAltName=DNS:localhost,IP:127.0.0.1" >broker.ext
    openssl req -newkey rsa:2048 -nodes -keyout broker.key -out broker.csr -subj "/CN=localhost" 2>/dev/null
    openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out broker.crt \
      -days 365 -extfile broker.ext 2>/dev/null
    cat broker.key broker.crt ca.pem >broker.keystore.pem
    openssl rand -hex 16 >admin.password
    openssl rand -hex 16 >broker.password
    echo "$(openssl rand -hex 24) admin" >admin-tokens
    chmod 600 ./*.key ./*.password admin-tokens broker.keystore.pem
  )
}

# The settings that make broker n a --secure one: SASL_SSL for clients
# (CLIENT) and brokers (BROKER, PLAIN as user broker), ACLs with admin and
# broker as super users, the admin API over HTTPS with a token.
secure_config() {  # n port peer_port
  local s=$dir/secure admin_pw broker_pw
  admin_pw=$(cat "$s/admin.password"); broker_pw=$(cat "$s/broker.password")
  cat config/server.properties
  cat <<EOF

# --secure (scripts/cluster.sh)
listeners=CLIENT://127.0.0.1:$2,BROKER://127.0.0.1:$3
listener.security.protocol.map=CLIENT:SASL_SSL,BROKER:SASL_SSL
inter.broker.listener.name=BROKER
ssl.keystore.location=$s/broker.keystore.pem
ssl.truststore.location=$s/ca.pem
sasl.enabled.mechanisms=SCRAM-SHA-512,SCRAM-SHA-256,PLAIN
sasl.mechanism.inter.broker.protocol=PLAIN
listener.name.client.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="$admin_pw";
listener.name.broker.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" password="$broker_pw" user_broker="$broker_pw";
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:admin;User:broker
strata.admin.ssl.keystore.location=$s/broker.keystore.pem
strata.admin.token.file=$s/admin-tokens
EOF
}

write_client_config() {
  local s=$dir/secure
  cat >"$s/client.properties" <<EOF
# Kafka's tools (--command-config) and the strata CLI (--command-config)
security.protocol=SASL_SSL
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="$(cat "$s/admin.password")";
ssl.truststore.type=PEM
ssl.truststore.location=$s/ca.pem
strata.admin.token=$(cut -d' ' -f1 "$s/admin-tokens")
EOF
  cat >"$s/librdkafka.properties" <<EOF
# librdkafka (kcat -F, confluent-kafka)
security.protocol=SASL_SSL
sasl.mechanism=PLAIN
sasl.username=admin
sasl.password=$(cat "$s/admin.password")
ssl.ca.location=$s/ca.pem
EOF
  chmod 600 "$s/client.properties" "$s/librdkafka.properties"
}

up() {
  local n=3 secure=0
  for arg in "$@"; do
    case $arg in
      --secure) secure=1 ;;
      *) n=$arg ;;
    esac
  done
  ((secure)) && make_secrets
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
    local config=config/server.properties listeners="PLAINTEXT://127.0.0.1:$port"
    if ((secure)); then
      config=$dir/broker-$i.properties
      local peer_port=$((interbroker_port + i - 1))
      secure_config "$i" "$port" "$peer_port" >"$config"
      chmod 600 "$config"
      listeners="CLIENT://127.0.0.1:$port,BROKER://127.0.0.1:$peer_port"
    fi
    "$bin" serve --config "$config" \
      --set node.id="$i" --set listeners="$listeners" \
      --set log.dirs="$dir/broker-$i" --set strata.admin.listener="127.0.0.1:$admin" \
      --set strata.metadata.backend=etcd --set strata.etcd.endpoints="127.0.0.1:$etcd_port" \
      --set strata.etcd.prefix=$prefix \
      --set remote.log.storage.system.enable=true \
      --set strata.remote.storage.uri="file://$dir/remote" >"$dir/broker-$i.log" 2>&1 &
    echo $! >"$pid"
    # One at a time: the first creates the cluster id and __consumer_offsets.
    wait_port 127.0.0.1 "$port" 60 "broker $i" "$dir/broker-$i.log"
  done
  local scheme=http
  if ((secure)); then write_client_config; scheme=https; fi
  echo "etcd:      127.0.0.1:$etcd_port (prefix $prefix)"
  for ((i = 1; i <= n; i++)); do
    echo "broker $i:  127.0.0.1:$((broker_port + i - 1))  admin $scheme://127.0.0.1:$((admin_port + i - 1))/  log $dir/broker-$i.log"
  done
  if ((secure)); then
    echo "secured:   SASL_SSL (user admin), ACLs on; client settings in $dir/secure/client.properties"
    echo "           (Kafka tools, strata --command-config) and $dir/secure/librdkafka.properties"
  fi
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
  up) shift; up "$@" ;;
  status) status ;;
  down) down ;;
  *) echo "usage: $0 up [N] [--secure] | status | down" >&2; exit 2 ;;
esac
