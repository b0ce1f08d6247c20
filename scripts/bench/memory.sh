#!/usr/bin/env bash
# Memory per key of each kind of limiter key, beside an INCR counter with a TTL and the Lua/MULTI
# baselines' keys: for each kind, FLUSHALL, read used_memory, create the keys (pipelined, with
# bench-multi), read used_memory again; the delta divided by the number of keys is the figure. Sorted-set
# logs (RL.SLIDINGLOG and ClassDojo's) are measured full, at limit 10 and 100, on fewer keys.
#
#   scripts/bench/memory.sh [--port PORT] [--out FILE]
#
# Without --port it starts its own redis-server with the module by scripts/lib/server.sh (loopback, free
# port, temp dir, no persistence) and stops it with SHUTDOWN NOSAVE; with --port it uses that server and
# FLUSHALLs it.
# Output: a TSV table (to FILE, default stdout): kind, label, keys, entries per key, bytes per key, and
# "ok" or what went wrong (the key count after the fill must be the number of keys made).
#
# Environment: BENCH_MEM_KEYS (10^6 keys per kind), BENCH_MEM_LOG10_KEYS (10^5 logs of 10 entries),
# BENCH_MEM_LOG100_KEYS (10^4 logs of 100 entries), BENCH_TOOLS (where bench-multi is built, default
# build/bench-tools), CC; REDIS_SERVER, REDIS_CLI and RL_MODULE as in scripts/lib/server.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/server.sh

port="" out=/dev/stdout
while [ $# -gt 0 ]; do
    case "$1" in
    --port) port=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: scripts/bench/memory.sh [--port PORT] [--out FILE]" >&2; exit 2 ;;
    esac
done

keys=${BENCH_MEM_KEYS:-1000000}
log10_keys=${BENCH_MEM_LOG10_KEYS:-100000}
log100_keys=${BENCH_MEM_LOG100_KEYS:-10000}
tools=${BENCH_TOOLS:-build/bench-tools}

BENCH_TOOLS=$tools scripts/bench/tools.sh multi

# Without --port, a server of our own (scripts/lib/server.sh), stopped on exit.
trap server_stop EXIT
trap 'exit 1' HUP INT TERM # so that the EXIT trap stops the server
if [ -z "$port" ]; then
    # shellcheck disable=SC2119 # no extra server arguments
    server_start || { echo "bench-memory: could not start redis-server" >&2; exit 1; }
    port=$SERVER_PORT
fi

cli() { "$REDIS_CLI" -p "$port" "$@"; }
used_memory() { cli INFO memory | tr -d '\r' | sed -n 's/^used_memory://p'; }
load() { cli SCRIPT LOAD "$(cat "scripts/bench/baselines/$1.lua")"; }
sha_token=$(load token_bucket)
sha_gcra=$(load gcra)
sha_fixed=$(load fixed_window)
sha_sliding=$(load sliding_window)

# Parameters: lifetimes of a day or more, so that no key expires before it is counted.
day=86400000

# measure KIND LABEL KEYS PER_KEY WORKLOAD...: KEYS keys, each made by PER_KEY requests in a row.
measure() {
    local kind=$1 label=$2 n=$3 per_key=$4
    shift 4
    cli FLUSHALL SYNC >/dev/null
    sleep 0.2
    local before after got status=ok
    before=$(used_memory)
    "$tools/bench-multi" -p "$port" -c 8 -P 100 --fill "$per_key" -n $((n * per_key)) --name "$kind" "$@" >/dev/null ||
        status="errors"
    sleep 0.5 # let the dict finish rehashing (serverCron) and the client go away
    after=$(used_memory)
    got=$(cli DBSIZE)
    [ "$got" -eq "$n" ] || status="dbsize-$got"
    if [ "$per_key" -gt 1 ]; then
        local card
        card=$(cli ZCARD "$(cli RANDOMKEY)")
        [ "$card" -eq "$per_key" ] || status="zcard-$card"
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$label" "$n" "$per_key" \
        "$(awk -v a="$after" -v b="$before" -v n="$n" 'BEGIN { printf "%.1f", (a - b) / n }')" "$status"
}

{
    printf 'kind\tlabel\tkeys\tentries\tbytes_per_key\tstatus\n'
    k="mem:__rand_int__"
    measure incr_ttl "INCR counter + PEXPIRE" "$keys" 1 cmd INCR $k \; PEXPIRE $k $day
    measure rl_token "RL.TOKEN" "$keys" 1 cmd RL.TOKEN $k 100 100 $day
    measure rl_token_interval "RL.TOKEN INTERVAL" "$keys" 1 cmd RL.TOKEN $k 100 100 $day INTERVAL
    measure rl_leaky "RL.LEAKY" "$keys" 1 cmd RL.LEAKY $k 100 100 $day
    measure cl_throttle "CL.THROTTLE (string)" "$keys" 1 cmd CL.THROTTLE $k 99 100 $((day / 1000))
    measure rl_window_fixed "RL.WINDOW FIXED" "$keys" 1 cmd RL.WINDOW $k 100 $day FIXED
    measure rl_window_sliding "RL.WINDOW SLIDING" "$keys" 1 cmd RL.WINDOW $k 100 $day SLIDING
    measure lua_token "Lua token bucket (hash)" "$keys" 1 cmd EVALSHA "$sha_token" 1 $k 100 100 $day
    measure lua_gcra "Lua GCRA (string)" "$keys" 1 cmd EVALSHA "$sha_gcra" 1 $k 100 100 $day
    measure lua_fixed "Lua fixed window (INCR + PEXPIREAT)" "$keys" 1 cmd EVALSHA "$sha_fixed" 1 $k 100 $day
    measure lua_sliding "Lua sliding window (hash)" "$keys" 1 cmd EVALSHA "$sha_sliding" 1 $k 100 $day
    measure rl_slog_10 "RL.SLIDINGLOG, 10 entries" "$log10_keys" 10 cmd RL.SLIDINGLOG $k 10 $day
    measure dojo_10 "ClassDojo sorted set, 10 entries" "$log10_keys" 10 classdojo mem: 10 $day
    measure rl_slog_100 "RL.SLIDINGLOG, 100 entries" "$log100_keys" 100 cmd RL.SLIDINGLOG $k 100 $day
    measure dojo_100 "ClassDojo sorted set, 100 entries" "$log100_keys" 100 classdojo mem: 100 $day
    cli FLUSHALL SYNC >/dev/null
} >"$out"
