#!/usr/bin/env bash
# The benchmark suite (docs/benchmarks.md), its runner: throughput and latency of every RL.* command beside
# INCR, beside the floor of the module API (FLOOR.CALL of scripts/bench/floor-module.c, build/floor.so,
# loaded in the same server) and beside the same limiter written the way users write it today
# (scripts/bench/baselines/*.lua, ClassDojo's MULTI), in-server time per call (INFO commandstats), memory
# per key and the algorithms alone (ns and instructions per decision). It measures whatever the module
# (build/ratelimit.so, or RL_MODULE) is. This script only runs the jobs in order, each a script of this
# folder that reads and writes the run's directory:
#
#   tools.sh        builds bench-multi, bench-micro and the floor module
#   machine.sh      machine.txt: the machine and the build (and waits for a quiet machine, if asked)
#   checks.sh       checks.txt: each baseline decides as its command
#   rows.sh         figures.tsv: the rows; the module's are generated from its COMMAND DOCS and values.txt
#   throughput.sh   raw.tsv: every run of every row
#   memory.sh       memory.tsv: bytes per key of each kind (the generated rows' too)
#   micro.sh        micro-ns.txt, micro.tsv: the algorithms alone
#   report.sh       summary.tsv, results.md, benchmarks.png (by plot.sh)
#   smoke.sh        with --smoke: smoke-checks.txt and the verdict
#
#   scripts/bench/suite.sh            full run (make bench): results in build/bench/
#   scripts/bench/suite.sh --doc      full run, then docs/benchmarks.png and the generated part of
#                                     docs/benchmarks.md are replaced by this run's (make bench-doc)
#   scripts/bench/suite.sh --smoke    tiny run for make test (build/bench-smoke/): checks that every figure
#                                     is produced and that every baseline decides correctly; asserts
#                                     nothing about speed. Prints "bench-smoke: N passed, N failed".
#   --no-memory, --no-micro           leave those parts out
#
# One redis-server with the module and the floor module is started on loopback by scripts/lib/server.sh
# (free port, temp dir, --save "" --appendonly no) and stopped with SHUTDOWN NOSAVE.
#
# Environment (full-run defaults): BENCH_QUIET_WAIT=0 (machine.sh), BENCH_N=200000 requests per run
# without pipelining, BENCH_NP=1000000 with, BENCH_REPS=3, BENCH_KEYS=100000, BENCH_CLIENTS=50,
# BENCH_PIPELINE=16, BENCH_WARMUP=200000, BENCH_MICRO_N=10000000 decisions per micro case
# (BENCH_CALLGRIND_N=100000 under callgrind), the memory counts of scripts/bench/memory.sh
# (BENCH_MEM_KEYS...), BENCH_OUT=build/bench, BENCH_TOOLS=build/bench-tools, CC. The binaries:
# REDIS_SERVER, REDIS_CLI, REDIS_BENCHMARK (default from PATH); the module: RL_MODULE; the floor module:
# FLOOR_MODULE (default build/floor.so, built by tools.sh when missing or older).
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
    [ "$update_doc" -eq 0 ] || { echo "suite.sh: --doc needs a full run" >&2; exit 2; }
fi
OUT=${BENCH_OUT:-build/bench}
export BENCH_TOOLS=${BENCH_TOOLS:-build/bench-tools}
export FLOOR_MODULE=${FLOOR_MODULE:-build/floor.so}
export REDIS_SERVER REDIS_CLI REDIS_BENCHMARK

fail_hard() { echo "bench: $*" >&2; exit 1; }

# The run's counts, for the jobs and the report.
write_settings() {
    echo "mode=$mode"
    echo "requests=${BENCH_N:-200000}"
    echo "requests_pipelined=${BENCH_NP:-1000000}"
    echo "reps=${BENCH_REPS:-3}"
    echo "keys=${BENCH_KEYS:-100000}"
    echo "clients=${BENCH_CLIENTS:-50}"
    echo "pipeline=${BENCH_PIPELINE:-16}"
    echo "warmup=${BENCH_WARMUP:-200000}"
    echo "micro_decisions=${BENCH_MICRO_N:-10000000}"
    echo "callgrind_decisions=${BENCH_CALLGRIND_N:-100000}"
}

server_module >/dev/null || fail_hard "no module to measure"
command -v "$REDIS_BENCHMARK" >/dev/null || fail_hard "$REDIS_BENCHMARK is missing (Debian package redis-tools)"
scripts/bench/tools.sh
mkdir -p "$OUT"
rm -rf "$OUT"/*.tsv "$OUT"/*.txt "$OUT"/results.md "$OUT"/plot-*.dat "$OUT"/benchmarks.png "$OUT"/commands
write_settings >"$OUT/settings.txt"
scripts/bench/machine.sh >"$OUT/machine.txt"

trap server_stop EXIT
trap 'exit 1' HUP INT TERM # so that the EXIT trap stops the server
server_start --loadmodule "$(realpath "$FLOOR_MODULE")" || fail_hard "could not start $REDIS_SERVER"
echo "bench: redis-server $("$REDIS_SERVER" --version | sed 's/.*v=\([^ ]*\).*/\1/') on 127.0.0.1:$SERVER_PORT (pid $SERVER_PID)" >&2

scripts/bench/checks.sh --port "$SERVER_PORT" --out "$OUT/checks.txt"
scripts/bench/rows.sh --port "$SERVER_PORT" "$OUT"
scripts/bench/throughput.sh --port "$SERVER_PORT" "$OUT"
if [ "$do_memory" -eq 1 ]; then
    echo "bench: memory per key" >&2
    scripts/bench/memory.sh --port "$SERVER_PORT" --out "$OUT/memory.tsv"
fi
server_stop
[ "$do_micro" -eq 0 ] || scripts/bench/micro.sh "$OUT"

if [ "$mode" = smoke ]; then
    scripts/bench/report.sh --quiet "$OUT"
    smoke_args=("$OUT")
    [ "$do_memory" -eq 1 ] || smoke_args=(--no-memory "${smoke_args[@]}")
    [ "$do_micro" -eq 1 ] || smoke_args=(--no-micro "${smoke_args[@]}")
    scripts/bench/smoke.sh "${smoke_args[@]}"
else
    report_args=("$OUT")
    [ "$update_doc" -eq 0 ] || report_args=(--doc "$OUT")
    scripts/bench/report.sh "${report_args[@]}"
fi
