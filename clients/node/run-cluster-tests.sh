#!/usr/bin/env bash
# The Node package on a real Redis Cluster: start 6 nodes with the module (scripts/lib/server.sh, each on a
# free port of 127.0.0.1, cluster-enabled), join them with redis-cli --cluster create as 3 primaries with one
# replica each (withReplicas' test needs a replica behind every primary), wait for cluster_state:ok on each
# and for every replica's link, run clients/node/test/cluster/*.test.js with an ioredis Cluster (the primaries'
# ports in RL_CLUSTER_PORTS, the replicas' in RL_CLUSTER_REPLICA_PORTS), stop every node (trap), and print
# "node-cluster: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
# shellcheck source=clients/node/tap-run.sh
. clients/node/tap-run.sh
fail() { echo "FAIL node-cluster: $*"; echo "node-cluster: 0 passed, 1 failed"; exit 1; }
[ -d clients/node/node_modules ] || fail "no clients/node/node_modules (make test runs npm ci)"
. scripts/lib/server.sh

ports=() pids=() dirs=()
stop_all() {
    local i
    for i in "${!ports[@]}"; do
        SERVER_PORT=${ports[$i]} SERVER_PID=${pids[$i]} SERVER_DIR=${dirs[$i]}
        server_stop
    done
}
trap stop_all EXIT

for _ in 1 2 3 4 5 6; do
    server_start --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 5000 ||
        fail "could not start a cluster node"
    ports+=("$SERVER_PORT") pids+=("$SERVER_PID") dirs+=("$SERVER_DIR")
done
nodes=()
for p in "${ports[@]}"; do nodes+=("127.0.0.1:$p"); done
"$REDIS_CLI" --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes >"${dirs[0]}/create.log" 2>&1 ||
    { cat "${dirs[0]}/create.log"; fail "redis-cli --cluster create"; }
# says PORT PATTERN WORDS...: the node's answer to WORDS has a line matching PATTERN within 10 s.
says() {
    local port=$1 pattern=$2 _
    shift 2
    for _ in $(seq 100); do
        server_ask "$port" "$@" 2>/dev/null | grep -q "$pattern" && return 0
        sleep 0.1
    done
    return 1
}
for p in "${ports[@]}"; do
    says "$p" '^cluster_state:ok' CLUSTER INFO || fail "node $p never reached cluster_state:ok"
done

# Which node redis-cli made a primary is its choice: ROLE says. A replica counts once its link is up.
primaries=() replicas=()
for p in "${ports[@]}"; do
    role=$(server_ask "$p" ROLE | head -n 1)
    if [ "$role" = master ]; then primaries+=("$p"); continue; fi
    replicas+=("$p")
    says "$p" '^master_link_status:up' INFO replication || fail "replica $p never linked to its primary"
done
[ "${#primaries[@]}" -eq 3 ] || fail "expected 3 primaries, found ${#primaries[@]}"

RL_CLUSTER_PORTS="${primaries[*]}" RL_CLUSTER_REPLICA_PORTS="${replicas[*]}" tap_run node-cluster \
    clients/node/test/cluster/*.test.js
