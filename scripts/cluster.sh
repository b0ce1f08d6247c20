#!/usr/bin/env bash
# A local Redis Cluster for trying the module: 3 primaries + 3 replicas on 127.0.0.1, ports base ..
# base+5 (default 7000; the cluster bus uses port + 10000), each redis-server with build/ratelimit.so
# loaded with the same module arguments as `make run` (scripts/run-server.sh).
#
#   scripts/cluster.sh start  [base_port]   start the 6 nodes, create the cluster, wait for cluster_state:ok
#   scripts/cluster.sh stop   [base_port]   SHUTDOWN NOSAVE every node, remove the data
#   scripts/cluster.sh status [base_port]   each node's role and state; exit 0 only if all 6 are up and ok
#
# Data (nodes.conf, logs, pid files) lives in build/cluster-<base_port>/ (RL_CLUSTER_DIR overrides);
# nothing is persisted (no RDB, no AOF). The nodes run as daemons: they outlive this script until `stop`.
# RL_CLUSTER_NODE_TIMEOUT sets cluster-node-timeout in ms (default 5000). REDIS_SERVER and REDIS_CLI name
# the server and client binaries (default redis-server and redis-cli from PATH), as everywhere else.
# Every question to a node is bounded (server_probe and server_ask, scripts/lib/server.sh): a port held by
# a listener that accepts connections and never answers is named as such instead of hanging the script.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/server.sh
. scripts/lib/server.sh

action=${1:-}
base=${2:-7000}
nodes=6
timeout_ms=${RL_CLUSTER_NODE_TIMEOUT:-5000}
server_bin=$REDIS_SERVER
cli_bin=$REDIS_CLI

