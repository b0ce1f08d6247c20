#!/usr/bin/env bash
# The Node helper's resilience tests (clients/node/test-resilience, node's built-in runner): each test
# file starts its own redis-server with the module on a free port of 127.0.0.1, stops it (SHUTDOWN NOSAVE,
# SIGKILL), pauses it (DEBUG SLEEP, CLIENT PAUSE) and restarts it on the same port, to see what
# createLimiter and the middlewares do meanwhile. The files write the pid of every server they start into
# a directory of this script's, and the trap kills whichever is still running, whatever happened.
# Prints the project's closing line "node-resilience: N passed, N failed". Dependencies come from `npm ci`.
set -u
cd "$(dirname "$0")/../.." || exit 2
# shellcheck source=clients/node/tap-run.sh
. clients/node/tap-run.sh
[ -d clients/node/node_modules ] || { echo "FAIL node-resilience: no clients/node/node_modules (make test runs npm ci)"; echo "node-resilience: 0 passed, 1 failed"; exit 1; }
[ -f build/ratelimit.so ] || { echo "FAIL node-resilience: build/ratelimit.so is missing (run make)"; echo "node-resilience: 0 passed, 1 failed"; exit 1; }
pids=$(mktemp -d "${TMPDIR:-/tmp}/rl-node-resilience-XXXXXX") || exit 2
cleanup() {
    local f
    for f in "$pids"/*.pid; do
        [ -f "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null
    done
    rm -rf "$pids"
}
trap cleanup EXIT
RL_RESILIENCE_PIDS=$pids RL_MODULE=$PWD/build/ratelimit.so REDIS_SERVER=${REDIS_SERVER:-redis-server} \
    tap_run node-resilience clients/node/test-resilience/*.test.js
