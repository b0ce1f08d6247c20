#!/usr/bin/env bash
# micro.sh -- the algorithms alone (scripts/bench/bench-micro.c: each algorithm's decide through the
# rl_algorithm table, no Redis): nanoseconds per decision, and instructions per decision under callgrind
# (collecting only inside the timed loop, run_loop, one dump per case), when valgrind is installed.
#
#   scripts/bench/micro.sh DIR
#
# Reads the counts from DIR/settings.txt (micro_decisions per case; callgrind_decisions under callgrind);
# writes DIR/micro-ns.txt (bench-micro's own output) and DIR/micro.tsv (case, ns_per_decision,
# instructions_per_decision). bench-micro is BENCH_TOOLS/bench-micro (scripts/bench/tools.sh builds it).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: scripts/bench/micro.sh DIR}
MICRO=${BENCH_TOOLS:-build/bench-tools}/bench-micro
setting() { sed -n "s/^$1=//p" "$OUT/settings.txt"; }
MICRO_N=$(setting micro_decisions)
CALLGRIND_N=$(setting callgrind_decisions)

work=$(mktemp -d) # callgrind's output
trap 'rm -rf "$work"' EXIT
echo "bench: micro-benchmark: $MICRO_N decisions per case; callgrind: $CALLGRIND_N" >&2
"$MICRO" --decisions "$MICRO_N" >"$OUT/micro-ns.txt"
if command -v valgrind >/dev/null; then
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=run_loop --dump-after=run_loop \
        --callgrind-out-file="$work/cg.out" "$MICRO" --decisions "$CALLGRIND_N" --repeat 1 \
        >/dev/null 2>"$work/callgrind.log" || true
fi
{
    printf 'case\tns_per_decision\tinstructions_per_decision\n'
    i=0
    while read -r name ns _; do
        i=$((i + 1))
        ir=""
        [ -f "$work/cg.out.$i" ] && ir=$(awk -v n="$CALLGRIND_N" '/^totals:/ { printf "%.0f", $2 / n }' "$work/cg.out.$i")
        printf '%s\t%s\t%s\n' "$name" "${ns#ns=}" "$ir"
    done <"$OUT/micro-ns.txt"
} >"$OUT/micro.tsv"
