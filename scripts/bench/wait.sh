#!/usr/bin/env bash
# wait.sh -- server-side waiting against a client-side retry loop (docs/benchmarks.md, "Server-side
# waiting"): build scripts/bench/bench-wait.c, start a redis-server with the module (real clock), then
#   1. 1,000 clients against one limit of 100 per second for 10 s, sleeping retry_after_ms between tries;
#   2. the same with WAIT;
#   3. the server's CPU for 10 s with nobody connected, with 10,000 clients blocked in BLPOP (Redis's own
#      blocked clients, the baseline), then with 10,000 clients waiting with WAIT.
# Prints the three result lines and a markdown table.
#
#   scripts/bench/wait.sh [clients [seconds [idle_clients]]]     (defaults 1000 10 10000)
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/server.sh
trap server_stop EXIT

clients=${1:-1000} seconds=${2:-10} idle_clients=${3:-10000}
bin=build/bench-wait
mkdir -p build
${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Wall -Wextra -o "$bin" scripts/bench/bench-wait.c -lhiredis -lpthread
# 10,000 connections: file descriptors for them on both sides.
ulimit -n $((idle_clients + 2000)) 2>/dev/null || { echo "bench-wait: cannot raise the open files limit" >&2; exit 1; }

server_start --maxclients $((idle_clients + 1000)) >/dev/null || exit 1
retry=$("$bin" "$SERVER_PORT" "$SERVER_PID" load retry "$clients" "$seconds")
echo "$retry"
server_stop
server_start --maxclients $((idle_clients + 1000)) >/dev/null || exit 1
wait_line=$("$bin" "$SERVER_PORT" "$SERVER_PID" load wait "$clients" "$seconds")
echo "$wait_line"
idle=$("$bin" "$SERVER_PORT" "$SERVER_PID" idle "$idle_clients" "$seconds")
echo "$idle"

field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"$1"; }
echo
echo "| $clients clients, one limit of 100/s, $seconds s | requests sent | admitted per s | delay p50 | delay p99 | clients never admitted | server CPU |"
echo "|---|---|---|---|---|---|---|"
for line in "$retry" "$wait_line"; do
    name=$([ "${line%% *}" = retry ] && echo "sleep retry_after_ms and retry" || echo "WAIT 15000")
    echo "| $name | $(field "$line" requests) | $(field "$line" admitted_per_s) | $(field "$line" p50_ms) ms | $(field "$line" p99_ms) ms | $(field "$line" never_admitted) | $(field "$line" server_cpu_s) s |"
done
echo
echo "Idle: server CPU over $seconds s: $(field "$idle" server_cpu_s_without) s with nobody connected, $(field "$idle" server_cpu_s_blpop) s with $(field "$idle" blpop_blocked) clients blocked in BLPOP (Redis's own), $(field "$idle" server_cpu_s_with) s with $(field "$idle" waiting) clients waiting with WAIT."
