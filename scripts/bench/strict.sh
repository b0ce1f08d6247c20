#!/usr/bin/env bash
# strict.sh -- what the strict failover recipe costs (docs/benchmarks.md, "The strict failover recipe: WAIT
# after a grant"; issue 31). Replication is asynchronous: a grant the primary has not yet sent to its
# replica is lost if the primary dies, and the promoted replica admits that many requests again. The
# recipe sends `WAIT 1 100` after a limiter call on the same connection: once it answers 1, the grant is
# on the replica. This measures what that costs against the call alone, and against INCR with and without
# WAIT, on a primary with one replica (both on 127.0.0.1, free ports, build/ratelimit.so, started and
# stopped here through scripts/lib/server.sh), for each server given:
#
#   scripts/bench/strict.sh [SECONDS [RUNS [SERVER...]]]   (defaults: 3 s per row, 3 runs,
#                                                          redis-7.0 redis-8.0 valkey-8.1)
#   scripts/bench/strict.sh --tables FILE...               the tables again from saved outputs, their
#                                                          runs together (no server started)
#
# Each run starts, for each server in turn, a fresh pair and measures every row of scripts/bench/bench-strict.c (RL.TOKEN alone,
# then WAIT as a second round trip, WAIT pipelined; INCR alone, INCR + WAIT pipelined) with 1 connection,
# then with 16, SECONDS each after a half-second warm-up. Prints bench-strict's lines as they come, then
# one markdown table per connection count: per server and row, the median and range over the runs of
# calls per second, p50 and p99 latency, of the ratio of its calls per second to the same call without WAIT (taken
# within each run) and of the calls per acknowledgement of the replica (how many WAITs one answer
# released); and the WAITs that answered 0 over all runs (not acknowledged within 100 ms). A server that is not built (scripts/servers.sh build NAME, or make servers) is
# skipped with a note. Nothing is judged: these are figures to read, on a machine whose cores the primary,
# the replica and the load generator share.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/server.sh

# tables FILE...: the markdown tables from the measured lines ("NAME run=R ROW conns=... calls_per_s=...")
# in the files; other lines are skipped. Per connection count, per server and row, median (min-max) over the runs
# (a run is named by its file and number, so saved outputs of several invocations pool their runs).
tables() {
    awk '
function field(name,   i) { for (i = 4; i <= NF; i++) if (index($i, name "=") == 1) return substr($i, length(name) + 2); return "" }
function median(key,   n, i, j, v, sorted) {
    n = count[key]
    for (i = 1; i <= n; i++) { # insertion sort: a dozen runs at most
        v = values[key, i]
        for (j = i - 1; j >= 1 && sorted[j] > v; j--) sorted[j + 1] = sorted[j]
        sorted[j + 1] = v
    }
    return n % 2 ? sorted[(n + 1) / 2] : (sorted[n / 2] + sorted[n / 2 + 1]) / 2
}
# "median (min–max)" of the values kept under key, scaled and formatted.
function range(key, scale, fmt,   lo, hi, mid) {
    lo = sprintf(fmt, min[key] / scale); hi = sprintf(fmt, max[key] / scale); mid = sprintf(fmt, median(key) / scale)
    return lo == hi ? mid : mid " (" lo "–" hi ")"
}
function keep(key, v) {
    v += 0
    values[key, ++count[key]] = v
    if (!(key in min) || v < min[key]) min[key] = v
    if (!(key in max) || v > max[key]) max[key] = v
}
BEGIN {
    label["token"] = "`RL.TOKEN` alone"
    label["token-wait-2rt"] = "`RL.TOKEN`, then `WAIT 1 100` (2 round trips)"
    label["token-wait-pipe"] = "`RL.TOKEN` + `WAIT 1 100` pipelined"
    label["incr"] = "`INCR` alone"
    label["incr-wait-pipe"] = "`INCR` + `WAIT 1 100` pipelined"
    base["token"] = "token"; base["token-wait-2rt"] = "token"; base["token-wait-pipe"] = "token"
    base["incr"] = "incr"; base["incr-wait-pipe"] = "incr"
    split("token token-wait-2rt token-wait-pipe incr incr-wait-pipe", order, " ")
}
$2 ~ /^run=/ && ($3 in base) {
    server = $1; run = FILENAME ":" substr($2, 5); row = $3; conns = field("conns")
    rate[server, run, conns, row] = field("calls_per_s")
    keep(server SUBSEP conns SUBSEP row SUBSEP "rate", field("calls_per_s"))
    keep(server SUBSEP conns SUBSEP row SUBSEP "p50", field("p50_us"))
    keep(server SUBSEP conns SUBSEP row SUBSEP "p99", field("p99_us"))
    if (row ~ /wait/ && field("acks") > 0) keep(server SUBSEP conns SUBSEP row SUBSEP "per_ack", field("calls") / field("acks"))
    unacked[server, conns, row] += field("wait_unacked")
    denied[server, conns, row] += field("denied")
    if (!(server in seen)) { seen[server] = 1; servers[++nservers] = server }
    if (!((server, run) in seen_run)) { seen_run[server, run] = 1; nruns[server]++; run_of[server, nruns[server]] = run }
}
END {
    for (c = 1; c <= 2; c++) {
        conns = c == 1 ? 1 : 16
        printf "\n| %d connection%s: per server and call | calls/s | p50 µs | p99 µs | calls/s ÷ without WAIT | calls per replica ack | WAITs unacked |\n", conns, conns == 1 ? "" : "s"
        print "|---|---|---|---|---|---|---|"
        for (s = 1; s <= nservers; s++) {
            server = servers[s]
            for (o = 1; o <= 5; o++) {
                row = order[o]; k = server SUBSEP conns SUBSEP row
                if (!((k SUBSEP "rate") in min)) continue
                for (i = 1; i <= nruns[server]; i++) {
                    r = run_of[server, i]
                    if (rate[server, r, conns, base[row]] > 0) keep(k SUBSEP "ratio", rate[server, r, conns, row] / rate[server, r, conns, base[row]])
                }
                ratio = row == base[row] ? "1" : range(k SUBSEP "ratio", 1, "%.2f")
                waits = row ~ /wait/ ? unacked[server, conns, row] : "–"
                per_ack = (k SUBSEP "per_ack") in min ? range(k SUBSEP "per_ack", 1, "%.1f") : "–"
                note = denied[server, conns, row] ? sprintf(" (%d denied)", denied[server, conns, row]) : ""
                printf "| %s: %s%s | %s | %s | %s | %s | %s | %s |\n", server, label[row], note,
                    range(k SUBSEP "rate", 1000, "%.1fk"), range(k SUBSEP "p50", 1, "%.0f"), range(k SUBSEP "p99", 1, "%.0f"), ratio, per_ack, waits
            }
        }
    }
}' "$@"
}

