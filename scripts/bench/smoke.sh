#!/usr/bin/env bash
# smoke.sh -- the verdict of the smoke run that make test runs (scripts/bench/suite.sh --smoke): the run
# produced every figure, and every baseline decided as its command. It asserts nothing about speed.
#
#   scripts/bench/smoke.sh [--no-memory] [--no-micro] DIR
#
# Checks, into DIR/smoke-checks.txt (apart from DIR/checks.txt, the baseline checks the report counts):
# every row has a number in each run, no failed call and all its calls counted; every RL.* command of the
# module that writes has a row, and the row generator stops, naming the argument, when the value table
# lacks one; every memory kind (one per generated row among them) and micro case was measured (unless left
# out); the report has every cell and the plot. Prints the failures and "bench-smoke: N passed, N failed"
# over both files; exits 1 if any failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
do_memory=1 do_micro=1 OUT=""
for a in "$@"; do
    case "$a" in
    --no-memory) do_memory=0 ;;
    --no-micro) do_micro=0 ;;
    -*) echo "usage: scripts/bench/smoke.sh [--no-memory] [--no-micro] DIR" >&2; exit 2 ;;
    *) OUT=$a ;;
    esac
done
[ -n "$OUT" ] || { echo "usage: scripts/bench/smoke.sh [--no-memory] [--no-micro] DIR" >&2; exit 2; }
CHECKS=$OUT/smoke-checks.txt
TOOLS=${BENCH_TOOLS:-build/bench-tools}
: >"$CHECKS"

check() {
    if [ "$2" -eq 1 ]; then echo "ok   $1" >>"$CHECKS"; else echo "FAIL $1: $3" >>"$CHECKS"; fi
}

# Every figure: a number in each of the runs, no failed call, the calls all counted.
smoke_figures() {
    awk -F'\t' 'NR > 1 {
            ok = $5 + 0 > 0 && $6 != "" && $7 != "" && $8 + 0 > 0 && $10 == 0 && $9 + 0 >= $4 + 0
            printf "%s figure %s -P %s run %s: %s req/s, p50 %s, p99 %s, %s µs/call, %s calls, %s failed\n",
                ok ? "ok  " : "FAIL", $1, $2, $3, $5, $6, $7, $8, $9, $10
        }' "$OUT/raw.tsv" >>"$CHECKS"
}

# Every kind measured (each with a figure and no error), and none missing: every generated row of the run
# (limiter-rows.py again, from the COMMAND DOCS the rows were made from) and every kind memory.sh lists.
smoke_memory() {
    local id missing="" generated expected measured
    tail -n +2 "$OUT/memory.tsv" | while IFS=$'\t' read -r kind _ _ _ bytes status; do
        ok=$(awk -v b="$bytes" -v s="$status" 'BEGIN { print (b + 0 > 0 && s == "ok") ? 1 : 0 }')
        check "memory $kind: $bytes bytes per key" "$ok" "status $status"
    done
    generated=$(scripts/bench/limiter-rows.py --from "$OUT/commands" | cut -f1)
    for id in $generated; do
        awk -F'\t' -v id="$id" 'NR > 1 && $1 == id { found = 1 } END { exit !found }' "$OUT/memory.tsv" || missing+=" $id"
    done
    check "memory: every generated row has a figure ($(wc -w <<<"$generated") rows)" "$([ -z "$missing" ] && echo 1 || echo 0)" \
        "no memory figure for$missing"
    expected=$(scripts/bench/memory.sh --kinds --from "$OUT/commands")
    measured=$(tail -n +2 "$OUT/memory.tsv" | cut -f1)
    check "memory: all $(wc -l <<<"$expected") kinds measured" "$([ "$measured" = "$expected" ] && echo 1 || echo 0)" \
        "memory.tsv has not the kinds of memory.sh --kinds"
}

smoke_micro() {
    local c=0
    tail -n +2 "$OUT/micro.tsv" | while IFS=$'\t' read -r name ns ir; do
        ok=$(awk -v a="$ns" -v b="$ir" 'BEGIN { print (a + 0 > 0 && b + 0 > 0) ? 1 : 0 }')
        check "micro $name: $ns ns, ${ir:-?} instructions" "$ok" "a figure is missing"
    done
    [ "$(tail -n +2 "$OUT/micro.tsv" | wc -l)" -ne "$("$TOOLS/bench-micro" --list | wc -l)" ] || c=1
    check "micro: every case measured" "$c" "see micro.tsv"
}

# The report (already written by scripts/bench/report.sh): every cell filled, and the plot drawn
# (benchmarks.png is there only if gnuplot succeeded).
smoke_report() {
    local missing
    missing=$(grep -c -E '\| n/a \|' "$OUT/results.md" || true)
    check "report: every table cell filled" "$([ "$missing" -eq 0 ] && echo 1 || echo 0)" "$missing rows with n/a in $OUT/results.md"
    if command -v gnuplot >/dev/null; then
        check "plot drawn" "$([ -s "$OUT/benchmarks.png" ] && echo 1 || echo 0)" "see $OUT/gnuplot.log"
    else
        echo "skip plot: gnuplot is not installed (Debian package gnuplot-nox)" >>"$CHECKS"
    fi
}

# The rows: every module command that writes, but those the value table names with - (a subcommand,
# RL.POLICY|SET, goes with its command), has one (read from the COMMAND INFO the rows were made from); and
# the generator refuses a table without a value the commands need, naming it.
smoke_rows() {
    local commands missing="" c out rc=0 table
    commands=$(python3 -c 'import json, sys; print("\n".join(e[0] for e in json.load(open(sys.argv[1])) if "readonly" not in e[2]))' \
        "$OUT/commands/command-info.json")
    for c in $commands; do
        grep -qxF "${c%%|*} -" <(awk '{ print $1, $2 }' scripts/bench/values.txt) && continue
        awk -F'\t' -v c="$c" 'NR > 1 && $4 == c { found = 1 } END { exit !found }' "$OUT/figures.tsv" || missing+=" $c"
    done
    check "rows: every module command that writes has a row" "$([ -z "$missing" ] && echo 1 || echo 0)" "no row for$missing"
    table=$(mktemp)
    grep -v '^permits_per_second ' scripts/bench/values.txt >"$table"
    out=$(scripts/bench/limiter-rows.py --from "$OUT/commands" --values "$table" 2>&1) || rc=$?
    rm -f "$table"
    check "rows: the generator stops on an argument the table lacks" \
        "$([ "$rc" -ne 0 ] && [[ "$out" == *"no benchmark value for argument permits_per_second of rl.smooth"* ]] && echo 1 || echo 0)" \
        "exit $rc: $out"
}

smoke_figures
smoke_rows
[ "$do_memory" -eq 0 ] || smoke_memory
[ "$do_micro" -eq 0 ] || smoke_micro
smoke_report
cat "$OUT/checks.txt" "$CHECKS" | grep -E '^FAIL' || true
passed=$(cat "$OUT/checks.txt" "$CHECKS" | grep -c '^ok' || true)
failed=$(cat "$OUT/checks.txt" "$CHECKS" | grep -c '^FAIL' || true)
echo "bench-smoke: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
