#!/usr/bin/env bash
# The Python limiters when Redis fails (clients/python/resilience): every test starts its own
# redis-server with the module on a free port of 127.0.0.1 (REDIS_SERVER, RL_MODULE), stops, pauses and
# restarts it, and kills it at the end whatever happens. Prints "python-resilience: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
PYTHON=${RL_PYTHON:-/usr/bin/python3}
RL_MODULE=$(realpath -- "${RL_MODULE:-build/ratelimit.so}") "$PYTHON" clients/python/tests/run.py clients/python/resilience python-resilience
