#!/usr/bin/env bash
# The report of a benchmark run (docs/benchmarks.md): reads only the raw figures that scripts/bench/suite.sh
# wrote into its output directory and writes, beside them, summary.tsv (medians and ratios, by
# scripts/bench/summary.awk), results.md (the tables of docs/benchmarks.md) and benchmarks.png (the
# plot, by scripts/bench/plot.sh). scripts/bench/suite.sh runs it at the end of every run; run alone, it
# re-renders an existing run.
#
#   scripts/bench/report.sh [--doc] [--quiet] [DIR]   (DIR: default build/bench)
#
# --doc also replaces the generated part of docs/benchmarks.md (between <!-- bench:begin --> and
# <!-- bench:end -->) with results.md and docs/benchmarks.png with the plot; refused for a smoke run.
# Without --quiet, results.md is printed, and failed baseline checks are repeated on stderr.
#
# Input (all from scripts/bench/suite.sh): settings.txt (the run's counts), figures.tsv (what was measured),
# raw.tsv (every run of every figure), machine.txt, checks.txt (the baseline checks), and when measured
# memory.tsv and micro.tsv.
set -euo pipefail
cd "$(dirname "$0")/../.."

update_doc=0 quiet=0 OUT=""
for a in "$@"; do
    case "$a" in
    --doc) update_doc=1 ;;
    --quiet) quiet=1 ;;
    -*) echo "usage: scripts/bench/report.sh [--doc] [--quiet] [DIR]" >&2; exit 2 ;;
    *) OUT=$a ;;
    esac
done
OUT=${OUT:-build/bench}

log() { echo "bench: $*" >&2; }
fail_hard() { echo "bench: $*" >&2; exit 1; }

for f in settings.txt figures.tsv raw.tsv machine.txt checks.txt; do
    [ -f "$OUT/$f" ] || fail_hard "$OUT/$f is missing: not the output of scripts/bench/suite.sh"
done
summary=$OUT/summary.tsv results=$OUT/results.md checks=$OUT/checks.txt

# key=value files: settings.txt and machine.txt.
setting() { sed -n "s/^$1=//p" "$OUT/settings.txt"; }
machine() { sed -n "s/^$1=//p" "$OUT/machine.txt"; }
N=$(setting requests)
NP=$(setting requests_pipelined)
REPS=$(setting reps)
KEYS=$(setting keys)
CLIENTS=$(setting clients)
PIPE=$(setting pipeline)
MICRO_N=$(setting micro_decisions)
CALLGRIND_N=$(setting callgrind_decisions)
if [ "$update_doc" -eq 1 ] && [ "$(setting mode)" != full ]; then
    fail_hard "--doc needs a full run ($OUT is a $(setting mode) run)"
fi

rm -f "$summary" "$results"
awk -F'\t' -v reps="$REPS" -v pipe="$PIPE" -f scripts/bench/summary.awk "$OUT/raw.tsv" "$OUT/figures.tsv" >"$summary"

# --- lookups and formats -----------------------------------------------------------------------------
fig_field() { awk -F'\t' -v id="$1" -v col="$2" 'NR > 1 && $1 == id { print $col }' "$OUT/figures.tsv"; }
get() { awk -F'\t' -v id="$1" -v p="$2" -v col="$3" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $1 == id && $6 == p { print $c[col] }' "$summary"; }
mget() { [ -f "$OUT/memory.tsv" ] && awk -F'\t' -v k="$1" -v col="$2" '$1 == k { print $col }' "$OUT/memory.tsv"; }
# The id of the baseline (role base) of GROUP.
base_of() { awk -F'\t' -v g="$1" -v p="$2" '$4 == g && $5 == "base" && $6 == p { print $1 }' "$summary"; }
kfmt() { awk -v v="$1" 'BEGIN { if (v == "") print "n/a"; else printf "%.0fk", v / 1000 }'; }
fmt2() { awk -v v="$1" 'BEGIN { if (v == "") print "n/a"; else printf "%.2f", v }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print ""; else printf "%.2f", a / b }'; }
verdict() { # verdict VALUE OP BOUND -> met/missed (OP: >=, <= or <)
    awk -v v="$1" -v op="$2" -v b="$3" 'BEGIN { if (v == "") { print "n/a"; exit }
        ok = op == ">=" ? v + 0 >= b + 0 : op == "<" ? v + 0 < b + 0 : v + 0 <= b + 0; print ok ? "met" : "**missed**" }'
}
krps() { # req/s in thousands, with the spread of the runs
    local v sp
    v=$(kfmt "$(get "$1" "$2" rps)")
    sp=$(get "$1" "$2" rps_spread_pct)
    if [ "$REPS" -gt 1 ] && [ -n "$sp" ] && [ "$v" != n/a ]; then echo "$v ±$sp%"; else echo "$v"; fi
}

