#!/usr/bin/env bash
# memory.sh -- memory per key of each kind of key. The module's kinds are the suite's generated rows
# (scripts/bench/limiter-rows.py, from the running module's COMMAND DOCS and scripts/bench/values.txt: one
# per limiter and mode, RL.ALL's and RL.CHECK's, whose policies it sets first), so a new limiter gets its
# memory row with no edit here. Written
# here are the others: an INCR counter with a TTL (the calibration, what the report compares with),
# CL.THROTTLE's string, the Lua baselines' keys, a concurrency limit's key holding 1 lease and 10 (of 10
# slots; RL.ACQUIRE has no generated row), and the sorted-set logs (RL.SLIDINGLOG's and ClassDojo's)
# measured full, at limit 10 and 100, on fewer keys.
#
# For each kind: FLUSHALL, read used_memory, create the keys (pipelined, with bench-multi --fill), read
# used_memory again; the delta divided by the number of keys is the figure. Every key name is 16 bytes
# (mem:NNNNNNNNNNNN; the I-th key of a request that makes several, as RL.ALL does one per clause,
# meI:NNNNNNNNNNNN, so that its figure is their average) and every key has a TTL of a day or more.
#
#   scripts/bench/memory.sh [--port PORT] [--out FILE]
#   scripts/bench/memory.sh --kinds --from DIR    the kinds a run measures, one id a line, in order, with
#                                                 no server: the generated ones from the COMMAND DOCS and
#                                                 COMMAND INFO saved in DIR (DIR/commands of a suite run)
#
# Without --port it starts its own redis-server with the module by scripts/lib/server.sh (loopback, free
# port, temp dir, no persistence) and stops it with SHUTDOWN NOSAVE; with --port it uses that server and
# FLUSHALLs it.
# Output: a TSV table (to FILE, default stdout): kind, label, keys, entries per key, bytes per key, and
# "ok" or what went wrong (the key count after the fill must be the number of keys made). A generated
# kind's id is its row's id in the suite's figures.tsv.
#
# Environment: BENCH_MEM_KEYS (10^6 keys per kind), BENCH_MEM_LOG10_KEYS (10^5 logs of 10 entries),
# BENCH_MEM_LOG100_KEYS (10^4 logs of 100 entries), BENCH_TOOLS (where bench-multi is built, default
# build/bench-tools), CC; REDIS_SERVER, REDIS_CLI and RL_MODULE as in scripts/lib/server.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/server.sh

usage() {
    echo "usage: scripts/bench/memory.sh [--port PORT] [--out FILE] | --kinds --from DIR" >&2
    exit 2
}
port="" out=/dev/stdout list_only=0 from=""
while [ $# -gt 0 ]; do
    case "$1" in
    --port) port=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --kinds) list_only=1; shift ;;
    --from) from=$2; shift 2 ;;
    *) usage ;;
    esac
done
[ "$list_only" -eq 0 ] || [ -n "$from" ] || usage

keys=${BENCH_MEM_KEYS:-1000000}
log10_keys=${BENCH_MEM_LOG10_KEYS:-100000}
log100_keys=${BENCH_MEM_LOG100_KEYS:-10000}
tools=${BENCH_TOOLS:-build/bench-tools}
# Parameters: lifetimes of a day or more, so that no key expires before it is counted.
day=86400000
k="mem:__rand_int__"

# The generated kinds: the suite's rows (id, label, stats, group, command line), their keys renamed to
# 16 bytes as above (limiter-rows.py stops, naming it, on an argument values.txt lacks).
generated_kinds() {
    local source=(--port "$port")
    [ -z "$from" ] || source=(--from "$from")
    scripts/bench/limiter-rows.py "${source[@]}" --key-prefix "" | awk -F'\t' -v keys="$keys" '{
        n = split($5, words, " "); distinct = 0; delete seen
        for (i = 1; i <= n; i++) if (words[i] ~ /__rand_int__/ && !(words[i] in seen)) seen[words[i]] = distinct++
        if (distinct > 10) {
            print "memory.sh: " $1 " makes " distinct " keys per call: only 10 can have 16-byte names" > "/dev/stderr"
            exit 1
        }
        line = ""
        for (i = 1; i <= n; i++) {
            w = words[i]
            if (w ~ /__rand_int__/) w = (distinct == 1 ? "mem" : "me" seen[w]) ":__rand_int__"
            line = line (i > 1 ? " " : "") w
        }
        print $1 "|" $2 (distinct > 1 ? ", " distinct " keys per call" : "") "|" keys "|1|cmd " line
    }'
}