if [ "${1:-}" = --tables ]; then
    shift
    tables "$@"
    exit 0
fi

seconds=${1:-3} runs=${2:-3}
shift $(($# < 2 ? $# : 2))
[ $# -gt 0 ] || set -- redis-7.0 redis-8.0 valkey-8.1
rows=(token token-wait-2rt token-wait-pipe incr incr-wait-pipe)
bin=build/bench-strict
results=$(mktemp) # the lines printed: NAME run=R and bench-strict's line

PRIMARY_PORT="" PRIMARY_PID="" PRIMARY_DIR="" REPLICA_PORT="" REPLICA_PID="" REPLICA_DIR=""

# server.sh keeps one server in SERVER_*: each of the pair is stopped by putting its own values back.
stop_pair() {
    SERVER_PORT=$REPLICA_PORT SERVER_PID=$REPLICA_PID SERVER_DIR=$REPLICA_DIR
    server_stop
    SERVER_PORT=$PRIMARY_PORT SERVER_PID=$PRIMARY_PID SERVER_DIR=$PRIMARY_DIR
    server_stop
    PRIMARY_PORT="" PRIMARY_PID="" PRIMARY_DIR="" REPLICA_PORT="" REPLICA_PID="" REPLICA_DIR=""
}
trap 'stop_pair; rm -f "$results"' EXIT
trap 'exit 130' INT TERM

# A primary, then its replica (the module loaded in both: the replica applies the module's effects),
# and wait until the replica's link is up and the primary counts it.
start_pair() {
    server_start >/dev/null || return 1
    PRIMARY_PORT=$SERVER_PORT PRIMARY_PID=$SERVER_PID PRIMARY_DIR=$SERVER_DIR
    SERVER_PORT="" SERVER_PID="" SERVER_DIR=""
    server_start --replicaof 127.0.0.1 "$PRIMARY_PORT" >/dev/null || return 1
    REPLICA_PORT=$SERVER_PORT REPLICA_PID=$SERVER_PID REPLICA_DIR=$SERVER_DIR
    local _
    for _ in $(seq 100); do
        if server_ask "$REPLICA_PORT" INFO replication | grep -q '^master_link_status:up' &&
            server_ask "$PRIMARY_PORT" INFO replication | grep -q '^connected_slaves:1'; then
            return 0
        fi
        sleep 0.1
    done
    echo "strict: the replica on port $REPLICA_PORT did not sync with the primary on $PRIMARY_PORT within 10 s" >&2
    return 1
}

mkdir -p build
${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Wall -Wextra -Werror -o "$bin" scripts/bench/bench-strict.c -lhiredis -lpthread

echo "strict: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(pgrep -c -x redis-server || true) other redis-server(s) running at the start; $seconds s per row, $runs runs" >&2
servers=()
for name in "$@"; do
    dir=$(scripts/servers.sh bindir "$name")
    if [ -x "$dir/redis-server" ]; then
        servers+=("$name")
        echo "strict: $name: $("$dir/redis-server" --version | sed -E 's/ sha=.*//')" >&2
    else
        echo "strict: $name skipped: $dir/redis-server is not built (make servers)" >&2
    fi
done
# Runs outside, servers inside: a slow spell of the shared machine falls on every server, not on one.
for run in $(seq "$runs"); do
    for name in "${servers[@]}"; do
        dir=$(scripts/servers.sh bindir "$name")
        export REDIS_SERVER=$dir/redis-server REDIS_CLI=$dir/redis-cli
        start_pair || exit 1
        for conns in 1 16; do
            for row in "${rows[@]}"; do
                line=$("$bin" "$PRIMARY_PORT" "$row" "$conns" "$seconds")
                echo "$name run=$run $line"
                echo "$name run=$run $line" >>"$results"
            done
        done
        stop_pair
    done
done

echo "strict: load at the end $(cut -d' ' -f1-3 /proc/loadavg)" >&2
tables "$results"