# --- results.md --------------------------------------------------------------------------------------
report_head() {
    local w
    echo "Measured $(machine date) on $(machine nproc) CPUs ($(machine cpu)), $(machine kernel), Redis $(machine redis);"
    echo "module build $(machine module) (git $(machine git)). Machine $(machine quiet); 1-minute load $(machine load_start | cut -d' ' -f1) at the start,"
    echo "$(machine load_end | cut -d' ' -f1) after the throughput runs ($(machine throughput_seconds) s)."
    w=$(machine warning)
    [ -z "$w" ] || echo "**Warning: $w.**"
    echo "Baseline checks (each baseline decides as its command): $(grep -c '^ok' "$checks" || true) passed, $(grep -c '^FAIL' "$checks" || true) failed."
}

report_throughput() {
    local id label tool group role p vs_base vr name
    echo "Throughput: $CLIENTS connections, random keys over $KEYS keys, $N requests per run without pipelining and $NP with"
    echo "(-P $PIPE); each figure is the median of $REPS runs, taken round-robin over all figures (± half the range of"
    echo "the runs). Ratios are to INCR and to the floor module (FLOOR.CALL) measured by the same tool in the same"
    echo "run. Latencies in ms."
    echo
    echo "| command | tool | req/s | vs INCR | vs floor | p50 | p99 | req/s -P $PIPE | vs INCR | vs floor | p50 | p99 | vs baseline -P $PIPE |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    while IFS=$'\t' read -r id label tool group role p _; do
        [ "$p" = 1 ] || continue
        vs_base=""
        if [ "$role" = rl ]; then
            vr=$(ratio "$(get "$id" "$PIPE" rps)" "$(get "$(base_of "$group" "$PIPE")" "$PIPE" rps)")
            [ -z "$vr" ] || vs_base="**${vr}x**"
        fi
        name=$label
        case "$role" in
        base | calib | luamode) ;;
        floor) name="floor module (\`FLOOR.CALL\`)" ;;
        *) name="\`${label% (bench-multi)}\`" ;;
        esac
        echo "| $name | $([ "$tool" = rb ] && echo redis-benchmark || echo bench-multi) | $(krps "$id" 1) | $(fmt2 "$(get "$id" 1 rps_vs_incr)") | $(fmt2 "$(get "$id" 1 rps_vs_floor)") | $(get "$id" 1 p50_ms) | $(get "$id" 1 p99_ms) | $(krps "$id" "$PIPE") | $(fmt2 "$(get "$id" "$PIPE" rps_vs_incr)") | $(fmt2 "$(get "$id" "$PIPE" rps_vs_floor)") | $(get "$id" "$PIPE" p50_ms) | $(get "$id" "$PIPE" p99_ms) | $vs_base |"
    done < <(tail -n +2 "$summary")
}