# Every kind in order, one a line: id|label|keys|entries per key|bench-multi's workload. The calibration
# first, then the generated kinds ($generated), then CL.THROTTLE (redis-cell's arguments, as in
# scripts/bench/rows.sh), the baselines (by the SHAs loaded below) and the full logs.
all_kinds() {
    echo "incr_ttl|INCR counter + PEXPIRE|$keys|1|cmd INCR $k ; PEXPIRE $k $day"
    printf '%s\n' "$generated"
    cat <<KINDS
cl_throttle|CL.THROTTLE (string)|$keys|1|cmd CL.THROTTLE $k 99 100 $((day / 1000))
lua_token|Lua token bucket (hash)|$keys|1|cmd EVALSHA ${sha_token:-} 1 $k 100 100 $day
lua_gcra|Lua GCRA (string)|$keys|1|cmd EVALSHA ${sha_gcra:-} 1 $k 100 100 $day
lua_fixed|Lua fixed window (INCR + PEXPIREAT)|$keys|1|cmd EVALSHA ${sha_fixed:-} 1 $k 100 $day
lua_sliding|Lua sliding window (hash)|$keys|1|cmd EVALSHA ${sha_sliding:-} 1 $k 100 $day
lease_1|RL.ACQUIRE, 1 lease (limit 10)|$keys|1|cmd RL.ACQUIRE $k 10 $day
lease_10|RL.ACQUIRE, 10 leases (limit 10)|$log10_keys|10|cmd RL.ACQUIRE $k 10 $day
rl_slog_10|RL.SLIDINGLOG, 10 entries|$log10_keys|10|cmd RL.SLIDINGLOG $k 10 $day
dojo_10|ClassDojo sorted set, 10 entries|$log10_keys|10|classdojo mem: 10 $day
rl_slog_100|RL.SLIDINGLOG, 100 entries|$log100_keys|100|cmd RL.SLIDINGLOG $k 100 $day
dojo_100|ClassDojo sorted set, 100 entries|$log100_keys|100|classdojo mem: 100 $day
KINDS
}

if [ "$list_only" -eq 1 ]; then
    generated=$(generated_kinds)
    all_kinds | cut -d'|' -f1
    exit 0
fi

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
scripts/bench/limiter-rows.py --port "$port" --setup "$port" # RL.CHECK's policies (FLUSHALL keeps them)

# measure KIND LABEL KEYS PER_KEY WORKLOAD...: KEYS keys, each made by PER_KEY requests in a row. A
# request that makes several keys (one per distinct key word: RL.ALL's clauses) is sent KEYS / that many
# times, a whole number of times: KEYS is rounded down to a multiple of it.
measure() {
    local kind=$1 label=$2 n=$3 per_key=$4 per_request before after got status=ok
    shift 4
    per_request=$(printf '%s\n' "$@" | awk '/__rand_int__/ && !seen[$0]++ { n++ } END { print (n > 0 ? n : 1) }')
    n=$((n / per_request * per_request))
    cli FLUSHALL SYNC >/dev/null
    sleep 0.2
    before=$(used_memory)
    "$tools/bench-multi" -p "$port" -c 8 -P 100 --fill "$per_key" -n $((n * per_key / per_request)) --name "$kind" "$@" >/dev/null ||
        status="errors"
    sleep 0.5 # let the dict finish rehashing (serverCron) and the client go away
    after=$(used_memory)
    got=$(cli DBSIZE)
    [ "$got" -eq "$n" ] || status="dbsize-$got"
    if [ "$per_key" -gt 1 ]; then # entries of one key: a log's members, or a lease key's leases
        local card sample
        sample=$(cli RANDOMKEY)
        if [ "$(cli TYPE "$sample")" = zset ]; then
            card=$(cli ZCARD "$sample")
        else
            card=$(cli EVAL "return #redis.call('RL.LEASES', KEYS[1])" 1 "$sample")
        fi
        [ "$card" -eq "$per_key" ] || status="entries-$card"
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$label" "$n" "$per_key" \
        "$(awk -v a="$after" -v b="$before" -v n="$n" 'BEGIN { printf "%.1f", (a - b) / n }')" "$status"
}

generated=$(generated_kinds)
mapfile -t kinds < <(all_kinds)
set -f # the workloads are split into words, never globbed
{
    printf 'kind\tlabel\tkeys\tentries\tbytes_per_key\tstatus\n'
    for line in "${kinds[@]}"; do
        IFS='|' read -r kind label n per_key workload <<<"$line"
        # shellcheck disable=SC2086 # one word per argument
        measure "$kind" "$label" "$n" "$per_key" $workload
    done
    cli FLUSHALL SYNC >/dev/null
} >"$out"
