#!/usr/bin/env bash
# The benchmark suite (docs/benchmarks.md), its runner: throughput and latency of every RL.* command beside
# INCR, beside the floor of the module API (FLOOR.CALL of scripts/bench/floor-module.c, build/floor.so, loaded in
# the same server) and beside the same limiter written the way users write it today (scripts/bench/baselines/*.lua,
# ClassDojo's MULTI), in-server time per call (INFO commandstats), memory per key
# (scripts/bench/memory.sh) and the algorithms alone (scripts/bench/bench-micro.c: ns and instructions per
# decision). It measures whatever the module (build/ratelimit.so, or RL_MODULE) is and writes the raw
# figures into the output directory; scripts/bench/report.sh then turns them into the report.
#
#   scripts/bench/suite.sh            full run (make bench): results in build/bench/ (results.md, benchmarks.png,
#                               the raw figures as TSV)
#   scripts/bench/suite.sh --doc      full run, then docs/benchmarks.png and the generated part of
#                               docs/benchmarks.md are replaced by this run's (make bench-doc)
#   scripts/bench/suite.sh --smoke    tiny run for make test (build/bench-smoke/): checks that every figure is
#                               produced and that every baseline decides correctly; asserts nothing about
#                               speed. Prints "bench-smoke: N passed, N failed".
#
# One redis-server with the module and the floor module is started on loopback by scripts/lib/server.sh (free port, temp dir,
# --save "" --appendonly no) and stopped with SHUTDOWN NOSAVE. Throughput: redis-benchmark (random keys
# over BENCH_KEYS keys, BENCH_CLIENTS connections, without and with pipelining), and bench-multi
# (scripts/bench/bench-multi.c) for what redis-benchmark cannot send (ClassDojo's MULTI/EXEC) plus
# RL.SLIDINGLOG and INCR again, so that those ratios come from one tool. Every figure is run BENCH_REPS
# times, round-robin over the figures (so slow drifts of the machine spread over all of them); the report
# gives the median. Before the first round each figure's keys are made by a warm-up run, so the figures
# are the steady state on existing keys.
#
# Output (BENCH_OUT): settings.txt (the counts below), figures.tsv (what each figure runs), machine.txt,
# checks.txt (the baseline checks), raw.tsv (every run), memory.tsv, micro-ns.txt and micro.tsv; the
# report's files beside them; with --smoke, smoke-checks.txt (the smoke run's own checks).
#
# Environment (full-run defaults): BENCH_QUIET_WAIT=0 (see below), BENCH_N=200000 requests per run without pipelining, BENCH_NP=1000000
# with, BENCH_REPS=3, BENCH_KEYS=100000, BENCH_CLIENTS=50, BENCH_PIPELINE=16, BENCH_WARMUP=200000,
# BENCH_MICRO_N=10000000 decisions per micro case (BENCH_CALLGRIND_N=100000 under callgrind), the memory
# counts of scripts/bench/memory.sh (BENCH_MEM_KEYS...), BENCH_OUT=build/bench, CC. The binaries:
# REDIS_SERVER, REDIS_CLI, REDIS_BENCHMARK (default from PATH); the module: RL_MODULE; the floor module:
# FLOOR_MODULE (default build/floor.so, built here from scripts/bench/floor-module.c when missing or older).
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/server.sh
REDIS_BENCHMARK=${REDIS_BENCHMARK:-redis-benchmark}

mode=full update_doc=0 do_memory=1 do_micro=1
for a in "$@"; do
    case "$a" in
    --smoke) mode=smoke ;;
    --doc) update_doc=1 ;;
    --no-memory) do_memory=0 ;;
    --no-micro) do_micro=0 ;;
    *) echo "usage: scripts/bench/suite.sh [--smoke | --doc] [--no-memory] [--no-micro]" >&2; exit 2 ;;
    esac
done

