#!/usr/bin/env bash
# instr.sh -- instructions per call, inside Redis's call(), of each row of the benchmark: a measure of
# server work that load on the machine does not disturb, for comparing two builds of the module.
#
#   scripts/bench/instr.sh [MODULE.so ...]        (default: build/ratelimit.so)
#
# For each module, one redis-server runs under callgrind with collection only inside call() (the command
# itself, its key lookups, replication and reply, but not the networking). The rows are the benchmark's
# generated ones (scripts/bench/limiter-rows.py: every RL.* limiter and mode, RL.ALL's and RL.CHECK's rows,
# with the values of scripts/bench/values.txt, 100 per day), made from the first module's COMMAND DOCS and
# kept for the others (each server first gets what they need: RL.CHECK's policies), then INCR and, when the floor module (build/floor.so, or FLOOR_MODULE; see
# scripts/bench/floor-module.c) exists, FLOOR.CALL: the least a module command costs. Each row runs BENCH_N
# times (default 20000) on BENCH_KEYS (10000) random keys after a warm-up that makes every key; the
# instructions of the measured calls divided by their number is printed per row and module, with each
# module's ratio to the first. BENCH_ONLY="RL.TOKEN all_2 incr": only the rows of these commands or ids.
# Needs valgrind (callgrind_annotate).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -gt 0 ] || set -- build/ratelimit.so
N=${BENCH_N:-20000} KEYS=${BENCH_KEYS:-10000}
REDIS_BENCHMARK=${REDIS_BENCHMARK:-redis-benchmark}
. scripts/lib/server.sh
FLOOR_MODULE=${FLOOR_MODULE:-build/floor.so}
floor_args=()
[ ! -f "$FLOOR_MODULE" ] || floor_args=(--loadmodule "$(realpath "$FLOOR_MODULE")")
value() { awk -v n="$1" '$1 == n { print $2 }' scripts/bench/values.txt; }

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

# rows.tsv (id, label, command line): the generated rows of the first module's server, INCR, FLOOR.CALL
# (with RL.TOKEN's arguments, which it ignores), those of BENCH_ONLY if set.
write_rows() { # write_rows PORT
    {
        scripts/bench/limiter-rows.py --port "$1" --save "$work" --key-prefix i: | cut -f1,2,5
        printf 'incr\tINCR\tINCR ii:__rand_int__\n'
        [ ${#floor_args[@]} -eq 0 ] ||
            printf 'floor\tFLOOR.CALL\tFLOOR.CALL if:__rand_int__ %s %s %s\n' "$(value capacity)" "$(value refill_tokens)" "$(value refill_ms)"
    } | awk -F'\t' -v only=" ${BENCH_ONLY:-} " 'only == "  " || index(only, " " $1 " ") || index(only, " " substr($3, 1, index($3, " ") - 1) " ")' >"$work/rows.tsv"
}

measure_module() { # module -> lines "label<TAB>instructions_per_call"
    local module port label line
    module=$(realpath "$1")
    port=$(server_pick_port || server_pick_port || server_pick_port) # a free port (scripts/lib/server.sh)
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=call --callgrind-out-file="$work/callgrind.out.%p" \
        "$REDIS_SERVER" --port "$port" --bind 127.0.0.1 --dir "$work" --save "" --appendonly no \
        --loadmodule "$module" "${floor_args[@]}" >"$work/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 100); do "$REDIS_CLI" -p "$port" PING >/dev/null 2>&1 && break; sleep 0.2; done
    [ -s "$work/rows.tsv" ] || write_rows "$port"
    scripts/bench/limiter-rows.py --from "$work" --setup "$port" ||
        echo "instr: $1 lacks what the rows need: its RL.CHECK rows measure errors" >&2
    while IFS=$'\t' read -r -u 3 _ label line; do
        # shellcheck disable=SC2086
        "$REDIS_BENCHMARK" -p "$port" -q -n $((KEYS * 3)) -r "$KEYS" -c 10 -P 16 $line >/dev/null # warm-up
        collected >/dev/null # the warm-up's count, dropped
        # shellcheck disable=SC2086
        "$REDIS_BENCHMARK" -p "$port" -q -n "$N" -r "$KEYS" -c 10 -P 16 $line >/dev/null
        printf '%s\t%s\n' "$label" "$(( $(collected) / N ))"
    done 3<"$work/rows.tsv"
    "$REDIS_CLI" -p "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
    wait "$pid" 2>/dev/null || true
    pid=""
    rm -f "$work"/callgrind.out.*
}

declare -A first
printf '%-36s %-32s %12s %8s\n' row module instr/call ratio
for m in "$@"; do
    while IFS=$'\t' read -r name instr; do
        [ -n "${first[$name]:-}" ] || first[$name]=$instr
        printf '%-36s %-32s %12s %8s\n' "$name" "$m" "$instr" \
            "$(awk -v a="$instr" -v b="${first[$name]}" 'BEGIN { printf "%.3f", a / b }')"
    done < <(measure_module "$m")
done
