#!/usr/bin/env bash
# checks.sh -- the baselines decide as the commands do: before the benchmark measures a Lua script or
# ClassDojo's MULTI beside an RL.* command, this checks, on fresh keys against a limit of 3, that both admit
# the same requests with the same remaining counts and times (and CL.THROTTLE against RL.LEAKY NODELAY, the
# same GCRA), and that the baselines' keys expire when their limiter would be idle. The report counts these
# checks; a failed one is printed beside the figures.
#
#   scripts/bench/checks.sh --port PORT --out FILE
#
# FILE gets one line per check: "ok   what" or "FAIL what: detail". The server (REDIS_CLI against
# 127.0.0.1:PORT) must have the module; its keys are flushed afterwards. bench-multi (BENCH_TOOLS, default
# build/bench-tools) decides ClassDojo's MULTI from its replies.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/server.sh
BM=${BENCH_TOOLS:-build/bench-tools}/bench-multi

port="" CHECKS=""
while [ $# -gt 0 ]; do
    case "$1" in
    --port) port=$2; shift 2 ;;
    --out) CHECKS=$2; shift 2 ;;
    *) echo "usage: scripts/bench/checks.sh --port PORT --out FILE" >&2; exit 2 ;;
    esac
done
if [ -z "$port" ] || [ -z "$CHECKS" ]; then echo "usage: scripts/bench/checks.sh --port PORT --out FILE" >&2; exit 2; fi
SERVER_PORT=$port
: >"$CHECKS"

# check NAME OK(0/1) DETAIL: one line into CHECKS.
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

load_script() { server_cli SCRIPT LOAD "$(cat "scripts/bench/baselines/$1.lua")"; }
SHA_TOKEN=$(load_script token_bucket)
SHA_GCRA=$(load_script gcra)
SHA_FIXED=$(load_script fixed_window)
SHA_SLIDING=$(load_script sliding_window)
run_checks
