#!/usr/bin/env bash
# How long a Redis Cluster takes to promote a replica after its primary dies, with the cluster that
# `make cluster` starts (scripts/cluster.sh: 3 primaries + 3 replicas, cluster-node-timeout 5000 ms unless
# RL_CLUSTER_NODE_TIMEOUT says otherwise): docs/cluster.md states what this measured.
#
#   scripts/cluster-promotion.sh [RUNS] [--load]
#
# Each run starts a fresh cluster on free ports, kills one primary with SIGKILL, and reports the time from
# the kill until its replica says role:master, and until that replica answers an RL.TOKEN call on the dead
# primary's slots (cluster_state:ok again). With --load, a client keeps calling RL.TOKEN on every shard
# during the run. The cluster is stopped (and its data removed) after each run, also on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/server.sh
. scripts/lib/server.sh

runs=3 load=0
for arg in "$@"; do
    case "$arg" in
    --load) load=1 ;;
    [0-9]*) runs=$arg ;;
    *) echo "usage: $0 [RUNS] [--load]" >&2; exit 2 ;;
    esac
done
cli() { timeout 2 "$REDIS_CLI" -h 127.0.0.1 -p "$1" "${@:2}" 2>/dev/null | tr -d '\r'; }
ms_now() { echo $(($(date +%s%N) / 1000000)); }

base="" load_pid=""
cleanup() {
    [ -z "$load_pid" ] || kill "$load_pid" 2>/dev/null || true
    [ -z "$base" ] || scripts/cluster.sh stop "$base" >/dev/null 2>&1 || true
}
trap cleanup EXIT

for run in $(seq "$runs"); do
    base=$(server_pick_cluster_base) || { echo "cluster-promotion: no free ports" >&2; exit 1; }
    scripts/cluster.sh start "$base" >/dev/null
    primary="" replica=""
    for p in $(seq "$base" $((base + 5))); do
        info=$(cli "$p" INFO replication)
        if grep -q '^role:slave' <<<"$info"; then
            replica=$p
            primary=$(sed -n 's/^master_port://p' <<<"$info")
            break
        fi
    done
    pid=$(cli "$primary" INFO server | sed -n 's/^process_id://p')
    # A key the dead primary owns: the first k<n> it answers itself (the others answer MOVED).
    key=""
    for n in $(seq 0 2000); do
        if [[ "$(cli "$primary" RL.TOKEN "k$n" 10 1 1000)" =~ ^[0-9] ]]; then
            key=k$n
            break
        fi
    done
    if [ "$load" = 1 ]; then
        (while :; do for p in $(seq "$base" $((base + 5))); do cli "$p" -c RL.TOKEN "load$p" 100 10 1000 >/dev/null || true; done; done) &
        load_pid=$!
    fi
    t0=$(ms_now)
    kill -9 "$pid"
    promoted="" serving=""
    while [ $(($(ms_now) - t0)) -lt 60000 ]; do
        now=$(($(ms_now) - t0))
        if [ -z "$promoted" ] && cli "$replica" INFO replication | grep -q '^role:master'; then promoted=$now; fi
        if [ -n "$promoted" ] && cli "$replica" RL.TOKEN "$key" 10 1 1000 | grep -qE '^[0-9]+$'; then
            serving=$now
            break
        fi
        sleep 0.05
    done
    [ -z "$load_pid" ] || { kill "$load_pid" 2>/dev/null || true; wait "$load_pid" 2>/dev/null || true; load_pid=""; }
    echo "run $run: node timeout ${RL_CLUSTER_NODE_TIMEOUT:-5000} ms, load $([ "$load" = 1 ] && echo on || echo off):" \
        "replica promoted after ${promoted:-never} ms, serving the dead primary's slots after ${serving:-never} ms"
    scripts/cluster.sh stop "$base" >/dev/null
    base=""
done
