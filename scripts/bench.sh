#!/usr/bin/env bash
# The benchmark suite (docs/benchmarks.md): throughput and latency of every RL.* command beside INCR and
# beside the same limiter written the way users write it today (scripts/baselines/*.lua, ClassDojo's
# MULTI), in-server time per call (INFO commandstats), memory per key (scripts/bench-memory.sh) and the
# algorithms alone (scripts/bench-micro.c: ns and instructions per decision). It measures whatever
# build/ratelimit.so is.
#
#   scripts/bench.sh            full run (make bench): results in build/bench/ (results.md, benchmarks.png,
#                               the raw figures as TSV)
#   scripts/bench.sh --doc      full run, then docs/benchmarks.png and the generated part of
#                               docs/benchmarks.md are replaced by this run's (make bench-doc)
#   scripts/bench.sh --smoke    tiny run for make test (build/bench-smoke/): checks that every figure is
#                               produced and that every baseline decides correctly; asserts nothing about
#                               speed. Prints "bench-smoke: N passed, N failed".
#
# One redis-server with the module is started on loopback (free port, temp dir, --save "" --appendonly
# no) and stopped with SHUTDOWN NOSAVE. Throughput: redis-benchmark (random keys over BENCH_KEYS keys,
# BENCH_CLIENTS connections, without and with pipelining), and bench-multi (scripts/bench-multi.c) for
# what redis-benchmark cannot send (ClassDojo's MULTI/EXEC) plus RL.SLIDINGLOG and INCR again, so that
# those ratios come from one tool. Every figure is run BENCH_REPS times, round-robin over the figures
# (so slow drifts of the machine spread over all of them); the median is reported. Before the first
# round each figure's keys are made by a warm-up run, so the figures are the steady state on existing
# keys.
#
# Environment (full-run defaults): BENCH_QUIET_WAIT=0 (see below), BENCH_N=200000 requests per run without pipelining, BENCH_NP=1000000
# with, BENCH_REPS=3, BENCH_KEYS=100000, BENCH_CLIENTS=50, BENCH_PIPELINE=16, BENCH_WARMUP=200000,
# BENCH_MICRO_N=10000000 decisions per micro case (BENCH_CALLGRIND_N=100000 under callgrind), the memory
# counts of scripts/bench-memory.sh (BENCH_MEM_KEYS...), BENCH_OUT=build/bench, CC.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

mode=full update_doc=0 do_memory=1 do_micro=1
for a in "$@"; do
    case "$a" in
    --smoke) mode=smoke ;;
    --doc) update_doc=1 ;;
    --no-memory) do_memory=0 ;;
    --no-micro) do_micro=0 ;;
    *) echo "usage: scripts/bench.sh [--smoke | --doc] [--no-memory] [--no-micro]" >&2; exit 2 ;;
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
[ -f build/ratelimit.so ] || fail_hard "build/ratelimit.so is missing (run make)"
command -v redis-benchmark >/dev/null || fail_hard "redis-benchmark is missing (Debian package redis-tools)"
mkdir -p "$TOOLS" "$OUT"
CFLAGS="-std=c11 -D_POSIX_C_SOURCE=200809L -O2 -g -Wall -Wextra -Werror"
if [ ! -x "$TOOLS/bench-multi" ] || [ scripts/bench-multi.c -nt "$TOOLS/bench-multi" ]; then
    ${CC:-cc} $CFLAGS -o "$TOOLS/bench-multi" scripts/bench-multi.c -lhiredis -lpthread
