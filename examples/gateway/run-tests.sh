#!/usr/bin/env bash
# The gateway's tests: real nginx processes (examples/gateway/gateway.sh: their own prefix under
# build/gateway-test, free loopback ports, stopped by pid) in front of a tiny nginx upstream, sharing one
# real redis-server with the module. Three phases of test_gateway.py (see there): exact counts and
# headers at a frozen clock, then a short real-clock load at both gateways, then their access logs; and
# one more (agree): the Lua, Python and Node header mappings give the same headers on the same replies.
# Prints "gateway: N passed, N failed" (the phases' sums).
set -u
cd "$(dirname "$0")/../.." || exit 2
PYTHON=${RL_PYTHON:-/usr/bin/python3}
GATEWAY_DIR=build/gateway-test
. scripts/lib/server.sh
. examples/gateway/gateway.sh
trap 'gateway_stop_all; server_stop' EXIT
test_py=examples/gateway/test_gateway.py
gw=examples/gateway/nginx-gateway.conf.in
passed=0 failed=0

# run_phase ARGS...: runs one phase, adds its counts.
run_phase() {
    local out line
    out=$(RL_REDIS_PORT=$SERVER_PORT "$PYTHON" "$test_py" "$@" 2>&1)
    printf '%s\n' "$out" | grep -v -E '^gateway-[a-z]+: [0-9]+ passed'
    line=$(printf '%s\n' "$out" | grep -E '^gateway-[a-z]+: [0-9]+ passed, [0-9]+ failed$' | tail -n 1)
    if [ -z "$line" ]; then failed=$((failed + 1)); echo "FAIL gateway: phase $1 printed no counts"; return; fi
    passed=$((passed + $(sed -E 's/.*: ([0-9]+) passed.*/\1/' <<<"$line")))
    failed=$((failed + $(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"$line")))
}

# start_pair LIMIT WINDOW_MS: gateways gw1, gw2 on the shared Redis; sets P1, P2.
start_pair() {
    gateway_start gw1 "$gw" "REDIS_PORT=$SERVER_PORT" "UPSTREAM_PORT=$UP" "LIMIT=$1" "WINDOW_MS=$2" || exit 2
    P1=$GW_PORT
    gateway_start gw2 "$gw" "REDIS_PORT=$SERVER_PORT" "UPSTREAM_PORT=$UP" "LIMIT=$1" "WINDOW_MS=$2" || exit 2
    P2=$GW_PORT
}

server_start --module-arg test-clock || exit 2
gateway_start upstream examples/gateway/nginx-upstream.conf.in || exit 2
UP=$GW_PORT

# Phase 1: frozen clock, 45 s before a minute ends.
server_cli RL.CLOCK SET $(( (1700000000000 / 60000 + 1) * 60000 + 15000 )) >/dev/null
start_pair 50 60000
gateway_start dead "$gw" REDIS_PORT=1 "UPSTREAM_PORT=$UP" LIMIT=50 WINDOW_MS=60000 || exit 2
run_phase exact "$P1" "$P2" "$GW_PORT"
gateway_start selftest examples/gateway/nginx-selftest.conf.in || exit 2
run_phase agree "$GW_PORT"
gateway_stop_all

# Phase 2: real clock, 20 per second, then the logs once the gateways have stopped.
server_cli RL.CLOCK REAL >/dev/null
server_cli FLUSHALL >/dev/null
gateway_start upstream examples/gateway/nginx-upstream.conf.in || exit 2
UP=$GW_PORT
start_pair 20 1000
run_phase load "$P1" "$P2" "$GATEWAY_DIR/counts.json"
gateway_stop_all
run_phase logs "$GATEWAY_DIR/gw1/access.log" "$GATEWAY_DIR/gw2/access.log" "$GATEWAY_DIR/counts.json"

echo "gateway: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
