#!/usr/bin/env bash
# The Node helper's tests (clients/node/test, node's built-in runner): start a throwaway redis-server
# with the module and its test clock (scripts/lib/server.sh), run the test files one after another (they
# share the server and its clock), stop the server, and turn the runner's TAP totals into the project's
# closing line "node: N passed, N failed". Dependencies come from `npm ci` (mk/clients.mk).
set -u
cd "$(dirname "$0")/../.." || exit 2
# shellcheck source=clients/node/tap-run.sh
. clients/node/tap-run.sh
[ -d clients/node/node_modules ] || { echo "FAIL node: no clients/node/node_modules (make test runs npm ci)"; echo "node: 0 passed, 1 failed"; exit 1; }
. scripts/lib/server.sh
trap server_stop EXIT
server_start --module-arg test-clock || exit 2
RL_REDIS_PORT=$SERVER_PORT tap_run node clients/node/test/*.test.js
