#!/usr/bin/env bash
# `make demo`: one redis-server with the module, and three pairs of rate-limited HTTP servers sharing it,
# each pair under real HTTP load from wrk, one pair after the other:
#   nginx    two nginx gateways (examples/gateway) in front of a tiny nginx upstream
#   flask    two processes of the Flask example app (clients/python/example_app.py)
#   express  two processes of the Express example app (clients/node/example/app.js)
# Every pair shares one budget: RL.WINDOW FIXED, LIMIT requests per 1 s window for one API key. Load:
# the first server of a pair for the whole run, the second from a quarter to three quarters of it, so
# the plot shows one server taking the whole budget alone, then both sharing it. For each pair it prints
# examples/demo/report.py's table (requests, 200s, 429s, admitted per window against the limit, p50/p99
# of the limiter check) and plots admitted per window per server (build/demo/demo.png, gnuplot).
#
# Environment: DEMO_SECONDS (load on the gateways, default 20; the app pairs get half), DEMO_LIMIT
# (gateways, default 200), DEMO_APP_LIMIT (apps, default 100), DEMO_CONNECTIONS (wrk connections per
# server, default 16), DEMO_PNG (where the plot goes, default build/demo/demo.png). Everything listens on
# 127.0.0.1 only and is stopped by pid at the end.
set -u
cd "$(dirname "$0")/../.." || exit 2
SECONDS_NGINX=${DEMO_SECONDS:-20}
SECONDS_APPS=$(( (SECONDS_NGINX + 1) / 2 ))
LIMIT=${DEMO_LIMIT:-200}
APP_LIMIT=${DEMO_APP_LIMIT:-100}
CONNS=${DEMO_CONNECTIONS:-16}
PYTHON=${RL_PYTHON:-/usr/bin/python3}
OUT=build/demo
PNG=${DEMO_PNG:-$OUT/demo.png}
GATEWAY_DIR=$OUT/nginx

. scripts/lib/server.sh
. examples/gateway/gateway.sh
APP_PIDS=()
cleanup() {
    local pid
    for pid in "${APP_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
    gateway_stop_all
    server_stop
}
trap cleanup EXIT
rm -rf "$OUT"
mkdir -p "$OUT"

# app_start NAME COMMAND...: an example app that prints "listening PORT"; sets APP_PORT.
app_start() {
    local name=$1 _
    shift
    "$@" >"$OUT/$name.out" 2>"$OUT/$name.err" &
    APP_PIDS+=($!)
    for _ in $(seq 100); do
        APP_PORT=$(sed -n 's/^listening //p' "$OUT/$name.out")
        [ -z "$APP_PORT" ] || return 0
        kill -0 "${APP_PIDS[-1]}" 2>/dev/null || break
        sleep 0.1
    done
    echo "demo: $name did not start:" >&2
    cat "$OUT/$name.err" >&2
    return 1
}

apps_stop() {
    local pid
    for pid in "${APP_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
    APP_PIDS=()
}

# drive NAME PORT1 PORT2 SECONDS KEY: wrk at PORT1 for SECONDS, at PORT2 for the middle half, at once.
drive() {
    local name=$1 p1=$2 p2=$3 secs=$4 key=$5 quarter=$(($4 / 4))
    echo "$name: load for ${secs} s: ${name}1 all along, ${name}2 from ${quarter} s to $((quarter + secs / 2)) s ($CONNS connections each)"
    wrk -t1 -c"$CONNS" -d"${secs}s" -H "X-API-Key: $key" "http://127.0.0.1:$p1/" >"$OUT/${name}1.wrk" &
    local w1=$!
    (sleep "$quarter" && exec wrk -t1 -c"$CONNS" -d"$((secs / 2))s" -H "X-API-Key: $key" "http://127.0.0.1:$p2/") \
        >"$OUT/${name}2.wrk" &
    local w2=$!
    wait "$w1" "$w2"
}

# report NAME TITLE LIMIT LOG1 LOG2: the table, and the series for the plot.
report() {
    echo
    "$PYTHON" examples/demo/report.py --limit "$3" --window-ms 1000 --title "$2" --series "$OUT/$1.dat" \
        "${1}1=$4" "${1}2=$5" || echo "demo: $2: SOME WINDOW ADMITTED MORE THAN THE LIMIT"
    echo
}

run_nginx() {
    gateway_start upstream examples/gateway/nginx-upstream.conf.in || return 1
    local up=$GW_PORT p1 p2
    gateway_start gw1 examples/gateway/nginx-gateway.conf.in "REDIS_PORT=$SERVER_PORT" "UPSTREAM_PORT=$up" \
        "LIMIT=$LIMIT" WINDOW_MS=1000 || return 1
    p1=$GW_PORT
    gateway_start gw2 examples/gateway/nginx-gateway.conf.in "REDIS_PORT=$SERVER_PORT" "UPSTREAM_PORT=$up" \
        "LIMIT=$LIMIT" WINDOW_MS=1000 || return 1
    p2=$GW_PORT
    drive gw "$p1" "$p2" "$SECONDS_NGINX" demo-nginx
    gateway_stop_all
    report gw "nginx gateways (lua, cosocket RESP)" "$LIMIT" "$GATEWAY_DIR/gw1/access.log" "$GATEWAY_DIR/gw2/access.log"
}

# run_app NAME TITLE COMMAND...: two processes of an example app, then the load and the report.
run_app() {
    local name=$1 title=$2 p1 p2
    shift 2
    local args=(--redis-port "$SERVER_PORT" --port 0 --policy "default=window:$APP_LIMIT:1000:fixed")
    app_start "${name}1" "$@" "${args[@]}" --log "$OUT/${name}1.log" || return 1
    p1=$APP_PORT
    app_start "${name}2" "$@" "${args[@]}" --log "$OUT/${name}2.log" || return 1
    p2=$APP_PORT
    drive "$name" "$p1" "$p2" "$SECONDS_APPS" "demo-$name"
    apps_stop
    report "$name" "$title" "$APP_LIMIT" "$OUT/${name}1.log" "$OUT/${name}2.log"
}

plot() {
    gnuplot -e "outfile='$PNG'; dir='$OUT'; limit=$LIMIT; app_limit=$APP_LIMIT" examples/demo/plot.gp &&
        echo "plot: $PNG"
}

server_start || exit 1
echo "redis-server with the module on 127.0.0.1:$SERVER_PORT"
run_nginx || exit 1
run_app flask "Flask middleware (redis-py)" "$PYTHON" clients/python/example_app.py || exit 1
run_app express "Express middleware (ioredis)" node clients/node/example/app.js || exit 1
plot