fi
# The micro-benchmark links whatever algorithms/ is now: always rebuilt.
${CC:-cc} $CFLAGS -o "$TOOLS/bench-micro" scripts/bench-micro.c algorithms/*.c
BM=$TOOLS/bench-multi

rm -f "$OUT"/*.tsv "$OUT"/*.txt "$OUT"/results.md "$OUT"/plot-*.dat "$OUT"/benchmarks.png

# --- the machine -------------------------------------------------------------------------------------
# BENCH_QUIET_WAIT=S: first wait up to S seconds (polling every 60 s) for a quiet machine: 1-minute load
# below BENCH_QUIET_LOAD (0.7) and no redis-server running. The report says whether it got quiet.
quiet="not waited for"
if [ "${BENCH_QUIET_WAIT:-0}" -gt 0 ]; then
    waited=0
    while :; do
        load1=$(cut -d' ' -f1 /proc/loadavg)
        servers=$(pgrep -c -x redis-server || true)
        if awk -v l="$load1" -v max="${BENCH_QUIET_LOAD:-0.7}" 'BEGIN { exit !(l < max) }' && [ "$servers" -eq 0 ]; then
            quiet="quiet (load $load1, no other redis-server) after waiting $waited s"
            break
        fi
        if [ "$waited" -ge "$BENCH_QUIET_WAIT" ]; then
            quiet="NOT quiet: load $load1 and $servers other redis-server(s) after waiting $waited s"
            break
        fi
        log "waiting for a quiet machine: load $load1, $servers redis-server(s) running"
        sleep 60
        waited=$((waited + 60))
    done
    log "machine $quiet"
fi
{
    echo "quiet=$quiet"
    echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "nproc=$(nproc)"
    echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
    echo "kernel=$(uname -sr)"
    echo "redis=$(redis-server --version | sed -E 's/.*v=([^ ]*).*malloc=([^ ]*).*/\1 (\2)/')"
    echo "module=$(sha256sum build/ratelimit.so | cut -c1-12)"
    echo "git=$(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- module algorithms 2>/dev/null || echo ' with uncommitted changes in module/ or algorithms/')"
    echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "redis_servers_start=$(pgrep -c -x redis-server || true)"
} >"$OUT/machine.txt"

# --- the server --------------------------------------------------------------------------------------
tmp=$(mktemp -d)
server_pid="" port=""
stop_server() {
    if [ -n "$server_pid" ]; then
        redis-cli -p "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=""
    fi
}
cleanup() { stop_server; rm -rf "$tmp"; }
trap cleanup EXIT
for _ in 1 2 3 4 5 6 7 8 9 10; do
    port=$((20000 + RANDOM % 20000))
    redis-cli -p "$port" PING >/dev/null 2>&1 && continue # taken
    redis-server --bind 127.0.0.1 --port "$port" --dir "$tmp" --save "" --appendonly no \
        --logfile "$tmp/redis.log" --loadmodule "$root/build/ratelimit.so" &
    server_pid=$!
    for _ in $(seq 50); do
        redis-cli -p "$port" PING 2>/dev/null | grep -q PONG && break 2
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
done
[ -n "$server_pid" ] || { cat "$tmp/redis.log" >&2; fail_hard "could not start redis-server"; }
log "redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/') on 127.0.0.1:$port (pid $server_pid)"
cli() { redis-cli -p "$port" "$@"; }

load_script() { cli SCRIPT LOAD "$(cat "scripts/baselines/$1.lua")"; }
SHA_TOKEN=$(load_script token_bucket)
SHA_GCRA=$(load_script gcra)
SHA_FIXED=$(load_script fixed_window)
SHA_SLIDING=$(load_script sliding_window)

