#!/usr/bin/env bash
# The Node helper's tests (clients/node/test, node's built-in runner): start a throwaway redis-server
# with the module and its test clock (scripts/lib/server.sh), run the test files one after another (they
# share the server and its clock), stop the server, and turn the runner's TAP totals into the project's
# closing line "node: N passed, N failed". Dependencies come from `npm ci` (mk/clients.mk).
set -u
cd "$(dirname "$0")/../.." || exit 2
[ -d clients/node/node_modules ] || { echo "FAIL node: no clients/node/node_modules (make test runs npm ci)"; echo "node: 0 passed, 1 failed"; exit 1; }
. scripts/lib/server.sh
trap server_stop EXIT
server_start --module-arg test-clock || exit 2
out=$(RL_REDIS_PORT=$SERVER_PORT node --test --test-concurrency=1 --test-reporter=tap clients/node/test/*.test.js 2>&1)
rc=$?
printf '%s\n' "$out" | grep -E '^(not ok|# (tests|pass|fail))' | sed 's/^not ok/FAIL node: not ok/'
[ $rc -eq 0 ] || printf '%s\n' "$out" | tail -n 60
pass=$(sed -n 's/^# pass //p' <<<"$out" | tail -n 1)
fail=$(sed -n 's/^# fail //p' <<<"$out" | tail -n 1)
echo "node: ${pass:-0} passed, ${fail:-1} failed"
[ $rc -eq 0 ]