report_inserver() {
    local id label p
    echo "In-server time per request (INFO commandstats usec_per_call, median of the runs; for a Lua baseline"
    echo "EVALSHA's, which includes the commands it calls; for ClassDojo's MULTI and EXEC together; ratios to INCR"
    echo "and to the floor module measured by the same tool):"
    echo
    echo "| command | µs per call | vs INCR | vs floor | µs per call -P $PIPE | vs INCR | vs floor |"
    echo "|---|---|---|---|---|---|---|"
    while IFS=$'\t' read -r id label _ _ _ p _; do
        [ "$p" = 1 ] || continue
        echo "| $label | $(get "$id" 1 usec_per_call) | $(fmt2 "$(get "$id" 1 usec_vs_incr)") | $(fmt2 "$(get "$id" 1 usec_vs_floor)") | $(get "$id" "$PIPE" usec_per_call) | $(fmt2 "$(get "$id" "$PIPE" usec_vs_incr)") | $(fmt2 "$(get "$id" "$PIPE" usec_vs_floor)") |"
    done < <(tail -n +2 "$summary")
}

# The client packages' Lua mode (clients/lua/ratelimit.lua, role luamode) beside the module's row of its group:
# what loading the module gains, as ratios measured in the same run by the same tool.
rl_of() { awk -F'\t' -v g="$1" -v p="$2" '$4 == g && $5 == "rl" && $6 == p { print $1; exit }' "$summary"; }
report_luamode() {
    local id label group role p mod
    echo "The Lua mode (the client packages' mode=\"lua\", for servers without the module) beside the module: the"
    echo "same limiter and arguments, each module figure over the script's (throughput: how many times faster the"
    echo "module is; in-server time: how many times less of it the module takes):"
    echo
    echo "| limiter | module req/s | script req/s | module / script | module req/s -P $PIPE | script req/s -P $PIPE | module / script -P $PIPE | in-server time -P $PIPE: script / module |"
    echo "|---|---|---|---|---|---|---|---|"
    while IFS=$'\t' read -r id label _ group role p _; do
        [ "$p" = 1 ] && [ "$role" = luamode ] || continue
        mod=$(rl_of "$group" 1)
        [ -n "$mod" ] || continue
        echo "| \`RL.$group\` | $(krps "$mod" 1) | $(krps "$id" 1) | **$(fmt2 "$(ratio "$(get "$mod" 1 rps)" "$(get "$id" 1 rps)")")x** | $(krps "$mod" "$PIPE") | $(krps "$id" "$PIPE") | **$(fmt2 "$(ratio "$(get "$mod" "$PIPE" rps)" "$(get "$id" "$PIPE" rps)")")x** | $(fmt2 "$(ratio "$(get "$id" "$PIPE" usec_per_call)" "$(get "$mod" "$PIPE" usec_per_call)")")x |"
    done < <(tail -n +2 "$summary")
}

report_memory() {
    local floor_mem
    echo "Memory per key: used_memory after making the keys minus before, over the number of keys (FLUSHALL"
    echo "between kinds; key names of 16 bytes, all with a TTL; sorted-set logs full). Every throughput row of the"
    echo "module's commands has one here, one call per key; an RL.ALL call makes a key per clause: their average."
    echo
    echo "| key | keys | entries per key | bytes per key | vs INCR + TTL |"
    echo "|---|---|---|---|---|"
    floor_mem=$(mget incr_ttl 5)
    tail -n +2 "$OUT/memory.tsv" | while IFS=$'\t' read -r _ label n entries bytes status; do
        note=""
        [ "$status" = ok ] || note=" ($status)"
        echo "| $label$note | $n | $entries | $bytes | $(fmt2 "$(ratio "$bytes" "$floor_mem")") |"
    done
}

report_micro() {
    echo "The algorithms alone (scripts/bench/bench-micro.c, $MICRO_N decisions per case over 65536 cells, best of 3;"
    echo "instructions under callgrind over $CALLGRIND_N decisions; the sliding log decided over full logs):"
    echo
    echo "| case | ns per decision | instructions per decision |"
    echo "|---|---|---|"
    tail -n +2 "$OUT/micro.tsv" | while IFS=$'\t' read -r name ns ir; do echo "| $name | $ns | ${ir:-n/a} |"; done
}

