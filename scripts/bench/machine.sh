#!/usr/bin/env bash
# machine.sh -- what the report says of the machine and the build a benchmark run measured (machine.txt:
# key=value lines): whether it was quiet, the date, CPUs, kernel, server, module build and git commit, and
# the load and redis-servers running at the start. On a shared machine only ratios within one run
# compare; this says how much to trust even those.
#
#   scripts/bench/machine.sh >DIR/machine.txt
#
# BENCH_QUIET_WAIT=S: first wait up to S seconds (polling every 60 s) for a quiet machine: 1-minute load
# below BENCH_QUIET_LOAD (0.7) and no redis-server running. REDIS_SERVER and RL_MODULE as in
# scripts/lib/server.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/server.sh
MODULE=$(server_module)

log() { echo "bench: $*" >&2; }

# Prints what it found.
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

quiet="not waited for"
if [ "${BENCH_QUIET_WAIT:-0}" -gt 0 ]; then
    quiet=$(wait_for_quiet)
    log "machine $quiet"
fi
echo "quiet=$quiet"
echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
echo "nproc=$(nproc)"
echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "kernel=$(uname -sr)"
echo "redis=$("$REDIS_SERVER" --version | sed -E 's/.*v=([^ ]*).*malloc=([^ ]*).*/\1 (\2)/')"
echo "module=$(sha256sum "$MODULE" | cut -c1-12)"
echo "git=$(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- module algorithms 2>/dev/null || echo ' with uncommitted changes in module/ or algorithms/')"
echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
echo "redis_servers_start=$(pgrep -c -x redis-server || true)"
