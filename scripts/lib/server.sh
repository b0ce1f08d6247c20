# scripts/lib/server.sh -- sourced, not executed: start a throwaway redis-server with the module loaded,
# and stop it again, for the scripts that need one (the benchmarks under scripts/bench/). The C
# harness of the integration tests (tests/server.c) starts its servers the same way.
#
#   . scripts/lib/server.sh
#   trap server_stop EXIT
#   server_start [--module-arg ARG]... [REDIS-SERVER ARG]... || exit 1
#   server_cli PING                 redis-cli against it
#   server_stop                     SHUTDOWN NOSAVE (then kill by pid), temp dir removed
#
# And, for any port, including one this shell did not start a server on (scripts/run-server.sh,
# scripts/cluster.sh):
#
#   server_probe PORT               none, redis or other: what listens on 127.0.0.1:PORT
#   server_ask PORT ARG...          redis-cli ARG... against 127.0.0.1:PORT, given SERVER_PROBE_TIMEOUT s
#   server_not_redis PORT           what to say of a port where server_probe found "other"
#   server_pick_cluster_base        a base port for scripts/cluster.sh whose 6 ports and bus ports are free
#
# A listener that accepts connections and never answers would hang redis-cli for ever (it has no reply
# timeout): every probe and every short command to a server runs under timeout(1) instead, for
# SERVER_PROBE_TIMEOUT seconds (default 2). server_cli has no limit: the benchmarks pipe long runs of
# commands through it to a server they started.
#
# The server: 127.0.0.1 on a free port, a fresh temp dir (SERVER_DIR, its log in SERVER_DIR/redis.log),
# --save "" --appendonly no. server_start sets SERVER_PORT, SERVER_PID and SERVER_DIR; call it directly,
# never in $(...): the server must be a child of the calling shell, which waits for it. One server per
# shell.
#
# Environment: REDIS_SERVER and REDIS_CLI, the binaries (default redis-server and redis-cli from PATH);
# RL_MODULE, the module (default build/ratelimit.so; a relative path is taken from the current directory,
# the project root for the scripts).
# shellcheck shell=bash

REDIS_SERVER=${REDIS_SERVER:-redis-server}
REDIS_CLI=${REDIS_CLI:-redis-cli}
SERVER_PROBE_TIMEOUT=${SERVER_PROBE_TIMEOUT:-2}
SERVER_PORT="" SERVER_PID="" SERVER_DIR=""

server_cli() { "$REDIS_CLI" -p "$SERVER_PORT" "$@"; }

# --foreground: redis-cli stays in the terminal's process group, so that Ctrl-C reaches it at once.
server_ask() {
    local port=$1
    shift
    timeout --foreground "$SERVER_PROBE_TIMEOUT" "$REDIS_CLI" -h 127.0.0.1 -p "$port" "$@"
}

# What listens on 127.0.0.1:PORT, from one PING:
#   none    nothing: the connection is refused
#   redis   a server that speaks Redis's protocol: PONG, or an error reply (NOAUTH, LOADING...)
#   other   something that accepts connections (or holds the port: a full backlog makes connect wait)
#           but does not answer within SERVER_PROBE_TIMEOUT s, or answers something else
server_probe() {
    local out rc=0
    out=$(server_ask "$1" --no-raw PING 2>&1) || rc=$?
    if [ "$rc" -ne 124 ] && { [ "$out" = PONG ] || [[ "$out" == "(error) "* ]]; }; then
        echo redis
    elif [ "$rc" -ne 124 ] && [[ "$out" == *"Connection refused"* ]]; then
        echo none
    else
        echo other
    fi
}

server_not_redis() {
    echo "something on port $1 accepts connections but does not answer as Redis"
}

# The module's absolute path: redis-server changes into its --dir before it loads modules.
server_module() {
    local m=${RL_MODULE:-build/ratelimit.so}
    [ -f "$m" ] || { echo "server.sh: module $m is missing (run make, or set RL_MODULE)" >&2; return 1; }
    realpath -- "$m"
}

# A random port from 20000 up to the kernel's ephemeral range (where clients' sockets get theirs) with
# nothing listening on it. Another process may still take it before the server binds it: server_start
# then tries again.
server_pick_port() {
    local port low=32768 _high
    read -r low _high </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
    [ "$low" -gt 21000 ] 2>/dev/null || low=40000
    port=$((20000 + RANDOM % (low - 20000)))
    [ "$(server_probe "$port")" = none ] || return 1
    echo "$port"
}

# A base port whose six ports and their cluster bus ports (+10000) are all free (scripts/cluster.sh's six
# nodes), all below the kernel's ephemeral range (32768 and up), where a client's socket could take one
# between this check and a node's bind. Fails after 50 tries.
server_pick_cluster_base() {
    local b p _
    for _ in $(seq 50); do
        b=$((20000 + RANDOM % 2700))
        for p in $(seq "$b" $((b + 5))) $(seq $((b + 10000)) $((b + 10005))); do
            if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then continue 2; fi
        done
        echo "$b"
        return 0
    done
    return 1
}

server_start() {
    local module_args=() extra=() module attempt
    while [ $# -gt 0 ]; do
        case "$1" in
        --module-arg) module_args+=("$2"); shift 2 ;;
        *) extra+=("$1"); shift ;;
        esac
    done
    module=$(server_module) || return 1
    SERVER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/rl-server-XXXXXX") || return 1
    for attempt in 1 2 3 4 5 6 7 8 9 10; do
        SERVER_PORT=$(server_pick_port) || continue
        "$REDIS_SERVER" --bind 127.0.0.1 --port "$SERVER_PORT" --dir "$SERVER_DIR" --save "" --appendonly no \
            --logfile "$SERVER_DIR/redis.log" --loadmodule "$module" "${module_args[@]}" "${extra[@]}" &
        SERVER_PID=$!
        server_wait_up && return 0
        server_reap TERM
    done
    echo "server.sh: could not start $REDIS_SERVER (after $attempt attempts); its log:" >&2
    cat "$SERVER_DIR/redis.log" >&2 2>/dev/null || true
    rm -rf "$SERVER_DIR"
    SERVER_DIR="" SERVER_PORT=""
    return 1
}

# Up when it answers PING and is ours: on a shared machine, another server may have bound the port
# first, and then ours has exited.
server_wait_up() {
    local _
    for _ in $(seq 100); do
        kill -0 "$SERVER_PID" 2>/dev/null || return 1
        if [ "$(server_ask "$SERVER_PORT" PING 2>/dev/null)" = PONG ] &&
            [ "$(server_ask "$SERVER_PORT" INFO server 2>/dev/null | tr -d '\r' | sed -n 's/^process_id://p')" = \
                "$SERVER_PID" ]; then
            return 0
        fi
        sleep 0.1
    done
    return 1
}

# server_reap [SIGNAL]: send SIGNAL if given, give the server 5 s to end, then SIGKILL it, so that a
# hung server never outlives the script; then collect its exit status.
server_reap() {
    local _
    [ $# -eq 0 ] || kill -"$1" "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 50); do
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
}

server_stop() {
    if [ -n "$SERVER_PID" ]; then
        server_ask "$SERVER_PORT" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
        server_reap
    fi
    [ -z "$SERVER_DIR" ] || rm -rf "$SERVER_DIR"
    SERVER_DIR="" SERVER_PORT=""
}
