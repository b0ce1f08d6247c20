#!/usr/bin/env bash
# slog-cost.sh -- the server time of one RL.SLIDINGLOG call in the cases where it used to grow with COST or
# with the limit, read from INFO commandstats (usec_per_call). Starts its own server (scripts/lib/server.sh)
# with whatever build/ratelimit.so is (RL_MODULE overrides), on the real clock, and prints one line per case:
#
#   big-cost      RL.SLIDINGLOG k 100000 60000 COST 100000, 50 times in a row (the first admitted, the
#                 other 49 blocked): the issue's case
#   blocked-cost1 limit 100000, 100000 calls of COST 1 fill the window, then 50 more (blocked): a blocked
#                 call reads the (limit - 1)-th newest entry of a log of 10^5 members
#   small         RL.SLIDINGLOG on 10^4 keys, limit 100 per day, COST 1, 10^5 calls (redis-benchmark): the
#                 ordinary case, to show it did not get slower
#
# Each case resets the statistics (CONFIG RESETSTAT) just before the calls it measures. Timings depend on
# the machine: compare builds on the same one.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/server.sh
trap server_stop EXIT
server_start >/dev/null || exit 1

usec() { server_cli INFO commandstats | tr -d '\r' | sed -n 's/^cmdstat_rl\.slidinglog:.*usec_per_call=\([0-9.]*\).*/\1/p'; }
calls() { server_cli INFO commandstats | tr -d '\r' | sed -n 's/^cmdstat_rl\.slidinglog:calls=\([0-9]*\).*/\1/p'; }

server_cli CONFIG RESETSTAT >/dev/null
for _ in $(seq 50); do echo "RL.SLIDINGLOG big 100000 60000 COST 100000"; done | server_cli >/dev/null
echo "big-cost calls=$(calls) usec_per_call=$(usec) members=$(server_cli ZCARD big)"

for _ in $(seq 100000); do echo "RL.SLIDINGLOG fill 100000 60000"; done | server_cli >/dev/null
server_cli CONFIG RESETSTAT >/dev/null
for _ in $(seq 50); do echo "RL.SLIDINGLOG fill 100000 60000"; done | server_cli >/dev/null
echo "blocked-cost1 calls=$(calls) usec_per_call=$(usec) members=$(server_cli ZCARD fill)"

server_cli CONFIG RESETSTAT >/dev/null
"${REDIS_BENCHMARK:-redis-benchmark}" -p "$SERVER_PORT" -n 100000 -r 10000 -c 50 -q \
    RL.SLIDINGLOG 'small:__rand_int__' 100 86400000 >/dev/null
echo "small calls=$(calls) usec_per_call=$(usec)"
