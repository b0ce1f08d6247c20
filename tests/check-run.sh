#!/usr/bin/env bash
# Checks `make run` and `make stop` (scripts/run-server.sh) on free ports, and the README's redis-cli
# session: `make stop` with nothing running; `make run` starts one redis-server with the module on
# 127.0.0.1:PORT in the background, says how to connect and stop, and a second `make run` starts nothing;
# `make stop` stops exactly that server and leaves nothing behind; a port held by another server is
# refused by `make run` and that server is left alone by `make stop`; a port held by a listener that
# accepts connections and never answers (or answers, but not as Redis) is refused by `make run` and
# scripts/cluster.sh start, and left alone by `make stop` and `make cluster-stop`, each with a message
# naming the port instead of a hang; `make run RUN_ARGS=test-clock` prints exactly what README.md shows.
# All of it offline: apt, curl and wget are replaced by stubs that record any call, and the test-only
# packages are made to look missing, which `make run` must not mind.
# Prints "run: N passed, N failed"; stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
# shellcheck source=scripts/lib/server.sh
. scripts/lib/server.sh

# A make of our own, not the jobserver of the `make test` that runs us.
unset MAKEFLAGS MFLAGS MAKELEVEL RUN_ARGS PORT

# shellcheck source=tests/lib/check.sh
CHECK_SUITE=run
. tests/lib/check.sh

# --- Stubs: no network, and the test-only packages look missing. ---------------------------------------
stubs=$(mktemp -d "${TMPDIR:-/tmp}/rl-check-run-XXXXXX")
scratch=$(mktemp -d "${TMPDIR:-/tmp}/rl-check-run-tmp-XXXXXX")
calls=$stubs/calls.log
: >"$calls"
for tool in apt-get apt-cache apt curl wget; do
    printf '#!/bin/sh\necho "%s $*" >>"%s"\nexit 1\n' "$tool" "$calls" >"$stubs/$tool"
    chmod +x "$stubs/$tool"
done
real_dpkg_query=$(command -v dpkg-query)
cat >"$stubs/dpkg-query" <<EOF
#!/bin/sh
# dpkg-query, except that the packages only the tests and benchmarks need look not installed.
for a in "\$@"; do
    case "\$a" in libhiredis-dev|clang|libclang-rt-dev|valgrind|docker-compose|gnuplot-nox) exit 1 ;; esac
done
exec "$real_dpkg_query" "\$@"
EOF
chmod +x "$stubs/dpkg-query"

# make TARGET [VAR=value]...: output in $out, exit status in $rc. TMPDIR is a scratch directory that must
# stay empty.
out="" rc=0
run_make() {
    rc=0
    out=$(PATH="$stubs:$PATH" TMPDIR="$scratch" make -s --no-print-directory -C "$root" "$@" 2>&1) || rc=$?
}
# The same under timeout(1), for what could hang: rc is 124 if it had not returned after 60 s.
run_bounded() {
    rc=0
    out=$(PATH="$stubs:$PATH" TMPDIR="$scratch" timeout 60 "$@" 2>&1) || rc=$?
}

