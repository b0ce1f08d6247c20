#!/usr/bin/env bash
# bench-instr.sh -- instructions per call, inside Redis's call(), of each RL.* command: a measure of server
# work that load on the machine does not disturb, for comparing two builds of the module.
#
#   scripts/bench/instr.sh [MODULE.so ...]        (default: build/ratelimit.so)
#
# For each module, one redis-server runs under callgrind with collection only inside call() (the command
# itself, its key lookups, replication and reply, but not the networking). Each command runs BENCH_N times
# (default 20000) on BENCH_KEYS random keys with the parameters of scripts/bench/suite.sh (100 per day) after a
# warm-up that makes every key; the instructions of the measured calls divided by their number is printed
# per command and module, with each module's ratio to the first. The floor module (build/floor.so, or
# FLOOR_MODULE; see scripts/bench/floor-module.c) is loaded beside each module when it exists, and FLOOR.CALL is
# measured too: the least a module command costs. Needs valgrind (callgrind_annotate).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -gt 0 ] || set -- build/ratelimit.so
N=${BENCH_N:-20000} KEYS=${BENCH_KEYS:-10000}
REDIS_BENCHMARK=${REDIS_BENCHMARK:-redis-benchmark}
REDIS_CLI=${REDIS_CLI:-redis-cli}
REDIS_SERVER=${REDIS_SERVER:-redis-server}
commands=("RL.TOKEN it:__rand_int__ 100 100 86400000" "RL.LEAKY il:__rand_int__ 100 100 86400000"
          "RL.WINDOW iw:__rand_int__ 100 86400000" "RL.SLIDINGLOG is:__rand_int__ 100 86400000"
          "INCR ii:__rand_int__")
FLOOR_MODULE=${FLOOR_MODULE:-build/floor.so}
floor_args=()
if [ -f "$FLOOR_MODULE" ]; then
    floor_args=(--loadmodule "$(realpath "$FLOOR_MODULE")")
    commands+=("FLOOR.CALL if:__rand_int__ 100 100 86400000")
fi
# BENCH_ONLY="RL.TOKEN INCR": only these commands.
if [ -n "${BENCH_ONLY:-}" ]; then
    only=()
    for c in "${commands[@]}"; do [[ " $BENCH_ONLY " == *" ${c%% *} "* ]] && only+=("$c"); done
    commands=("${only[@]}")
fi

work=$(mktemp -d)
pid=""
cleanup() { [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# Ir collected since the last dump (a dump writes a profile and starts the counts again).
collected() {
    callgrind_control -d "$pid" >/dev/null 2>&1
    local last
    last=$(ls -t "$work"/callgrind.out.* | head -n 1)
    # (awk reads to the end: stopping early would SIGPIPE callgrind_annotate, a failure under pipefail)
    callgrind_annotate "$last" 2>/dev/null | awk '/PROGRAM TOTALS/ && !done { gsub(",", "", $1); print $1; done = 1 }'
}

measure_module() { # module -> lines "command instructions_per_call"
    local module port
    module=$(realpath "$1")
    port=$((30000 + RANDOM % 10000))
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=call --callgrind-out-file="$work/callgrind.out.%p" \
        "$REDIS_SERVER" --port "$port" --bind 127.0.0.1 --dir "$work" --save "" --appendonly no \
        --loadmodule "$module" "${floor_args[@]}" >"$work/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 100); do "$REDIS_CLI" -p "$port" PING >/dev/null 2>&1 && break; sleep 0.2; done
    for c in "${commands[@]}"; do
        # shellcheck disable=SC2086
        "$REDIS_BENCHMARK" -p "$port" -q -n $((KEYS * 3)) -r "$KEYS" -c 10 -P 16 $c >/dev/null # warm-up
        collected >/dev/null # the warm-up's count, dropped
        # shellcheck disable=SC2086
        "$REDIS_BENCHMARK" -p "$port" -q -n "$N" -r "$KEYS" -c 10 -P 16 $c >/dev/null
        echo "${c%% *} $(( $(collected) / N ))"
    done
    "$REDIS_CLI" -p "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
    wait "$pid" 2>/dev/null || true
    pid=""
    rm -f "$work"/callgrind.out.*
}

declare -A first
printf '%-14s %-40s %12s %8s\n' command module instr/call ratio
for m in "$@"; do
    while read -r name instr; do
        [ -n "${first[$name]:-}" ] || first[$name]=$instr
        printf '%-14s %-40s %12s %8s\n' "$name" "$m" "$instr" \
            "$(awk -v a="$instr" -v b="${first[$name]}" 'BEGIN { printf "%.3f", a / b }')"
    done < <(measure_module "$m")
done
