#!/usr/bin/env bash
# `make run` and `make stop`: one redis-server with build/ratelimit.so, in the background, on
# 127.0.0.1:PORT (default 6379), to try the module by hand.
#
#   scripts/run-server.sh start [ARG]...   start it (or say that it already runs) and print how to connect
#                                          and how to stop it; each ARG goes to redis-server right after
#                                          the module's path: module arguments first (test-clock), then
#                                          redis-server options (--maxmemory 100mb)
#   scripts/run-server.sh stop             stop the server that `start` started on PORT, if it runs
#
# The server's files live in build/run/PORT/ (redis.pid, redis.log, and its working directory); nothing
# is persisted (no RDB, no AOF) and `stop` removes the directory. Nothing is written outside build/run/.
# `start` refuses a port on which something else already listens; `stop` only ever stops a redis-server
# whose pid file is build/run/PORT/redis.pid, and does nothing (successfully) when none runs. Every
# question to the port is bounded (server_probe and server_ask, scripts/lib/server.sh): a listener that
# accepts connections and never answers is named as such instead of hanging both.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/server.sh
. scripts/lib/server.sh

action=${1:-}
[ $# -eq 0 ] || shift
port=${PORT:-6379}
if ! [[ "$port" =~ ^[0-9]+$ ]] || [ "$port" -lt 1 ] || [ "$port" -gt 65535 ]; then
    echo "run-server: PORT must be a port number (got '$port')" >&2
    exit 2
fi
dir=$(pwd)/build/run/$port
pidfile=$dir/redis.pid
logfile=$dir/redis.log
stop_hint="make stop"
[ "$port" = 6379 ] || stop_hint="make stop PORT=$port"

cli() { server_ask "$port" "$@" 2>/dev/null; }

# A process that exists and has not exited (a daemon that exited may stay a zombie until init reaps it).
running() {
    local st
    st=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
    [[ "$st" != Z* ]]
}

# our_pid WHAT (what server_probe said of the port): the pid of the redis-server this script started on
# the port, if it runs: the server on the port names our pid file, or (if it does not answer as we expect)
# our pid file names a redis-server process listening on the port.
our_pid() {
    local pid=""
    if [ "$1" = redis ] && [ "$(cli CONFIG GET pidfile | sed -n 2p)" = "$pidfile" ]; then
        pid=$(cli INFO server | tr -d '\r' | sed -n 's/^process_id://p')
    elif [ -f "$pidfile" ]; then
        pid=$(cat "$pidfile")
        ps -o args= -p "$pid" 2>/dev/null | grep -q "redis-server .*:$port" || pid=""
    fi
    [ -n "$pid" ] && running "$pid" && echo "$pid"
}

connect_help() {
    echo "run-server: connect with  redis-cli -p $port   stop with  $stop_hint"
}

start() {
    [ -f build/ratelimit.so ] || { echo "run-server: build/ratelimit.so is missing: run make" >&2; exit 1; }
    if ! command -v redis-server >/dev/null || ! command -v "$REDIS_CLI" >/dev/null; then
        echo "run-server: redis-server and redis-cli are needed (scripts/deps.sh --runtime)" >&2
        exit 1
    fi
    local pid what another="make run PORT=$((port == 65535 ? port - 1 : port + 1))"
    what=$(server_probe "$port")
    if pid=$(our_pid "$what"); then
        if [ "$what" != redis ]; then
            echo "run-server: the server make run started on 127.0.0.1:$port (pid $pid) does not answer" >&2
            echo "run-server: stop it with  $stop_hint" >&2
            exit 1
        fi
        echo "run-server: already running on 127.0.0.1:$port (pid $pid, log $logfile); to start it with other"
        echo "run-server: arguments, stop it first"
        connect_help
        return 0
    fi
    case "$what" in
    redis)
        echo "run-server: something else already listens on 127.0.0.1:$port; not starting a second server" >&2
        echo "run-server: pick another port, e.g.  $another" >&2
        exit 1
        ;;
    other)
        echo "run-server: $(server_not_redis "$port"): pick another port, e.g.  $another" >&2
        exit 1
        ;;
    esac
    rm -rf "$dir"
    mkdir -p "$dir"
    # tests/check-compose.sh reads the module path and arguments from the next command: keep the module
    # path and "$@" on one line.
    redis-server --bind 127.0.0.1 --port "$port" --dir "$dir" --save "" --appendonly no \
        --daemonize yes --pidfile "$pidfile" --logfile "$logfile" \
        --loadmodule "$(pwd)/build/ratelimit.so" "$@"
    local _
    for _ in $(seq 100); do
        pid=$(our_pid redis) && [ "$(cli PING)" = PONG ] && break
        pid=""
        # It wrote its pid file and exited: the module did not load, or the port was taken meanwhile.
        if [ -s "$pidfile" ] && ! running "$(cat "$pidfile")"; then break; fi
        sleep 0.05
    done
    if [ -z "$pid" ]; then
        echo "run-server: redis-server did not start on 127.0.0.1:$port; the end of its log ($logfile):" >&2
        tail -n 5 "$logfile" >&2 2>/dev/null || true
        exit 1
    fi
    local version
    version=$(cli INFO server | tr -d '\r' | sed -n 's/^redis_version://p')
    echo "run-server: redis-server $version on 127.0.0.1:$port (pid $pid), build/ratelimit.so${*:+ $*}"
    echo "run-server: runs in the background, log in $logfile, nothing persisted"
    connect_help
}

stop() {
    local pid _ what
    what=$(server_probe "$port")
    if ! pid=$(our_pid "$what"); then
        case "$what" in
        none) echo "run-server: nothing to stop on 127.0.0.1:$port" ;;
        redis) echo "run-server: 127.0.0.1:$port is not a server that make run started; left alone" ;;
        other)
            echo "run-server: $(server_not_redis "$port");"
            echo "run-server: not a server that make run started; left alone"
            ;;
        esac
        rm -rf "$dir"
        rmdir build/run 2>/dev/null || true
        return 0
    fi
    cli SHUTDOWN NOSAVE >/dev/null || true
    for _ in $(seq 100); do running "$pid" || break; sleep 0.05; done
    if running "$pid"; then
        echo "run-server: redis-server (pid $pid) ignored SHUTDOWN, killing it" >&2
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -rf "$dir"
    rmdir build/run 2>/dev/null || true
    echo "run-server: stopped 127.0.0.1:$port (pid $pid)"
}

case "$action" in
start) start "$@" ;;
stop) stop ;;
*)
    echo "usage: PORT=port $0 start [ARG]... | stop" >&2
    exit 2
    ;;
esac
