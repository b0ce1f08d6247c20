#!/usr/bin/env bash
# throughput.sh -- runs every row of a benchmark run against the server and writes raw.tsv: requests per
# second, p50 and p99 latency, and the in-server time per request (INFO commandstats, reset before each
# run), for each row, BENCH_REPS rounds over all rows (so that slow drifts of the machine spread over all
# of them), each round without and with pipelining. Before the first round each row's keys are made by a
# warm-up run, so the figures are the steady state on existing keys.
#
#   scripts/bench/throughput.sh --port PORT DIR
#
# Reads DIR/settings.txt (the counts: requests, requests_pipelined, reps, keys, clients, pipeline, warmup)
# and DIR/figures.tsv (the rows, scripts/bench/rows.sh); writes DIR/raw.tsv (id, pipeline, rep, requests,
# rps, p50_ms, p99_ms, usec_per_call, calls, failed; the figures of a failed run empty) and appends to
# DIR/machine.txt the load at the end, the time taken and a warning if the run straddled midnight UTC
# (the day-long windows end then). A row's tool: rb is REDIS_BENCHMARK (default redis-benchmark), bm is
# bench-multi (BENCH_TOOLS, default build/bench-tools).
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/server.sh
REDIS_BENCHMARK=${REDIS_BENCHMARK:-redis-benchmark}
BM=${BENCH_TOOLS:-build/bench-tools}/bench-multi

port="" OUT=""
while [ $# -gt 0 ]; do
    case "$1" in
    --port) port=$2; shift 2 ;;
    -*) echo "usage: scripts/bench/throughput.sh --port PORT DIR" >&2; exit 2 ;;
    *) OUT=$1; shift ;;
    esac
done
if [ -z "$port" ] || [ -z "$OUT" ]; then echo "usage: scripts/bench/throughput.sh --port PORT DIR" >&2; exit 2; fi
SERVER_PORT=$port

setting() { sed -n "s/^$1=//p" "$OUT/settings.txt"; }
N=$(setting requests) NP=$(setting requests_pipelined) REPS=$(setting reps) KEYS=$(setting keys)
CLIENTS=$(setting clients) PIPE=$(setting pipeline) WARMUP=$(setting warmup)
log() { echo "bench: $*" >&2; }

fig_field() { # fig_field ID COLUMN#
    awk -F'\t' -v id="$1" -v col="$2" 'NR > 1 && $1 == id { print $col }' "$OUT/figures.tsv"
}

# measure_load TOOL ID PIPELINE REQUESTS ARGS -> "rps,p50,p99" (empty fields if the tool failed; commas,
# not blanks, so that an empty field stays in its place when read back)
measure_load() {
    local tool=$1 id=$2 p=$3 n=$4 args=$5 out rps p50 p99
    if [ "$tool" = rb ]; then
        # shellcheck disable=SC2086
        out=$("$REDIS_BENCHMARK" -p "$SERVER_PORT" -c "$CLIENTS" -n "$n" -r "$KEYS" -P "$p" --csv $args 2>&1 | tail -n 1) || true
        # "test","rps","avg","min","p50","p95","p99","max"
        IFS=, read -r _ rps _ _ p50 _ p99 _ <<<"${out//\"/}"
    else
        # shellcheck disable=SC2086
        out=$("$BM" -p "$SERVER_PORT" -c "$CLIENTS" -n "$n" -r "$KEYS" -P "$p" --name "$id" $args 2>&1 | tail -n 1) || true
        rps=$(sed -n 's/.* rps=\([^ ]*\).*/\1/p' <<<"$out")
        p50=$(sed -n 's/.* p50_ms=\([^ ]*\).*/\1/p' <<<"$out")
        p99=$(sed -n 's/.* p99_ms=\([^ ]*\).*/\1/p' <<<"$out")
    fi
    echo "$rps,$p50,$p99"
}

# run_figure ID PIPELINE REQUESTS -> one TSV line: rps p50 p99 usec_per_call calls failed (or "" on failure)
run_figure() {
    local id=$1 p=$2 n=$3 stats rps p50 p99
    stats=$(fig_field "$id" 4)
    server_cli CONFIG RESETSTAT >/dev/null
    IFS=, read -r rps p50 p99 < <(measure_load "$(fig_field "$id" 3)" "$id" "$p" "$n" "$(fig_field "$id" 7)") || true
    # In-server time per request: the stats' usec summed, over the first stat's calls.
    server_cli INFO commandstats | tr -d '\r' | awk -F'[:,=]' -v stats="$stats" -v rps="$rps" -v p50="$p50" -v p99="$p99" '
        BEGIN { n = split(stats, want, ",") }
        /^cmdstat_/ {
            name = substr($1, 9)
            for (i = 1; i <= n; i++) if (name == want[i]) {
                for (j = 2; j < NF; j += 2) v[name, $j] = $(j + 1)
            }
        }
        END {
            usec = 0; failed = 0
            for (i = 1; i <= n; i++) { usec += v[want[i], "usec"]; failed += v[want[i], "failed_calls"] + v[want[i], "rejected_calls"] }
            calls = v[want[1], "calls"] + 0
            if (rps == "" || p50 == "" || p99 == "" || rps + 0 <= 0) { print ""; exit }
            printf "%s\t%s\t%s\t%.3f\t%d\t%d\n", rps, p50, p99, calls ? usec / calls : 0, calls, failed
        }'
}

mapfile -t ids < <(awk -F'\t' 'NR > 1 { print $1 }' "$OUT/figures.tsv")
printf 'id\tpipeline\trep\trequests\trps\tp50_ms\tp99_ms\tusec_per_call\tcalls\tfailed\n' >"$OUT/raw.tsv"
log "warm-up: $WARMUP requests per figure (${#ids[@]} figures)"
for id in "${ids[@]}"; do run_figure "$id" "$PIPE" "$WARMUP" >/dev/null; done
started=$(date +%s)
for rep in $(seq "$REPS"); do
    for p in 1 "$PIPE"; do
        n=$N
        [ "$p" -eq 1 ] || n=$NP
        for id in "${ids[@]}"; do
            line=$(run_figure "$id" "$p" "$n")
            [ -n "$line" ] || line=$(printf '\t\t\t\t\t')
            printf '%s\t%s\t%s\t%s\t%s\n' "$id" "$p" "$rep" "$n" "$line" >>"$OUT/raw.tsv"
        done
        log "round $rep/$REPS, pipeline $p: done ($(($(date +%s) - started)) s)"
    done
done
echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/machine.txt"
echo "throughput_seconds=$(($(date +%s) - started))" >>"$OUT/machine.txt"
[ $((started / 86400)) -eq $(($(date +%s) / 86400)) ] ||
    echo "warning=the run straddled midnight UTC: the day-long windows ended mid-run" >>"$OUT/machine.txt"