# The targets (issue 17): against the floor module (the least any module command costs), against INCR
# without pipelining (where the round trip dominates), and against the baselines.
report_targets_of() {
    local id=$1 label base v
    label=$(fig_field "$id" 2)
    base=$(base_of "$(fig_field "$id" 5)" "$PIPE")
    v=$(get "$id" "$PIPE" usec_vs_floor); echo "| $label in-server time -P $PIPE <= 1.15x the floor | $(fmt2 "$v")x | $(verdict "$v" "<=" 1.15) |"
    v=$(get "$id" "$PIPE" rps_vs_floor); echo "| $label -P $PIPE throughput >= 0.90x the floor | $(fmt2 "$v")x | $(verdict "$v" ">=" 0.90) |"
    v=$(get "$id" 1 rps_vs_incr); echo "| $label throughput >= 0.95x INCR | $(fmt2 "$v")x | $(verdict "$v" ">=" 0.95) |"
    v=$(ratio "$(get "$id" "$PIPE" rps)" "$(get "$base" "$PIPE" rps)"); echo "| $label -P $PIPE >= 2.5x its Lua baseline | $(fmt2 "$v")x | $(verdict "$v" ">=" 2.5) |"
}

report_targets() {
    local id v k
    echo "Targets:"
    echo
    echo "| target | measured | |"
    echo "|---|---|---|"
    for id in token token_interval leaky leaky_nodelay window_fixed window_sliding; do report_targets_of "$id"; done
    v=$(get slidinglog "$PIPE" usec_vs_floor); echo "| RL.SLIDINGLOG in-server time -P $PIPE <= 2.0x the floor | $(fmt2 "$v")x | $(verdict "$v" "<=" 2.0) |"
    v=$(get slidinglog 1 rps_vs_incr); echo "| RL.SLIDINGLOG throughput >= 0.95x INCR | $(fmt2 "$v")x | $(verdict "$v" ">=" 0.95) |"
    v=$(get zadd_log "$PIPE" usec_vs_floor); echo "| (no target) one ZADD into a log of the same size, in-server time -P $PIPE, vs the floor | $(fmt2 "$v")x | |"
    v=$(ratio "$(get slidinglog "$PIPE" usec_per_call)" "$(get zadd_log "$PIPE" usec_per_call)"); echo "| (no target) RL.SLIDINGLOG in-server time -P $PIPE vs that ZADD's | $(fmt2 "$v")x | |"
    v=$(get cl_throttle 1 rps_vs_incr); echo "| CL.THROTTLE throughput >= 0.95x INCR | $(fmt2 "$v")x | $(verdict "$v" ">=" 0.95) |"
    # CL.THROTTLE is RL.LEAKY NODELAY's GCRA plus redis-cell's strings (a decimal TAT, SET ... PXAT):
    # it may cost that formatting and no more.
    v=$(ratio "$(get cl_throttle 1 usec_per_call)" "$(get leaky_nodelay 1 usec_per_call)"); echo "| CL.THROTTLE in-server time <= 1.10x RL.LEAKY NODELAY's | $(fmt2 "$v")x | $(verdict "$v" "<=" 1.10) |"
    v=$(ratio "$(get cl_throttle "$PIPE" usec_per_call)" "$(get leaky_nodelay "$PIPE" usec_per_call)"); echo "| CL.THROTTLE in-server time -P $PIPE <= 1.10x RL.LEAKY NODELAY's | $(fmt2 "$v")x | $(verdict "$v" "<=" 1.10) |"
    v=$(ratio "$(get cl_throttle "$PIPE" rps)" "$(get leaky_nodelay "$PIPE" rps)"); echo "| CL.THROTTLE -P $PIPE throughput >= 0.90x RL.LEAKY NODELAY's | $(fmt2 "$v")x | $(verdict "$v" ">=" 0.90) |"
    # The concurrency limit (issue 26), 10 slots, a lease taken and given back: each command's own time.
    v=$(get acquire "$PIPE" usec_vs_floor); echo "| RL.ACQUIRE (10 slots) in-server time -P $PIPE <= 1.5x the floor | $(fmt2 "$v")x | $(verdict "$v" "<=" 1.5) |"
    v=$(get release "$PIPE" usec_vs_floor); echo "| RL.RELEASE (10 slots) in-server time -P $PIPE <= 1.3x the floor | $(fmt2 "$v")x | $(verdict "$v" "<=" 1.3) |"
    # Policies (issue 28): RL.CHECK with one limit beside RL.TOKEN, with three beside RL.ALL's three keys.
    for p in 1 "$PIPE"; do
        v=$(ratio "$(get check_1 "$p" usec_per_call)" "$(get token "$p" usec_per_call)"); echo "| RL.CHECK TOKEN in-server time$([ "$p" = 1 ] || echo " -P $p") <= 1.10x RL.TOKEN's | $(fmt2 "$v")x | $(verdict "$v" "<=" 1.10) |"
        v=$(ratio "$(get check_3 "$p" usec_per_call)" "$(get all_3 "$p" usec_per_call)"); echo "| RL.CHECK TOKEN+LEAKY+WINDOW in-server time$([ "$p" = 1 ] || echo " -P $p") < RL.ALL TOKEN+LEAKY+WINDOW's | $(fmt2 "$v")x | $(verdict "$v" "<" 1) |"
    done
    v=$(ratio "$(get slidinglog "$PIPE" rps)" "$(get classdojo "$PIPE" rps)"); echo "| RL.SLIDINGLOG -P $PIPE >= 2x ClassDojo's MULTI | $(fmt2 "$v")x | $(verdict "$v" ">=" 2) |"
    v=$(ratio "$(get slidinglog 1 rps)" "$(get classdojo 1 rps)"); echo "| RL.SLIDINGLOG >= 2x ClassDojo's MULTI | $(fmt2 "$v")x | $(verdict "$v" ">=" 2) |"
    if [ -f "$OUT/memory.tsv" ]; then
        for k in token leaky; do
            v=$(ratio "$(mget "$k" 5)" "$(mget incr_ttl 5)")
            echo "| $(mget "$k" 2) key <= 1.35x an INCR key with a TTL | $(fmt2 "$v")x | $(verdict "$v" "<=" 1.35) |"
        done
        for k in window_fixed window_sliding; do
            v=$(ratio "$(mget "$k" 5)" "$(mget incr_ttl 5)")
            echo "| $(mget "$k" 2) key <= 1.47x an INCR key with a TTL | $(fmt2 "$v")x | $(verdict "$v" "<=" 1.47) |"
        done
    fi
}