if [ "$mode" = smoke ]; then
    : "${BENCH_N:=2000}" "${BENCH_NP:=4000}" "${BENCH_REPS:=1}" "${BENCH_KEYS:=1000}" "${BENCH_WARMUP:=2000}"
    : "${BENCH_MICRO_N:=20000}" "${BENCH_CALLGRIND_N:=2000}" "${BENCH_OUT:=build/bench-smoke}"
    : "${BENCH_MEM_KEYS:=2000}" "${BENCH_MEM_LOG10_KEYS:=200}" "${BENCH_MEM_LOG100_KEYS:=20}"
    export BENCH_MEM_KEYS BENCH_MEM_LOG10_KEYS BENCH_MEM_LOG100_KEYS
    [ "$update_doc" -eq 0 ] || { echo "bench.sh: --doc needs a full run" >&2; exit 2; }
fi
N=${BENCH_N:-200000}
NP=${BENCH_NP:-1000000}
REPS=${BENCH_REPS:-3}
KEYS=${BENCH_KEYS:-100000}
CLIENTS=${BENCH_CLIENTS:-50}
PIPE=${BENCH_PIPELINE:-16}
WARMUP=${BENCH_WARMUP:-200000}
MICRO_N=${BENCH_MICRO_N:-10000000}
CALLGRIND_N=${BENCH_CALLGRIND_N:-100000}
OUT=${BENCH_OUT:-build/bench}
TOOLS=${BENCH_TOOLS:-build/bench-tools}
export BENCH_TOOLS=$TOOLS

# Limiter parameters: a quota of 100 per day (token and leaky buckets: capacity 100, refilled or drained
# at 100 per day; windows and logs: 100 per day). A run makes about 40 requests per key, so keys stay
# alive and admitted for the whole run: the figures are the steady state of live limiters, not key
# creation and expiry (a bucket refilled at 100 per minute would be full, i.e. idle and deleted, between
# two hits on one of 10^5 keys), and no window boundary falls inside a run (epoch-aligned windows end for
# all keys at once) unless the run straddles midnight UTC, which the report flags.
PERIOD=86400000

log() { echo "bench: $*" >&2; }
fail_hard() { echo "bench: $*" >&2; exit 1; }

# --- tools -------------------------------------------------------------------------------------------
build_tools() {
    local cflags=(-std=c11 -D_POSIX_C_SOURCE=200809L -O2 -g -Wall -Wextra -Werror)
    mkdir -p "$TOOLS"
    if [ ! -x "$TOOLS/bench-multi" ] || [ scripts/bench/bench-multi.c -nt "$TOOLS/bench-multi" ]; then
        ${CC:-cc} "${cflags[@]}" -o "$TOOLS/bench-multi" scripts/bench/bench-multi.c -lhiredis -lpthread
    fi
    # The floor module needs the module API header that make puts in build/include.
    if [ ! -f "$FLOOR_MODULE" ] || [ scripts/bench/floor-module.c -nt "$FLOOR_MODULE" ]; then
        [ -f build/include/redismodule.h ] || fail_hard "build/include/redismodule.h is missing: run make first"
        ${CC:-cc} "${cflags[@]}" -fPIC -fvisibility=hidden -Ibuild/include -shared -o "$FLOOR_MODULE" scripts/bench/floor-module.c
    fi
    # The micro-benchmark links whatever algorithms/ is now: always rebuilt.
    ${CC:-cc} "${cflags[@]}" -o "$TOOLS/bench-micro" scripts/bench/bench-micro.c algorithms/*.c
}

# --- the run's description: what the report needs besides the figures ---------------------------------
write_settings() {
    {
        echo "mode=$mode"
        echo "requests=$N"
        echo "requests_pipelined=$NP"
        echo "reps=$REPS"
        echo "keys=$KEYS"
        echo "clients=$CLIENTS"
        echo "pipeline=$PIPE"
        echo "micro_decisions=$MICRO_N"
        echo "callgrind_decisions=$CALLGRIND_N"
    } >"$OUT/settings.txt"
}

# BENCH_QUIET_WAIT=S: first wait up to S seconds (polling every 60 s) for a quiet machine: 1-minute load
# below BENCH_QUIET_LOAD (0.7) and no redis-server running. Prints what it found, for the report.
wait_for_quiet() {
    local waited=0 load1 servers
    while :; do
        load1=$(cut -d' ' -f1 /proc/loadavg)
        servers=$(pgrep -c -x redis-server || true)
        if awk -v l="$load1" -v max="${BENCH_QUIET_LOAD:-0.7}" 'BEGIN { exit !(l < max) }' && [ "$servers" -eq 0 ]; then
            echo "quiet (load $load1, no other redis-server) after waiting $waited s"
            return
        fi
        if [ "$waited" -ge "$BENCH_QUIET_WAIT" ]; then
            echo "NOT quiet: load $load1 and $servers other redis-server(s) after waiting $waited s"
            return
        fi
        log "waiting for a quiet machine: load $load1, $servers redis-server(s) running"
        sleep 60
        waited=$((waited + 60))
    done
}

write_machine() { # write_machine QUIET
    echo "quiet=$1"
    echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "nproc=$(nproc)"
    echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
    echo "kernel=$(uname -sr)"
    echo "redis=$("$REDIS_SERVER" --version | sed -E 's/.*v=([^ ]*).*malloc=([^ ]*).*/\1 (\2)/')"
    echo "module=$(sha256sum "$MODULE" | cut -c1-12)"
    echo "git=$(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- module algorithms 2>/dev/null || echo ' with uncommitted changes in module/ or algorithms/')"
    echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "redis_servers_start=$(pgrep -c -x redis-server || true)"
}

