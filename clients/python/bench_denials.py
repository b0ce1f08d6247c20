"""The denial cache measured: an attack of N requests (50,000 by default) on one client key from one
process, through a Limiter with the cache and through one without, counting the limiter commands the
server ran (INFO commandstats) and the wall time. Run by hand against a server with the module:

    /usr/bin/python3 clients/python/bench_denials.py --port 6379 [--requests 50000]

The policy is 100 per minute (a fixed window), so 100 requests are admitted and the rest denied; with the
cache, the first denial (retry_after_ms about a minute) answers the others in this process. The key is
reset (RL.RESET) before each run."""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import redis  # noqa: E402

from redis_ratelimit import Policy, Window  # noqa: E402
from redis_ratelimit.limiter import Limiter  # noqa: E402


def limiter_calls(r: "redis.Redis[bytes]") -> int:
    return sum(int(v["calls"]) for k, v in r.info("commandstats").items() if k.startswith("cmdstat_rl."))


def attack(r: "redis.Redis[bytes]", requests: int, deny_cache: bool) -> None:
    policies = [Policy("attack", Window(100, 60_000, fixed=True))]
    limiter = Limiter(r, policies, prefix="bench:", deny_cache=deny_cache, timeout_ms=1000)
    r.execute_command("RL.RESET", "bench:{attacker}:attack")
    before = limiter_calls(r)
    start = time.perf_counter()
    admitted = sum(limiter.check("attacker").allowed for _ in range(requests))
    seconds = time.perf_counter() - start
    sent = limiter_calls(r) - before
    limiter.close()
    print(f"deny_cache={deny_cache!s:5}  requests {requests}  admitted {admitted}  "
          f"Redis calls {sent}  cache hits {limiter.stats.cache_hits}  {seconds:.2f} s  "
          f"({requests / seconds:,.0f} checks/s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--port", type=int, default=6379)
    ap.add_argument("--requests", type=int, default=50_000)
    args = ap.parse_args()
    r = redis.Redis(host="127.0.0.1", port=args.port)
    for deny_cache in (False, True):
        attack(r, args.requests, deny_cache)


if __name__ == "__main__":
    main()
