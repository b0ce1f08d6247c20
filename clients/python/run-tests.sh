#!/usr/bin/env bash
# The Python helper's tests (clients/python/tests): start a throwaway redis-server with the module and
# its test clock (scripts/lib/server.sh), run them with Debian's python3 (python3-redis, python3-flask),
# stop the server. Prints "python: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
PYTHON=${RL_PYTHON:-/usr/bin/python3}
. scripts/lib/server.sh
trap server_stop EXIT
server_start --module-arg test-clock || exit 2
RL_REDIS_PORT=$SERVER_PORT "$PYTHON" clients/python/tests/run.py