usage() {
    echo "usage: $0 start|stop|status [base_port]" >&2
    exit 2
}
[[ "$base" =~ ^[0-9]+$ ]] && [ "$base" -ge 1 ] && [ "$base" -le 55530 ] || usage
dir=${RL_CLUSTER_DIR:-build/cluster-$base}
[[ "$dir" == /* ]] || dir=$(pwd)/$dir

ports() { seq "$base" $((base + nodes - 1)); }
cli() { server_ask "$@" 2>/dev/null; }
alive() { [ "$(cli "$1" PING)" = "PONG" ]; }
field() { cli "$1" CLUSTER INFO | tr -d '\r' | sed -n "s/^$2://p"; }

# A process that exists and has not exited (an exited daemon may stay a zombie until init reaps it).
running() {
    local st
    st=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
    [[ "$st" != Z* ]]
}

# node_pid PORT WHAT (what server_probe said of the port): the pid of the node on PORT if it is one this
# script started: it answers with our pid file setting (found even when its directory is gone, e.g. after
# make clean), or it hangs but its pid file names a server on that port (its process title: the binary's
# name as started, then the address).
node_pid() {
    local p=$1 pid=""
    if [ "$2" = redis ] && [ "$(cli "$p" CONFIG GET pidfile | sed -n 2p)" = "$dir/$p/redis.pid" ]; then
        pid=$(cli "$p" INFO server | tr -d '\r' | sed -n 's/^process_id://p')
    elif [ -f "$dir/$p/redis.pid" ]; then
        pid=$(cat "$dir/$p/redis.pid")
        ps -o args= -p "$pid" 2>/dev/null | grep -qF "$(basename "$server_bin") " || pid=""
        ps -o args= -p "$pid" 2>/dev/null | grep -q ":$p\b" || pid=""
    fi
    [ -n "$pid" ] && running "$pid" && echo "$pid"
}

start() {
    if [ ! -f build/ratelimit.so ]; then
        echo "cluster: build/ratelimit.so is missing: run make first" >&2
        exit 1
    fi
    command -v "$server_bin" >/dev/null && command -v "$cli_bin" >/dev/null ||
        { echo "cluster: $server_bin and $cli_bin are needed (make deps, or check REDIS_SERVER/REDIS_CLI)" >&2; exit 1; }
    local p what running=0
    for p in $(ports); do
        what=$(server_probe "$p")
        [ "$what" != none ] || continue
        if node_pid "$p" "$what" >/dev/null; then
            running=$((running + 1))
        elif [ "$what" = redis ]; then
            echo "cluster: something else already answers on 127.0.0.1:$p" >&2
            exit 1
        else
            echo "cluster: $(server_not_redis "$p"): pick another port (CLUSTER_PORT=...)" >&2
            exit 1
        fi
    done
    if [ "$running" -eq "$nodes" ] && [ "$(field "$base" cluster_state)" = ok ]; then
        echo "cluster: already running on 127.0.0.1:$base-$((base + nodes - 1))"
        connect_help
        return 0
    fi
    [ "$running" -eq 0 ] || { echo "cluster: some nodes already run; '$0 stop $base' first" >&2; exit 1; }

    rm -rf "$dir"
    for p in $(ports); do
        mkdir -p "$dir/$p"
        "$server_bin" --bind 127.0.0.1 --port "$p" --dir "$dir/$p" --save "" --appendonly no \
            --daemonize yes --pidfile "$dir/$p/redis.pid" --logfile "$dir/$p/redis.log" \
            --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout "$timeout_ms" \
            --repl-diskless-sync-delay 0 \
            --loadmodule "$(pwd)/build/ratelimit.so"
    done
    for p in $(ports); do
        for _ in $(seq 100); do alive "$p" && break; sleep 0.05; done
        alive "$p" || { echo "cluster: node $p did not start, see $dir/$p/redis.log" >&2; stop_nodes; exit 1; }
    done

    local addrs=()
    for p in $(ports); do addrs+=("127.0.0.1:$p"); done
    if ! "$cli_bin" --cluster create "${addrs[@]}" --cluster-replicas 1 --cluster-yes >"$dir/create.log" 2>&1; then
        cat "$dir/create.log" >&2
        echo "cluster: redis-cli --cluster create failed" >&2
        stop_nodes
        exit 1
    fi
    # Every node must see the whole cluster (all slots covered, state ok), and every replica must have
    # finished its first sync. A deadline rather than a count of rounds: a node that does not answer
    # makes each round last its questions' timeouts.
    local ok=0 deadline=$((SECONDS + 30))
    while [ "$SECONDS" -lt "$deadline" ]; do
        ok=1
        for p in $(ports); do
            [ "$(field "$p" cluster_state)" = ok ] && [ "$(field "$p" cluster_known_nodes)" = "$nodes" ] || ok=0
            if cli "$p" INFO replication | grep -q '^role:slave'; then
                cli "$p" INFO replication | grep -q '^master_link_status:up' || ok=0
            fi
        done
        [ "$ok" -eq 1 ] && break
        sleep 0.1
    done
    if [ "$ok" -ne 1 ]; then
        echo "cluster: cluster_state did not become ok within 30 s" >&2
        stop_nodes
        exit 1
    fi
    echo "cluster: 3 primaries + 3 replicas on 127.0.0.1:$base-$((base + nodes - 1)), cluster_state:ok (data in $dir)"
    connect_help
}

connect_help() {
    local make_stop="make cluster-stop"
    [ "$base" = 7000 ] || make_stop="make cluster-stop CLUSTER_PORT=$base"
    echo "cluster: connect with  redis-cli -c -p $base  (-c follows MOVED); stop with  $make_stop  or  $0 stop $base"
}

# SHUTDOWN NOSAVE each node we started, replicas first (a primary's SHUTDOWN waits for replicas that
# lag, up to 10 s); kill -9 (by its pid) one that is still there 5 s later. Anything else on the ports is
# left alone.
stop_nodes() {
    local p pid what replicas=() primaries=()
    declare -A pids=()
    for p in $(ports); do
        what=$(server_probe "$p")
        pid=$(node_pid "$p" "$what" || true)
        if [ -z "$pid" ]; then
            [ "$what" = none ] || echo "cluster: 127.0.0.1:$p is not a node this script started; left alone"
            continue
        fi
        pids[$p]=$pid
        if [ "$what" = redis ] && [ "$(cli "$p" ROLE | head -n 1)" = slave ]; then
            replicas+=("$p")
        else
            primaries+=("$p")
        fi
    done
    for p in "${replicas[@]}" "${primaries[@]}"; do
        pid=${pids[$p]}
        cli "$p" SHUTDOWN NOSAVE >/dev/null || true
        for _ in $(seq 100); do running "$pid" || break; sleep 0.05; done
        if running "$pid"; then
            echo "cluster: node $p (pid $pid) ignored SHUTDOWN, killing it" >&2
            kill -9 "$pid" 2>/dev/null || true
        fi
    done
}

stop() {
    stop_nodes
    rm -rf "$dir"
    echo "cluster: stopped 127.0.0.1:$base-$((base + nodes - 1))"
}

status() {
    local p up=0 state what
    for p in $(ports); do
        what=$(server_probe "$p")
        if [ "$what" = other ]; then
            printf '127.0.0.1:%s  %s\n' "$p" "$(server_not_redis "$p")"
        elif alive "$p"; then
            up=$((up + 1))
            state=$(field "$p" cluster_state)
            local role
            role=$(cli "$p" ROLE | head -n 1)
            printf '127.0.0.1:%s  %-7s cluster_state:%s  slots_assigned:%s\n' "$p" "$role" "$state" \
                "$(field "$p" cluster_slots_assigned)"
        else
            printf '127.0.0.1:%s  down\n' "$p"
        fi
    done
    [ "$up" -eq "$nodes" ] && [ "$(field "$base" cluster_state)" = ok ]
}

case "$action" in
start) start ;;
stop) stop ;;
status) status ;;
*) usage ;;
esac
