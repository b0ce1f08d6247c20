#!/usr/bin/env bash
# ab.sh -- A/B throughput of two builds of the module: is a change faster or slower?
#
#   scripts/bench/ab.sh OLD.so NEW.so [REPS]
#
# For each row of the benchmark's generated ones (scripts/bench/limiter-rows.py: every RL.* limiter and
# mode, RL.ALL's and RL.CHECK's rows, with the values of scripts/bench/values.txt, 100 per day, on BENCH_KEYS random
# keys; made from NEW's COMMAND DOCS) and each repetition (REPS, default 5), a fresh server with OLD, then
# one with NEW (so slow drifts of the machine fall on both), gets what the rows need (RL.CHECK's
# policies), is warmed up (every key made) and measured
# with redis-benchmark, pipelined (-P BENCH_PIPELINE, default 16). Prints requests per second of each and
# the median of NEW/OLD per row: a ratio below 1 is a slowdown. BENCH_ONLY="RL.TOKEN all_2": only the rows
# of these commands or ids (all the rows take about a minute per repetition each). Both modules must have
# the same name, so each runs in its own server. Servers start through scripts/lib/server.sh
# (REDIS_SERVER, REDIS_CLI and REDIS_BENCHMARK choose the binaries).
set -euo pipefail
cd "$(dirname "$0")/../.."
old=${1:?usage: scripts/bench/ab.sh OLD.so NEW.so [REPS]}
new=${2:?usage: scripts/bench/ab.sh OLD.so NEW.so [REPS]}
reps=${3:-5}
N=${BENCH_N:-200000} KEYS=${BENCH_KEYS:-100000} CLIENTS=${BENCH_CLIENTS:-50} PIPE=${BENCH_PIPELINE:-16}
REDIS_BENCHMARK=${REDIS_BENCHMARK:-redis-benchmark}
. scripts/lib/server.sh
commands=$(mktemp -d) # NEW's COMMAND DOCS, which the rows and their setup are made from
trap 'server_stop; rm -rf "$commands"' EXIT

# The rows (id, label, command line), from a server with NEW; those of BENCH_ONLY if set.
RL_MODULE=$new server_start >/dev/null || exit 1
rows=$(scripts/bench/limiter-rows.py --port "$SERVER_PORT" --save "$commands" --key-prefix ab: | cut -f1,2,5 |
    awk -F'\t' -v only=" ${BENCH_ONLY:-} " 'only == "  " || index(only, " " $1 " ") || index(only, " " substr($3, 1, index($3, " ") - 1) " ")')
server_stop

# Requests per second of one pipelined run of a command line against the running server.
rps() {
    # shellcheck disable=SC2086
    "$REDIS_BENCHMARK" -p "$SERVER_PORT" -q -n "$1" -r "$KEYS" -c "$CLIENTS" -P "$PIPE" $2 |
        tr '\r' '\n' | awk '/requests per second/ { for (i = 1; i <= NF; i++) if ($(i+1) == "requests") v = $i } END { print v }'
}

measure() { # measure MODULE COMMAND -> requests per second after a warm-up
    RL_MODULE=$1 server_start >/dev/null
    scripts/bench/limiter-rows.py --from "$commands" --setup "$SERVER_PORT" ||
        echo "ab: $1 lacks what the rows need: its RL.CHECK rows measure errors" >&2
    rps $((KEYS * 2)) "$2" >/dev/null
    rps "$N" "$2"
    server_stop
}

printf '%-36s %10s %10s %7s\n' row old_rps new_rps new/old
while IFS=$'\t' read -r -u 3 _ label line; do
    ratios=()
    for ((r = 0; r < reps; r++)); do
        a=$(measure "$old" "$line")
        b=$(measure "$new" "$line")
        ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b / a }')
        ratios+=("$ratio")
        printf '%-36s %10.0f %10.0f %7s\n' "$label" "$a" "$b" "$ratio"
    done
    median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
    printf '%-36s median new/old %s over %d runs\n' "$label" "$median" "$reps"
done 3<<<"$rows"