# --- checks: the baselines decide as the commands do ---------------------------------------------------
# On fresh keys, five requests in a row against a limit of 3: both the RL.* command and its baseline
# must answer allowed 1 1 1 0 0 with the same remaining counts, and times (retry, reset, wait) within a
# few ms of each other (they are taken a few µs apart).
checks=$OUT/checks.txt
: >"$checks"
check() { # check NAME OK(0/1) DETAIL
    if [ "$2" -eq 1 ]; then echo "ok   $1" >>"$checks"; else echo "FAIL $1: $3" >>"$checks"; fi
}
compare_pair() { # compare_pair NAME "RL command args" "baseline args" (KEY becomes ck:NAME:rl / ck:NAME:base)
    local name=$1 rl_cmd=${2//KEY/ck:$1:rl} base_cmd=${3//KEY/ck:$1:base}
    local i ok=1 detail="" allowed_seq="" rl_all="" base_all="" out
    # One redis-cli for the ten calls, alternating, so that each pair is made microseconds apart.
    out=$(for i in 1 2 3 4 5; do printf '%s\n%s\n' "$rl_cmd" "$base_cmd"; done | cli | tr '\n' ' ')
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
Q=3600000 # the checks: 3 per hour
compare_pair token "RL.TOKEN KEY 3 3 $Q" "EVALSHA $SHA_TOKEN 1 KEY 3 3 $Q"
compare_pair token-interval "RL.TOKEN KEY 3 3 $Q INTERVAL" "EVALSHA $SHA_TOKEN 1 KEY 3 3 $Q 1 INTERVAL"
compare_pair leaky "RL.LEAKY KEY 3 3 $Q" "EVALSHA $SHA_GCRA 1 KEY 3 3 $Q"
compare_pair leaky-nodelay "RL.LEAKY KEY 3 3 $Q NODELAY" "EVALSHA $SHA_GCRA 1 KEY 3 3 $Q 1 NODELAY"
compare_pair window-fixed "RL.WINDOW KEY 3 $Q FIXED" "EVALSHA $SHA_FIXED 1 KEY 3 $Q"
compare_pair window-sliding "RL.WINDOW KEY 3 $Q SLIDING" "EVALSHA $SHA_SLIDING 1 KEY 3 $Q"
# The keys the baselines leave: a TTL, and gone when the limiter is idle again (COST 0 on a new key).
ttl_ok=1
for k in token token-interval leaky leaky-nodelay window-fixed window-sliding; do
    t=$(cli PTTL "ck:$k:base")
    [ "$t" -gt 0 ] && [ "$t" -le $((2 * Q)) ] || ttl_ok=0
done
check "baseline keys expire when their limiter would be idle" "$ttl_ok" "a baseline key has PTTL outside (0, 2 windows]"
# The sliding logs: ClassDojo's decision made by bench-multi from the MULTI's replies, and RL.SLIDINGLOG.
d=$("$BM" -p "$port" --check -n 5 classdojo ck:dojo: 3 $Q | sed -n 's/^decisions //p') || true
check "ClassDojo MULTI baseline: admits 3 of 5 at limit 3" "$([ "$d" = AAABB ] && echo 1 || echo 0)" "decisions $d"
d=$("$BM" -p "$port" --check -n 5 cmd RL.SLIDINGLOG ck:slog:__rand_int__ 3 $Q | sed -n 's/^decisions //p') || true
check "RL.SLIDINGLOG admits 3 of 5 at limit 3" "$([ "$d" = AAABB ] && echo 1 || echo 0)" "decisions $d"
cli FLUSHALL SYNC >/dev/null

# --- throughput ----------------------------------------------------------------------------------------
# id|label|tool|stats|group|role|arguments.  tool: rb (redis-benchmark) or bm (bench-multi). stats: the
# commandstats whose time makes one request (the first one's calls count them). group: the RL command a
# baseline stands beside. role: floor (INCR), rl, base.
R=__rand_int__
FIGURES=(
    "incr|INCR|rb|incr|INCR|floor|INCR b:incr:$R"
    "token|RL.TOKEN|rb|rl.token|TOKEN|rl|RL.TOKEN b:tokc:$R 100 100 $PERIOD"
    "token_interval|RL.TOKEN INTERVAL|rb|rl.token|TOKEN INTERVAL|rl|RL.TOKEN b:toki:$R 100 100 $PERIOD INTERVAL"
    "leaky|RL.LEAKY|rb|rl.leaky|LEAKY|rl|RL.LEAKY b:leak:$R 100 100 $PERIOD"
    "leaky_nodelay|RL.LEAKY NODELAY|rb|rl.leaky|LEAKY NODELAY|rl|RL.LEAKY b:leand:$R 100 100 $PERIOD NODELAY"
    "window_fixed|RL.WINDOW FIXED|rb|rl.window|WINDOW FIXED|rl|RL.WINDOW b:winf:$R 100 $PERIOD FIXED"
    "window_sliding|RL.WINDOW SLIDING|rb|rl.window|WINDOW SLIDING|rl|RL.WINDOW b:wins:$R 100 $PERIOD SLIDING"
    "lua_token|Lua token bucket|rb|evalsha|TOKEN|base|EVALSHA $SHA_TOKEN 1 b:ltokc:$R 100 100 $PERIOD"
    "lua_token_interval|Lua token bucket, interval|rb|evalsha|TOKEN INTERVAL|base|EVALSHA $SHA_TOKEN 1 b:ltoki:$R 100 100 $PERIOD 1 INTERVAL"
    "lua_gcra|Lua GCRA, shaping|rb|evalsha|LEAKY|base|EVALSHA $SHA_GCRA 1 b:lgcra:$R 100 100 $PERIOD"
    "lua_gcra_nodelay|Lua GCRA|rb|evalsha|LEAKY NODELAY|base|EVALSHA $SHA_GCRA 1 b:lgcrn:$R 100 100 $PERIOD 1 NODELAY"
    "lua_fixed|Lua fixed window (INCR+PEXPIREAT)|rb|evalsha|WINDOW FIXED|base|EVALSHA $SHA_FIXED 1 b:lfix:$R 100 $PERIOD"
    "lua_sliding|Lua sliding-window counter|rb|evalsha|WINDOW SLIDING|base|EVALSHA $SHA_SLIDING 1 b:lsli:$R 100 $PERIOD"
    "incr_bm|INCR (bench-multi)|bm|incr|INCR (bench-multi)|floor|cmd INCR b:incm:$R"
    "slidinglog|RL.SLIDINGLOG|bm|rl.slidinglog|SLIDINGLOG|rl|cmd RL.SLIDINGLOG b:slog:$R 100 $PERIOD"
    "classdojo|ClassDojo MULTI/EXEC|bm|exec,multi|SLIDINGLOG|base|classdojo b:dojo: 100 $PERIOD"
)
fig_field() { # fig_field ID FIELD#
    local f
    for f in "${FIGURES[@]}"; do
        [ "${f%%|*}" = "$1" ] && { cut -d'|' -f"$2" <<<"$f"; return; }
    done
}

# run_figure ID PIPELINE REQUESTS -> one TSV line: rps p50 p99 usec_per_call calls failed (or "" on failure)
run_figure() {
    local id=$1 p=$2 n=$3 tool stats args out rps p50 p99
    tool=$(fig_field "$id" 3)
    stats=$(fig_field "$id" 4)
    args=$(fig_field "$id" 7)
    cli CONFIG RESETSTAT >/dev/null
    if [ "$tool" = rb ]; then
        # shellcheck disable=SC2086
        out=$(redis-benchmark -p "$port" -c "$CLIENTS" -n "$n" -r "$KEYS" -P "$p" --csv $args 2>&1 | tail -n 1) || true
        # "test","rps","avg","min","p50","p95","p99","max"
        IFS=, read -r _ rps _ _ p50 _ p99 _ <<<"${out//\"/}"
    else
        # shellcheck disable=SC2086
        out=$("$BM" -p "$port" -c "$CLIENTS" -n "$n" -r "$KEYS" -P "$p" --name "$id" $args 2>&1 | tail -n 1) || true
        rps=$(sed -n 's/.* rps=\([^ ]*\).*/\1/p' <<<"$out")
        p50=$(sed -n 's/.* p50_ms=\([^ ]*\).*/\1/p' <<<"$out")
        p99=$(sed -n 's/.* p99_ms=\([^ ]*\).*/\1/p' <<<"$out")
    fi
    # In-server time per request: the stats' usec summed, over the first stat's calls.
    local info
    info=$(cli INFO commandstats | tr -d '\r')
    awk -F'[:,=]' -v stats="$stats" -v rps="$rps" -v p50="$p50" -v p99="$p99" '
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
        }' <<<"$info"
}

ids=()
for f in "${FIGURES[@]}"; do ids+=("${f%%|*}"); done
raw=$OUT/raw.tsv
printf 'id\tpipeline\trep\trequests\trps\tp50_ms\tp99_ms\tusec_per_call\tcalls\tfailed\n' >"$raw"
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
            printf '%s\t%s\t%s\t%s\t%s\n' "$id" "$p" "$rep" "$n" "$line" >>"$raw"
        done
        log "round $rep/$REPS, pipeline $p: done ($(( $(date +%s) - started )) s)"
    done
done
echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/machine.txt"
echo "throughput_seconds=$(( $(date +%s) - started ))" >>"$OUT/machine.txt"
start_day=$(( started / 86400 ))
[ "$start_day" -eq $(( $(date +%s) / 86400 )) ] || echo "warning=the run straddled midnight UTC: the day-long windows ended mid-run" >>"$OUT/machine.txt"

# --- memory ------------------------------------------------------------------------------------------
if [ "$do_memory" -eq 1 ]; then
    log "memory per key"
    scripts/bench-memory.sh --port "$port" --out "$OUT/memory.tsv"
fi
stop_server

# --- the algorithms alone ----------------------------------------------------------------------------
if [ "$do_micro" -eq 1 ]; then
    log "micro-benchmark: $MICRO_N decisions per case; callgrind: $CALLGRIND_N"
    "$TOOLS/bench-micro" --decisions "$MICRO_N" >"$OUT/micro-ns.txt"
    if command -v valgrind >/dev/null; then
        rm -f "$tmp"/cg.out*
        valgrind --tool=callgrind --collect-atstart=no --toggle-collect=run_loop --dump-after=run_loop \
            --callgrind-out-file="$tmp/cg.out" "$TOOLS/bench-micro" --decisions "$CALLGRIND_N" --repeat 1 \
            >/dev/null 2>"$tmp/callgrind.log" || true
    fi
    {
        printf 'case\tns_per_decision\tinstructions_per_decision\n'
        i=0
        while read -r name ns _; do
            i=$((i + 1))
            ir=""
            [ -f "$tmp/cg.out.$i" ] && ir=$(awk -v n="$CALLGRIND_N" '/^totals:/ { printf "%.0f", $2 / n }' "$tmp/cg.out.$i")
            printf '%s\t%s\t%s\n' "$name" "${ns#ns=}" "$ir"
        done <"$OUT/micro-ns.txt"
    } >"$OUT/micro.tsv"
fi

# --- report ------------------------------------------------------------------------------------------
# summary.tsv: per figure and pipeline, the medians and the ratios to INCR of the same tool.
summary=$OUT/summary.tsv
{
    printf 'id\tlabel\ttool\tgroup\trole\tpipeline\trps\tp50_ms\tp99_ms\tusec_per_call\trps_vs_incr\tusec_vs_incr\truns_ok\trps_spread_pct\n'
    for f in "${FIGURES[@]}"; do
        IFS='|' read -r id label tool _ group role _ <<<"$f"
        printf '%s\t%s\t%s\t%s\t%s\n' "$id" "$label" "$tool" "$group" "$role"
    done | awk -F'\t' -v OFS='\t' -v raw="$raw" -v reps="$REPS" -v pipe="$PIPE" '
        function spread(list,   a, m, i, lo, hi, md) { # half the range, in % of the median
            m = split(list, a, " ")
            if (m == 0) return ""
            lo = hi = a[1] + 0
            for (i = 2; i <= m; i++) { if (a[i] + 0 < lo) lo = a[i] + 0; if (a[i] + 0 > hi) hi = a[i] + 0 }
            md = median(list)
            return md > 0 ? sprintf("%.0f", (hi - lo) / 2 / md * 100) : ""
        }
        function median(list,   a, m, i, j, t) {
            m = split(list, a, " ")
            if (m == 0) return ""
            for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
            return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
        }
        BEGIN {
            while ((getline line < raw) > 0) {
                split(line, c, "\t")
                if (c[1] == "id") continue
                k = c[1] SUBSEP c[2]
                if (c[5] != "" && c[10] == 0) {
                    ok[k]++; rps[k] = rps[k] " " c[5]; p50[k] = p50[k] " " c[6]; p99[k] = p99[k] " " c[7]; us[k] = us[k] " " c[8]
                }
            }
        }
        { id[NR] = $1; label[NR] = $2; tool[NR] = $3; group[NR] = $4; role[NR] = $5 }
        END {
            for (r = 1; r <= NR; r++) for (pi = 1; pi <= 2; pi++) {
                p = pi == 1 ? 1 : pipe; k = id[r] SUBSEP p
                mr[k] = median(rps[k]); m50[k] = median(p50[k]); m99[k] = median(p99[k]); mus[k] = median(us[k])
                if (role[r] == "floor") { floor_rps[tool[r], p] = mr[k]; floor_us[tool[r], p] = mus[k] }
            }
            for (r = 1; r <= NR; r++) for (pi = 1; pi <= 2; pi++) {
                p = pi == 1 ? 1 : pipe; k = id[r] SUBSEP p
                fr = floor_rps[tool[r], p]; fu = floor_us[tool[r], p]
                printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%s\n", id[r], label[r], tool[r], group[r], role[r], p,
                    mr[k], m50[k], m99[k], mus[k],
                    (fr > 0 && mr[k] != "") ? sprintf("%.2f", mr[k] / fr) : "",
                    (fu > 0 && mus[k] != "") ? sprintf("%.2f", mus[k] / fu) : "", ok[k], reps, spread(rps[k])
            }
        }'
} >"$summary"

# results.md: the tables of docs/benchmarks.md.
get() { awk -F'\t' -v id="$1" -v p="$2" -v col="$3" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $1 == id && $6 == p { print $c[col] }' "$summary"; }
mget() { [ -f "$OUT/memory.tsv" ] && awk -F'\t' -v k="$1" -v col="$2" '$1 == k { print $col }' "$OUT/memory.tsv"; }
kfmt() { awk -v v="$1" 'BEGIN { if (v == "") print "n/a"; else printf "%.0fk", v / 1000 }'; }
fmt2() { awk -v v="$1" 'BEGIN { if (v == "") print "n/a"; else printf "%.2f", v }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print ""; else printf "%.2f", a / b }'; }
verdict() { # verdict VALUE OP BOUND -> met/missed
    awk -v v="$1" -v op="$2" -v b="$3" 'BEGIN { if (v == "") { print "n/a"; exit } ok = op == ">=" ? v + 0 >= b + 0 : v + 0 <= b + 0; print ok ? "met" : "**missed**" }'
}
machine() { sed -n "s/^$1=//p" "$OUT/machine.txt"; }
krps() { # req/s in thousands, with the spread of the runs
    local v sp
    v=$(kfmt "$(get "$1" "$2" rps)")
    sp=$(get "$1" "$2" rps_spread_pct)
    if [ "$REPS" -gt 1 ] && [ -n "$sp" ] && [ "$v" != n/a ]; then echo "$v ±$sp%"; else echo "$v"; fi
}

results=$OUT/results.md
{
    echo "Measured $(machine date) on $(machine nproc) CPUs ($(machine cpu)), $(machine kernel), Redis $(machine redis);"
    echo "module build $(machine module) (git $(machine git)). Machine $(machine quiet); 1-minute load $(machine load_start | cut -d' ' -f1) at the start,"
    echo "$(machine load_end | cut -d' ' -f1) after the throughput runs ($(machine throughput_seconds) s)."
    w=$(machine warning)
    [ -z "$w" ] || echo "**Warning: $w.**"
    echo "Baseline checks (each baseline decides as its command): $(grep -c '^ok' "$checks" || true) passed, $(grep -c '^FAIL' "$checks" || true) failed."
    echo
    echo "Throughput: $CLIENTS connections, random keys over $KEYS keys, $N requests per run without pipelining and $NP with"
    echo "(-P $PIPE); each figure is the median of $REPS runs, taken round-robin over all figures (± half the range of"
    echo "the runs). Ratios are to INCR measured by the same tool in the same run. Latencies in ms."
    echo
    echo "| command | tool | req/s | vs INCR | p50 | p99 | req/s -P $PIPE | vs INCR | p50 | p99 | vs baseline -P $PIPE |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    while IFS=$'\t' read -r id label tool group role p _; do
        [ "$p" = 1 ] || continue
        vs_base=""
        if [ "$role" = rl ]; then
            base=$(awk -F'\t' -v g="$group" -v p="$PIPE" '$4 == g && $5 == "base" && $6 == p { print $1 }' "$summary")
            vr=$(ratio "$(get "$id" "$PIPE" rps)" "$(get "$base" "$PIPE" rps)")
            [ -z "$vr" ] || vs_base="**${vr}x**"
        fi
        name=$label
        [ "$role" = base ] || name="\`${label% (bench-multi)}\`"
        echo "| $name | $([ "$tool" = rb ] && echo redis-benchmark || echo bench-multi) | $(krps "$id" 1) | $(fmt2 "$(get "$id" 1 rps_vs_incr)") | $(get "$id" 1 p50_ms) | $(get "$id" 1 p99_ms) | $(krps "$id" "$PIPE") | $(fmt2 "$(get "$id" "$PIPE" rps_vs_incr)") | $(get "$id" "$PIPE" p50_ms) | $(get "$id" "$PIPE" p99_ms) | $vs_base |"
    done < <(tail -n +2 "$summary")
    echo
    echo "In-server time per request (INFO commandstats usec_per_call, median of the runs; for a Lua baseline"
    echo "EVALSHA's, which includes the commands it calls; for ClassDojo's MULTI and EXEC together):"
    echo
    echo "| command | µs per call | vs INCR | µs per call -P $PIPE | vs INCR |"
    echo "|---|---|---|---|---|"
    while IFS=$'\t' read -r id label tool group role p _; do
        [ "$p" = 1 ] || continue
        echo "| $label | $(get "$id" 1 usec_per_call) | $(fmt2 "$(get "$id" 1 usec_vs_incr)") | $(get "$id" "$PIPE" usec_per_call) | $(fmt2 "$(get "$id" "$PIPE" usec_vs_incr)") |"
    done < <(tail -n +2 "$summary")
    if [ -f "$OUT/memory.tsv" ]; then
        echo
        echo "Memory per key: used_memory after making the keys minus before, over the number of keys (FLUSHALL"
        echo "between kinds; key names of 16 bytes, all with a TTL; sorted-set logs full)."
        echo
        echo "| key | keys | entries per key | bytes per key | vs INCR + TTL |"
        echo "|---|---|---|---|---|"
        floor_mem=$(mget incr_ttl 5)
        tail -n +2 "$OUT/memory.tsv" | while IFS=$'\t' read -r kind label n entries bytes status; do
            note=""
            [ "$status" = ok ] || note=" ($status)"
            echo "| $label$note | $n | $entries | $bytes | $(fmt2 "$(ratio "$bytes" "$floor_mem")") |"
        done
    fi
    if [ -f "$OUT/micro.tsv" ]; then
        echo
        echo "The algorithms alone (scripts/bench-micro.c, $MICRO_N decisions per case over 65536 cells, best of 3;"
        echo "instructions under callgrind over $CALLGRIND_N decisions; the sliding log decided over full logs):"
        echo
        echo "| case | ns per decision | instructions per decision |"
        echo "|---|---|---|"
        tail -n +2 "$OUT/micro.tsv" | while IFS=$'\t' read -r name ns ir; do echo "| $name | $ns | ${ir:-n/a} |"; done
    fi
    echo
    echo "Targets:"
    echo
    echo "| target | measured | |"
    echo "|---|---|---|"
    for id in token token_interval leaky leaky_nodelay window_fixed window_sliding; do
        label=$(fig_field "$id" 2)
        group=$(fig_field "$id" 5)
        base=$(awk -F'\t' -v g="$group" -v p="$PIPE" '$4 == g && $5 == "base" && $6 == p { print $1 }' "$summary")
        v=$(get "$id" "$PIPE" rps_vs_incr); echo "| $label -P $PIPE throughput >= 0.75x INCR | $(fmt2 "$v")x | $(verdict "$v" ">=" 0.75) |"
        v=$(get "$id" 1 rps_vs_incr); echo "| $label throughput >= 0.90x INCR | $(fmt2 "$v")x | $(verdict "$v" ">=" 0.90) |"
        v=$(get "$id" 1 usec_vs_incr); echo "| $label in-server time <= 2x INCR | $(fmt2 "$v")x | $(verdict "$v" "<=" 2) |"
        v=$(get "$id" "$PIPE" usec_vs_incr); echo "| $label in-server time -P $PIPE <= 2x INCR | $(fmt2 "$v")x | $(verdict "$v" "<=" 2) |"
        v=$(ratio "$(get "$id" "$PIPE" rps)" "$(get "$base" "$PIPE" rps)"); echo "| $label -P $PIPE >= 2.5x its Lua baseline | $(fmt2 "$v")x | $(verdict "$v" ">=" 2.5) |"
    done
    v=$(ratio "$(get slidinglog "$PIPE" rps)" "$(get classdojo "$PIPE" rps)"); echo "| RL.SLIDINGLOG -P $PIPE >= 2x ClassDojo's MULTI | $(fmt2 "$v")x | $(verdict "$v" ">=" 2) |"
    v=$(ratio "$(get slidinglog 1 rps)" "$(get classdojo 1 rps)"); echo "| RL.SLIDINGLOG >= 2x ClassDojo's MULTI | $(fmt2 "$v")x | $(verdict "$v" ">=" 2) |"
    if [ -f "$OUT/memory.tsv" ]; then
        for k in rl_token rl_leaky rl_window_fixed rl_window_sliding; do
            v=$(ratio "$(mget "$k" 5)" "$(mget incr_ttl 5)")
            echo "| $(mget "$k" 2) key <= 1.47x an INCR key with a TTL | $(fmt2 "$v")x | $(verdict "$v" "<=" 1.47) |"
        done
    fi
} >"$results"

# --- plot --------------------------------------------------------------------------------------------
# plot-P.dat: x, label, RL req/s, baseline req/s, INCR req/s of the tool (for the floor line).
have_plot=0
if command -v gnuplot >/dev/null; then
    groups=("TOKEN" "TOKEN INTERVAL" "LEAKY" "LEAKY NODELAY" "WINDOW FIXED" "WINDOW SLIDING" "SLIDINGLOG")
    for p in 1 "$PIPE"; do
        x=0
        for g in "${groups[@]}"; do
            read -r rl_id rl_tool < <(awk -F'\t' -v g="$g" -v p="$p" '$4 == g && $5 == "rl" && $6 == p { print $1, $3 }' "$summary")
            base_id=$(awk -F'\t' -v g="$g" -v p="$p" '$4 == g && $5 == "base" && $6 == p { print $1 }' "$summary")
            floor_id=$(awk -F'\t' -v t="$rl_tool" -v p="$p" '$3 == t && $5 == "floor" && $6 == p { print $1 }' "$summary")
            printf '%d\t%s\t%s\t%s\t%s\n' "$x" "$g" "$(get "$rl_id" "$p" rps)" "$(get "$base_id" "$p" rps)" "$(get "$floor_id" "$p" rps)"
            x=$((x + 1))
        done >"$OUT/plot-$p.dat"
    done
    if gnuplot -e "dat1='$OUT/plot-1.dat'; datp='$OUT/plot-$PIPE.dat'; pipeline='$PIPE'; outfile='$OUT/benchmarks.png'; subtitle='$(machine nproc) CPUs, $(machine cpu), Redis $(machine redis | cut -d' ' -f1 | sed 's/v=//'); $CLIENTS connections, $KEYS random keys, median of $REPS'" \
        scripts/bench-plot.gp 2>"$OUT/gnuplot.log"; then
        have_plot=1
    else
        cat "$OUT/gnuplot.log" >&2
    fi
else
    log "gnuplot is not installed (Debian package gnuplot-nox): no plot"
fi

# --- smoke verdict, or the doc ------------------------------------------------------------------------
if [ "$mode" = smoke ]; then
    # Every figure: a number in each of the runs, no failed call, the calls all counted.
    awk -F'\t' 'NR > 1 {
            ok = $5 + 0 > 0 && $6 != "" && $7 != "" && $8 + 0 > 0 && $10 == 0 && $9 + 0 >= $4 + 0
            printf "%s figure %s -P %s run %s: %s req/s, p50 %s, p99 %s, %s µs/call, %s calls, %s failed\n",
                ok ? "ok  " : "FAIL", $1, $2, $3, $5, $6, $7, $8, $9, $10
        }' "$raw" >>"$checks"
    if [ "$do_memory" -eq 1 ]; then
        tail -n +2 "$OUT/memory.tsv" | while IFS=$'\t' read -r kind label n entries bytes status; do
            ok=$(awk -v b="$bytes" -v s="$status" 'BEGIN { print (b + 0 > 0 && s == "ok") ? 1 : 0 }')
            check "memory $kind: $bytes bytes per key" "$ok" "status $status"
        done
        c=0
        [ "$(tail -n +2 "$OUT/memory.tsv" | wc -l)" -ne 14 ] || c=1
        check "memory: all 14 kinds measured" "$c" "see memory.tsv"
    fi
    if [ "$do_micro" -eq 1 ]; then
        tail -n +2 "$OUT/micro.tsv" | while IFS=$'\t' read -r name ns ir; do
            ok=$(awk -v a="$ns" -v b="$ir" 'BEGIN { print (a + 0 > 0 && b + 0 > 0) ? 1 : 0 }')
            check "micro $name: $ns ns, ${ir:-?} instructions" "$ok" "a figure is missing"
        done
        c=0
        [ "$(tail -n +2 "$OUT/micro.tsv" | wc -l)" -ne "$("$TOOLS/bench-micro" --list | wc -l)" ] || c=1
        check "micro: every case measured" "$c" "see micro.tsv"
    fi
    missing=$(grep -c -E '\| n/a \|' "$results" || true)
    check "report: every table cell filled" "$([ "$missing" -eq 0 ] && echo 1 || echo 0)" "$missing rows with n/a in $results"
    if command -v gnuplot >/dev/null; then
        check "plot drawn" "$([ "$have_plot" -eq 1 ] && [ -s "$OUT/benchmarks.png" ] && echo 1 || echo 0)" "see $OUT/gnuplot.log"
    else
        echo "skip plot: gnuplot is not installed (Debian package gnuplot-nox)" >>"$checks"
    fi
    grep -E '^FAIL' "$checks" || true
    passed=$(grep -c '^ok' "$checks" || true)
    failed=$(grep -c '^FAIL' "$checks" || true)
    echo "bench-smoke: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit
fi

cat "$results"
grep -E '^FAIL' "$checks" >&2 && log "some baseline checks failed: see $checks"
log "results in $OUT/ (results.md, benchmarks.png, summary.tsv, raw.tsv, memory.tsv, micro.tsv)"
if [ "$update_doc" -eq 1 ]; then
    doc=docs/benchmarks.md
    grep -q '^<!-- bench:begin -->$' "$doc" && grep -q '^<!-- bench:end -->$' "$doc" ||
        fail_hard "$doc has no <!-- bench:begin --> / <!-- bench:end --> lines to put the results between"
    awk -v results="$results" '
        /^<!-- bench:begin -->$/ { print; while ((getline l < results) > 0) print l; skip = 1; next }
        /^<!-- bench:end -->$/ { skip = 0 }
        !skip' "$doc" >"$tmp/doc.md"
    cp "$tmp/doc.md" "$doc"
    [ "$have_plot" -eq 0 ] || cp "$OUT/benchmarks.png" docs/benchmarks.png
    log "updated $doc$([ "$have_plot" -eq 0 ] || echo " and docs/benchmarks.png")"
fi