# --- checks: the baselines decide as the commands do ---------------------------------------------------
# check NAME OK(0/1) DETAIL: one line into CHECKS (checks.txt, then smoke-checks.txt for the smoke
# verdict, which must not mix into the baseline checks that the report counts).
check() {
    if [ "$2" -eq 1 ]; then echo "ok   $1" >>"$CHECKS"; else echo "FAIL $1: $3" >>"$CHECKS"; fi
}

# compare_pair NAME "RL command args" "baseline args" (KEY becomes ck:NAME:rl / ck:NAME:base).
# On fresh keys, five requests in a row against a limit of 3: both the RL.* command and its baseline
# must answer allowed 1 1 1 0 0 with the same remaining counts, and times (retry, reset, wait) within a
# few ms of each other (they are taken a few µs apart).
compare_pair() {
    local name=$1 rl_cmd=${2//KEY/ck:$1:rl} base_cmd=${3//KEY/ck:$1:base}
    local i ok=1 detail="" allowed_seq="" rl_all="" base_all="" out
    # One redis-cli for the ten calls, alternating, so that each pair is made microseconds apart.
    out=$(for i in 1 2 3 4 5; do printf '%s\n%s\n' "$rl_cmd" "$base_cmd"; done | server_cli | tr '\n' ' ')
    # shellcheck disable=SC2206
    local v=($out)
    [ "${#v[@]}" -eq 60 ] || { check "baseline $name decides as its RL command" 0 "unexpected replies: $out"; return; }
    for i in 0 1 2 3 4; do
        local r=("${v[@]:$((12 * i)):6}") b=("${v[@]:$((12 * i + 6)):6}")
        rl_all+="[${r[*]}] " base_all+="[${b[*]}] "
        allowed_seq+=${r[0]}
        [ "${r[0]}" = "${b[0]}" ] && [ "${r[1]}" = "${b[1]}" ] && [ "${r[2]}" = "${b[2]}" ] || ok=0
        local f
        for f in 3 4 5; do # retry_after, reset_after, wait: equal within a few ms
            [[ "${r[f]}" =~ ^-?[0-9]+$ && "${b[f]}" =~ ^-?[0-9]+$ ]] || { ok=0; continue; }
            local d=$((r[f] - b[f]))
            [ "${d#-}" -le 50 ] || ok=0
        done
    done
    [ "$allowed_seq" = "11100" ] || { ok=0; detail="allowed sequence $allowed_seq, expected 11100; "; }
    check "baseline $name decides as its RL command" "$ok" "${detail}RL: $rl_all; baseline: $base_all"
}

# CL.THROTTLE and RL.LEAKY NODELAY are the same GCRA: on fresh keys, five requests in a row against a limit
# of 3 per hour, the same admissions (CL.THROTTLE answers "limited", the inverse) and remaining counts,
# and the same times (CL.THROTTLE's whole seconds against RL.LEAKY's ms: within a second).
check_cl_throttle() {
    local out i ok=1 all=""
    out=$(for i in 1 2 3 4 5; do
        printf 'CL.THROTTLE ck:cl:cell 2 3 3600\nRL.LEAKY ck:cl:leaky 3 3 3600000 NODELAY\n'
    done | server_cli | tr '\n' ' ')
    # shellcheck disable=SC2206
    local v=($out)
    [ "${#v[@]}" -eq 55 ] || { check "CL.THROTTLE decides as RL.LEAKY NODELAY" 0 "unexpected replies: $out"; return; }
    for i in 0 1 2 3 4; do
        local c=("${v[@]:$((11 * i)):5}") l=("${v[@]:$((11 * i + 5)):6}")
        all+="[${c[*]} | ${l[*]}] "
        [ "${c[0]}" -eq $((1 - l[0])) ] && [ "${c[1]}" = "${l[1]}" ] && [ "${c[2]}" = "${l[2]}" ] || ok=0
        [ $((c[3] * 1000 - l[3])) -ge 0 ] && [ $((c[3] * 1000 - l[3])) -lt 1000 ] || [ "${c[3]}${l[3]}" = "-1-1" ] || ok=0
        [ $((c[4] * 1000 - l[4])) -ge 0 ] && [ $((c[4] * 1000 - l[4])) -lt 1000 ] || ok=0
    done
    [ "${v[0]}${v[11]}${v[22]}${v[33]}${v[44]}" = "00011" ] || ok=0
    check "CL.THROTTLE decides as RL.LEAKY NODELAY" "$ok" "CL.THROTTLE | RL.LEAKY: $all"
}

# The sliding logs: ClassDojo's decision made by bench-multi from the MULTI's replies, and RL.SLIDINGLOG.
check_sliding_logs() {
    local q=$1 d
    d=$("$BM" -p "$SERVER_PORT" --check -n 5 classdojo ck:dojo: 3 "$q" | sed -n 's/^decisions //p') || true
    check "ClassDojo MULTI baseline: admits 3 of 5 at limit 3" "$([ "$d" = AAABB ] && echo 1 || echo 0)" "decisions $d"
    d=$("$BM" -p "$SERVER_PORT" --check -n 5 cmd RL.SLIDINGLOG ck:slog:__rand_int__ 3 "$q" | sed -n 's/^decisions //p') || true
    check "RL.SLIDINGLOG admits 3 of 5 at limit 3" "$([ "$d" = AAABB ] && echo 1 || echo 0)" "decisions $d"
}

run_checks() {
    local Q=3600000 k t ttl_ok=1 # the checks: 3 per hour
    compare_pair token "RL.TOKEN KEY 3 3 $Q" "EVALSHA $SHA_TOKEN 1 KEY 3 3 $Q"
    compare_pair token-interval "RL.TOKEN KEY 3 3 $Q INTERVAL" "EVALSHA $SHA_TOKEN 1 KEY 3 3 $Q 1 INTERVAL"
    compare_pair leaky "RL.LEAKY KEY 3 3 $Q" "EVALSHA $SHA_GCRA 1 KEY 3 3 $Q"
    compare_pair leaky-nodelay "RL.LEAKY KEY 3 3 $Q NODELAY" "EVALSHA $SHA_GCRA 1 KEY 3 3 $Q 1 NODELAY"
    compare_pair window-fixed "RL.WINDOW KEY 3 $Q FIXED" "EVALSHA $SHA_FIXED 1 KEY 3 $Q"
    compare_pair window-sliding "RL.WINDOW KEY 3 $Q SLIDING" "EVALSHA $SHA_SLIDING 1 KEY 3 $Q"
    # The keys the baselines leave: a TTL, and gone when the limiter is idle again (COST 0 on a new key).
    for k in token token-interval leaky leaky-nodelay window-fixed window-sliding; do
        t=$(server_cli PTTL "ck:$k:base")
        [ "$t" -gt 0 ] && [ "$t" -le $((2 * Q)) ] || ttl_ok=0
    done
    check "baseline keys expire when their limiter would be idle" "$ttl_ok" "a baseline key has PTTL outside (0, 2 windows]"
    check_sliding_logs "$Q"
    check_cl_throttle
    server_cli FLUSHALL SYNC >/dev/null
}

# --- throughput ----------------------------------------------------------------------------------------
# id|label|tool|stats|group|role|arguments.  tool: rb (redis-benchmark) or bm (bench-multi). stats: the
# commandstats whose time makes one request (the first one's calls count them). group: the RL command a
# baseline stands beside. role: incr (INCR), floor (FLOOR.CALL, the floor module), rl, base, calib; one INCR
# and one floor per tool, the ratios' denominators. calib: ZADD of one entry named and scored as
# RL.SLIDINGLOG's (the time in µs) into a sorted set that grows as the logs do (the same requests per key):
# the one write any log kept in a sorted set makes per logged attempt. The floor gets RL.TOKEN's arguments
# (which it ignores), so that the server reads requests of the same size. CL.THROTTLE (redis-cell's command: GCRA, limit
# max_burst + 1) runs the quota of RL.LEAKY NODELAY, 100 per day; it has no baseline of its own, the
# report sets it beside RL.LEAKY NODELAY. Defined once the baseline scripts are loaded
# (their SHAs are in the arguments); written to figures.tsv for the report.
define_figures() {
    local R=__rand_int__
    FIGURES=(
        "incr|INCR|rb|incr|INCR|incr|INCR b:incr:$R"
        "floor|FLOOR.CALL (floor module)|rb|floor.call|FLOOR|floor|FLOOR.CALL b:floor:$R 100 100 $PERIOD"
        "token|RL.TOKEN|rb|rl.token|TOKEN|rl|RL.TOKEN b:tokc:$R 100 100 $PERIOD"
        "token_interval|RL.TOKEN INTERVAL|rb|rl.token|TOKEN INTERVAL|rl|RL.TOKEN b:toki:$R 100 100 $PERIOD INTERVAL"
        "leaky|RL.LEAKY|rb|rl.leaky|LEAKY|rl|RL.LEAKY b:leak:$R 100 100 $PERIOD"
        "leaky_nodelay|RL.LEAKY NODELAY|rb|rl.leaky|LEAKY NODELAY|rl|RL.LEAKY b:leand:$R 100 100 $PERIOD NODELAY"
        "cl_throttle|CL.THROTTLE|rb|cl.throttle|CL.THROTTLE|rl|CL.THROTTLE b:cl:$R 99 100 $((PERIOD / 1000))"
        "window_fixed|RL.WINDOW FIXED|rb|rl.window|WINDOW FIXED|rl|RL.WINDOW b:winf:$R 100 $PERIOD FIXED"
        "window_sliding|RL.WINDOW SLIDING|rb|rl.window|WINDOW SLIDING|rl|RL.WINDOW b:wins:$R 100 $PERIOD SLIDING"
        "lua_token|Lua token bucket|rb|evalsha|TOKEN|base|EVALSHA $SHA_TOKEN 1 b:ltokc:$R 100 100 $PERIOD"
        "lua_token_interval|Lua token bucket, interval|rb|evalsha|TOKEN INTERVAL|base|EVALSHA $SHA_TOKEN 1 b:ltoki:$R 100 100 $PERIOD 1 INTERVAL"
        "lua_gcra|Lua GCRA, shaping|rb|evalsha|LEAKY|base|EVALSHA $SHA_GCRA 1 b:lgcra:$R 100 100 $PERIOD"
        "lua_gcra_nodelay|Lua GCRA|rb|evalsha|LEAKY NODELAY|base|EVALSHA $SHA_GCRA 1 b:lgcrn:$R 100 100 $PERIOD 1 NODELAY"
        "lua_fixed|Lua fixed window (INCR+PEXPIREAT)|rb|evalsha|WINDOW FIXED|base|EVALSHA $SHA_FIXED 1 b:lfix:$R 100 $PERIOD"
        "lua_sliding|Lua sliding-window counter|rb|evalsha|WINDOW SLIDING|base|EVALSHA $SHA_SLIDING 1 b:lsli:$R 100 $PERIOD"
        "incr_bm|INCR (bench-multi)|bm|incr|INCR (bench-multi)|incr|cmd INCR b:incm:$R"
        "floor_bm|FLOOR.CALL (bench-multi)|bm|floor.call|FLOOR (bench-multi)|floor|cmd FLOOR.CALL b:flm:$R 100 $PERIOD"
        "zadd_log|ZADD of one log entry (bench-multi)|bm|zadd|SLIDINGLOG|calib|cmd ZADD b:zlog:$R __now_us__ __now_us__-0:1:0:0"
        "slidinglog|RL.SLIDINGLOG|bm|rl.slidinglog|SLIDINGLOG|rl|cmd RL.SLIDINGLOG b:slog:$R 100 $PERIOD"
        "classdojo|ClassDojo MULTI/EXEC|bm|exec,multi|SLIDINGLOG|base|classdojo b:dojo: 100 $PERIOD"
    )
    {
        printf 'id\tlabel\ttool\tstats\tgroup\trole\targuments\n'
        printf '%s\n' "${FIGURES[@]}" | tr '|' '\t'
    } >"$OUT/figures.tsv"
}

fig_field() { # fig_field ID FIELD#
    local f
    for f in "${FIGURES[@]}"; do
        [ "${f%%|*}" = "$1" ] && { cut -d'|' -f"$2" <<<"$f"; return; }
    done
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

# raw.tsv: every run of every figure, BENCH_REPS rounds over all figures, each without and with pipelining.
run_throughput() {
    local ids=() f rep p n id line started
    for f in "${FIGURES[@]}"; do ids+=("${f%%|*}"); done
    printf 'id\tpipeline\trep\trequests\trps\tp50_ms\tp99_ms\tusec_per_call\tcalls\tfailed\n' >"$OUT/raw.tsv"
    log "warm-up: $WARMUP requests per figure"
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
}

# --- the algorithms alone ----------------------------------------------------------------------------
# micro-ns.txt: bench-micro's own output; micro.tsv: ns and, under callgrind, instructions per decision.
run_micro() {
    local i name ns ir
    log "micro-benchmark: $MICRO_N decisions per case; callgrind: $CALLGRIND_N"
    "$TOOLS/bench-micro" --decisions "$MICRO_N" >"$OUT/micro-ns.txt"
    if command -v valgrind >/dev/null; then
        rm -f "$work"/cg.out*
        valgrind --tool=callgrind --collect-atstart=no --toggle-collect=run_loop --dump-after=run_loop \
            --callgrind-out-file="$work/cg.out" "$TOOLS/bench-micro" --decisions "$CALLGRIND_N" --repeat 1 \
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
}

# --- smoke verdict -------------------------------------------------------------------------------------
# Every figure: a number in each of the runs, no failed call, the calls all counted.
smoke_figures() {
    awk -F'\t' 'NR > 1 {
            ok = $5 + 0 > 0 && $6 != "" && $7 != "" && $8 + 0 > 0 && $10 == 0 && $9 + 0 >= $4 + 0
            printf "%s figure %s -P %s run %s: %s req/s, p50 %s, p99 %s, %s µs/call, %s calls, %s failed\n",
                ok ? "ok  " : "FAIL", $1, $2, $3, $5, $6, $7, $8, $9, $10
        }' "$OUT/raw.tsv" >>"$CHECKS"
}

smoke_memory() {
    local c=0
    tail -n +2 "$OUT/memory.tsv" | while IFS=$'\t' read -r kind _ _ _ bytes status; do
        ok=$(awk -v b="$bytes" -v s="$status" 'BEGIN { print (b + 0 > 0 && s == "ok") ? 1 : 0 }')
        check "memory $kind: $bytes bytes per key" "$ok" "status $status"
    done
    [ "$(tail -n +2 "$OUT/memory.tsv" | wc -l)" -ne 15 ] || c=1
    check "memory: all 15 kinds measured" "$c" "see memory.tsv"
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

# Prints the failures and "bench-smoke: N passed, N failed" over the baseline and the smoke checks;
# fails if any failed.
smoke_verdict() {
    local passed failed
    CHECKS=$OUT/smoke-checks.txt
    : >"$CHECKS"
    smoke_figures
    [ "$do_memory" -eq 0 ] || smoke_memory
    [ "$do_micro" -eq 0 ] || smoke_micro
    smoke_report
    cat "$OUT/checks.txt" "$CHECKS" | grep -E '^FAIL' || true
    passed=$(cat "$OUT/checks.txt" "$CHECKS" | grep -c '^ok' || true)
    failed=$(cat "$OUT/checks.txt" "$CHECKS" | grep -c '^FAIL' || true)
    echo "bench-smoke: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}

# --- the run -----------------------------------------------------------------------------------------
MODULE=$(server_module) || fail_hard "no module to measure"
FLOOR_MODULE=${FLOOR_MODULE:-build/floor.so}
command -v "$REDIS_BENCHMARK" >/dev/null || fail_hard "$REDIS_BENCHMARK is missing (Debian package redis-tools)"
build_tools
BM=$TOOLS/bench-multi
mkdir -p "$OUT"
rm -f "$OUT"/*.tsv "$OUT"/*.txt "$OUT"/results.md "$OUT"/plot-*.dat "$OUT"/benchmarks.png
write_settings

quiet="not waited for"
if [ "${BENCH_QUIET_WAIT:-0}" -gt 0 ]; then
    quiet=$(wait_for_quiet)
    log "machine $quiet"
fi
write_machine "$quiet" >"$OUT/machine.txt"

work=$(mktemp -d) # callgrind's output
cleanup() { server_stop; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 1' HUP INT TERM # so that the EXIT trap stops the server
server_start --loadmodule "$(realpath "$FLOOR_MODULE")" || fail_hard "could not start $REDIS_SERVER"
log "redis-server $("$REDIS_SERVER" --version | sed 's/.*v=\([^ ]*\).*/\1/') on 127.0.0.1:$SERVER_PORT (pid $SERVER_PID)"

load_script() { server_cli SCRIPT LOAD "$(cat "scripts/bench/baselines/$1.lua")"; }
SHA_TOKEN=$(load_script token_bucket)
SHA_GCRA=$(load_script gcra)
SHA_FIXED=$(load_script fixed_window)
SHA_SLIDING=$(load_script sliding_window)

CHECKS=$OUT/checks.txt
: >"$CHECKS"
run_checks
define_figures
run_throughput
if [ "$do_memory" -eq 1 ]; then
    log "memory per key"
    scripts/bench/memory.sh --port "$SERVER_PORT" --out "$OUT/memory.tsv"
fi
server_stop
[ "$do_micro" -eq 0 ] || run_micro

if [ "$mode" = smoke ]; then
    scripts/bench/report.sh --quiet "$OUT"
    smoke_verdict
else
    report_args=("$OUT")
    [ "$update_doc" -eq 0 ] || report_args=(--doc "$OUT")
    scripts/bench/report.sh "${report_args[@]}"
fi