port="" other_port="" listener_pid="" listener_port=""
cleanup() {
    [ -z "$port" ] || PATH="$stubs:$PATH" make -s --no-print-directory -C "$root" stop PORT="$port" >/dev/null 2>&1 || true
    server_stop
    if [ -n "$listener_pid" ]; then
        kill "$listener_pid" 2>/dev/null || true
        wait "$listener_pid" 2>/dev/null || true
    fi
    [ -z "$listener_port" ] || scripts/cluster.sh stop "$listener_port" >/dev/null 2>&1 || true
    rm -rf "$stubs" "$scratch"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

pick() {
    local p _
    for _ in $(seq 20); do
        p=$(server_pick_port) && [ ! -e "build/run/$p" ] && { echo "$p"; return 0; }
    done
    return 1
}
port=$(pick) || check_abort "no free port"
cli() { redis-cli -h 127.0.0.1 -p "$port" "$@" 2>/dev/null; }

# --- make stop with nothing running. ----------------------------------------------------------------------
run_make stop PORT="$port"
check "make stop with nothing running exits 0 (got $rc: $out)" test "$rc" -eq 0
check "make stop with nothing running says so (got: $out)" contains "$out" "nothing to stop on 127.0.0.1:$port"

# --- make run. --------------------------------------------------------------------------------------------
# A port free when picked may be taken before the server binds it (a client's socket, on a shared
# machine): then make run is tried on another one, as server_start does. Its own checks are below.
for _ in 1 2 3 4 5; do
    run_make run PORT="$port"
    [ "$rc" -ne 0 ] && [[ "$out" == *"Address already in use"* ]] || break
    rm -rf "build/run/$port"
    port=$(pick) || break
done
pidfile=build/run/$port/redis.pid
check "make run exits 0 (got $rc: $out)" test "$rc" -eq 0
check "make run prints host:port (got: $out)" contains "$out" "127.0.0.1:$port"
check "make run prints how to connect (got: $out)" contains "$out" "redis-cli -p $port"
check "make run prints how to stop (got: $out)" contains "$out" "make stop PORT=$port"
check "the server answers PING" test "$(cli PING)" = PONG
pid=$(cat "$pidfile" 2>/dev/null || true)
check "the server on the port is the one in $pidfile (pid '$pid')" \
    test -n "$pid" -a "$(cli INFO server | tr -d '\r' | sed -n 's/^process_id://p')" = "$pid"
check "the module is loaded, without arguments" test "$(cli MODULE LIST | tr '\n' ' ')" = \
    "name ratelimit ver 10500 path $root/build/ratelimit.so args  "
check "it listens on 127.0.0.1 only" test "$(cli CONFIG GET bind | sed -n 2p)" = 127.0.0.1
check "it persists nothing" test "$(cli CONFIG GET save | sed -n 2p)/$(cli CONFIG GET appendonly | sed -n 2p)" = "/no"
check "its working directory is build/run/$port" test "$(cli CONFIG GET dir | sed -n 2p)" = "$root/build/run/$port"
check "RL.TOKEN answers" test "$(cli RL.TOKEN k 10 5 1000 | head -n 3 | tr '\n' ' ')" = "1 10 9 "

run_make run PORT="$port"
check "a second make run exits 0 (got $rc: $out)" test "$rc" -eq 0
check "a second make run says it already runs (got: $out)" contains "$out" "already running on 127.0.0.1:$port (pid $pid"
check "a second make run starts no second server" test "$(cli INFO server | tr -d '\r' | sed -n 's/^process_id://p')" = "$pid"

# --- make stop. -------------------------------------------------------------------------------------------
run_make stop PORT="$port"
check "make stop exits 0 (got $rc: $out)" test "$rc" -eq 0
check "make stop says what it stopped (got: $out)" contains "$out" "stopped 127.0.0.1:$port (pid $pid)"
# Gone, or a zombie that its new parent has yet to reap (a daemon's parent is init, or a subreaper).
gone=1
[[ "$(ps -o stat= -p "$pid" 2>/dev/null)" == [^Z]* ]] && gone=0
check "the server (pid $pid) is gone" test "$gone" -eq 1
check "nothing answers on the port" test -z "$(cli PING)"
check "build/run/$port is removed" test ! -e "build/run/$port"

# --- A port held by another server. -----------------------------------------------------------------------
# shellcheck disable=SC2119 # no extra server arguments
if server_start; then
    other_port=$SERVER_PORT
    run_make run PORT="$other_port"
    check "make run on a port in use fails (got $rc)" test "$rc" -ne 0
    check "make run on a port in use says so (got: $out)" contains "$out" "something else already listens on 127.0.0.1:$other_port"
    check "make run on a port in use starts nothing" test ! -e "build/run/$other_port/redis.pid"
    run_make stop PORT="$other_port"
    check "make stop on another server's port exits 0 (got $rc: $out)" test "$rc" -eq 0
    check "make stop on another server's port says it leaves it alone (got: $out)" contains "$out" "left alone"
    check "the other server still runs" test "$(server_cli INFO server | tr -d '\r' | sed -n 's/^process_id://p')" = "$SERVER_PID"
    server_stop
else
    check "start a server of another kind (scripts/lib/server.sh)" false
fi

# --- A port held by a listener that does not answer as Redis. ---------------------------------------------
# listener KIND: a python3 socket on a free port, $listener_port, that accepts connections and then never
# answers (KIND silent: the issue's case, which used to hang make run in redis-cli), or answers like a web
# server (KIND http). Its pid in $listener_pid; it writes the port to a file once it listens.
listener() {
    local kind=$1 ready=$stubs/listener.port _
    for _ in 1 2 3 4 5; do
        rm -f "$ready"
        listener_port=$(pick) || return 1
        python3 -c '
import os, socket, sys
port, kind, ready = int(sys.argv[1]), sys.argv[2], sys.argv[3]
s = socket.socket()
s.bind(("127.0.0.1", port))
s.listen(64)
with open(ready + ".tmp", "w") as f:
    f.write(str(port))
os.rename(ready + ".tmp", ready)
held = []
while True:
    conn, _ = s.accept()
    held.append(conn)  # kept open, never closed
    if kind == "http":
        conn.recv(4096)
        conn.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\n")
' "$listener_port" "$kind" "$ready" 2>"$stubs/listener.err" &
        listener_pid=$!
        for _ in $(seq 100); do
            [ -s "$ready" ] && return 0
            kill -0 "$listener_pid" 2>/dev/null || break
            sleep 0.05
        done
        kill "$listener_pid" 2>/dev/null || true
        wait "$listener_pid" 2>/dev/null || true
        listener_pid=""
    done
    return 1
}
stop_listener() {
    kill "$listener_pid" 2>/dev/null || true
    wait "$listener_pid" 2>/dev/null || true
    listener_pid="" listener_port=""
}
listener_alive() { kill -0 "$listener_pid" 2>/dev/null; }

for kind in silent http; do
    if ! listener "$kind"; then
        check "start a $kind listener (python3: $(tail -n 1 "$stubs/listener.err" 2>/dev/null))" false
        continue
    fi
    lp=$listener_port
    not_redis="something on port $lp accepts connections but does not answer as Redis"

    run_bounded make -s --no-print-directory -C "$root" run PORT="$lp"
    check "$kind listener: make run returns (got $rc: $out)" test "$rc" -ne 124
    check "$kind listener: make run fails (got $rc)" test "$rc" -ne 0
    check "$kind listener: make run names the port (got: $out)" contains "$out" "$not_redis: pick another port"
    check "$kind listener: make run starts nothing" test ! -e "build/run/$lp/redis.pid"
    check "$kind listener: make run leaves the listener alone" listener_alive

    run_bounded make -s --no-print-directory -C "$root" stop PORT="$lp"
    check "$kind listener: make stop returns (got $rc: $out)" test "$rc" -ne 124
    check "$kind listener: make stop exits 0 (got $rc)" test "$rc" -eq 0
    check "$kind listener: make stop names the port (got: $out)" contains "$out" "$not_redis"
    check "$kind listener: make stop says it leaves it alone (got: $out)" contains "$out" "left alone"
    check "$kind listener: make stop leaves the listener alone" listener_alive

    # The script itself: make cluster first installs the test tools, which the stubs refuse.
    run_bounded scripts/cluster.sh start "$lp"
    check "$kind listener: cluster.sh start returns (got $rc: $out)" test "$rc" -ne 124
    check "$kind listener: cluster.sh start fails (got $rc)" test "$rc" -ne 0
    check "$kind listener: cluster.sh start names the port (got: $out)" contains "$out" "$not_redis: pick another port"
    check "$kind listener: cluster.sh start starts nothing" test ! -e "build/cluster-$lp"
    run_bounded make -s --no-print-directory -C "$root" cluster-status CLUSTER_PORT="$lp"
    check "$kind listener: make cluster-status returns (got $rc: $out)" test "$rc" -ne 124
    check "$kind listener: make cluster-status fails (got $rc)" test "$rc" -ne 0
    check "$kind listener: make cluster-status names the port (got: $out)" contains "$out" "127.0.0.1:$lp  $not_redis"
    run_bounded make -s --no-print-directory -C "$root" cluster-stop CLUSTER_PORT="$lp"
    check "$kind listener: make cluster-stop returns (got $rc: $out)" test "$rc" -ne 124
    check "$kind listener: make cluster-stop exits 0 (got $rc)" test "$rc" -eq 0
    check "$kind listener: make cluster-stop says it leaves it alone (got: $out)" contains "$out" \
        "127.0.0.1:$lp is not a node this script started; left alone"
    check "$kind listener: make cluster-stop leaves the listener alone" listener_alive
    stop_listener
done

# --- The README's session, with the test clock. ----------------------------------------------------------
# In the "Thirty seconds" section: "    $ redis-cli ARGS  # comment" lines, each followed by its output
# lines; a "  # ..." comment at the end of a line is not part of it.
session=$(awk '/^## / { on = ($0 ~ /^## Thirty seconds/) } on && /^    / { sub(/^    /, ""); print }' README.md |
    sed -E 's/[[:space:]]+#.*$//')
run_make run PORT="$port" RUN_ARGS=test-clock
check "make run RUN_ARGS=test-clock exits 0 (got $rc: $out)" test "$rc" -eq 0
check "the module got test-clock" contains "$(cli MODULE LIST | tr '\n' ' ')" "args test-clock"
ncmd=0
# shellcheck disable=SC2317 # called by transcript_each
compare() { # compare ARGS EXPECTED
    local args=$1 expected=$2 got
    # shellcheck disable=SC2086 # the README's arguments are plain words
    got=$(redis-cli --no-raw -h 127.0.0.1 -p "$port" $args 2>&1)
    check "README: redis-cli $args prints what README.md shows (got: $(tr '\n' ' ' <<<"$got"))" test "$got" = "$expected"
    ncmd=$((ncmd + 1))
}
transcript_each '$ redis-cli ' compare <<<"$session"
check "README's session has 5 redis-cli calls (found $ncmd)" test "$ncmd" -eq 5
run_make stop PORT="$port"
check "make stop after the README session exits 0 (got $rc: $out)" test "$rc" -eq 0
port=""

# --- Offline and tidy. ------------------------------------------------------------------------------------
check "no apt, curl or wget call (got: $(tr '\n' ';' <"$calls"))" test ! -s "$calls"
left=$(find "$scratch" -mindepth 1 | tr '\n' ' ')
check "nothing left in TMPDIR (found: $left)" test -z "$left"

check_summary