write_results() {
    report_head
    echo
    report_throughput
    echo
    report_inserver
    echo
    report_luamode
    if [ -f "$OUT/memory.tsv" ]; then echo; report_memory; fi
    if [ -f "$OUT/micro.tsv" ]; then echo; report_micro; fi
    echo
    report_targets
}

# --- the doc -----------------------------------------------------------------------------------------
splice_doc() {
    local doc=docs/benchmarks.md tmp
    if ! grep -q '^<!-- bench:begin -->$' "$doc" || ! grep -q '^<!-- bench:end -->$' "$doc"; then
        fail_hard "$doc has no <!-- bench:begin --> / <!-- bench:end --> lines to put the results between"
    fi
    tmp=$(mktemp)
    awk -v results="$results" '
        /^<!-- bench:begin -->$/ { print; while ((getline l < results) > 0) print l; skip = 1; next }
        /^<!-- bench:end -->$/ { skip = 0 }
        !skip' "$doc" >"$tmp"
    cp "$tmp" "$doc"
    rm -f "$tmp"
    [ ! -s "$OUT/benchmarks.png" ] || cp "$OUT/benchmarks.png" docs/benchmarks.png
    log "updated $doc$([ ! -s "$OUT/benchmarks.png" ] || echo " and docs/benchmarks.png")"
}

write_results >"$results"
scripts/bench/plot.sh "$OUT"
if [ "$quiet" -eq 0 ]; then
    cat "$results"
    grep -E '^FAIL' "$checks" >&2 && log "some baseline checks failed: see $checks"
    log "results in $OUT/ (results.md, benchmarks.png, summary.tsv, raw.tsv, memory.tsv, micro.tsv)"
fi
[ "$update_doc" -eq 0 ] || splice_doc
