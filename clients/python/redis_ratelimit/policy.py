"""Framework-neutral request limiting: named policies, one decision per request, and the decision's
HTTP headers and 429 body. The Flask middleware (flask.py) is a thin layer over `check_request()`.
(These policies live in the application; stored_policy.py has the ones kept in Redis, RL.POLICY.)

The idea: one policy is one RL.* command; several run as one atomic RL.ALL, so a request is admitted by
all of them or consumes from none. Each client key gets one Redis key per policy, all under the same
hash tag so that RL.ALL also works on Redis Cluster."""

import time
from dataclasses import dataclass
from typing import List, Sequence, Tuple

from .headers import problem, rate_limit_headers
from .limits import Concurrency, Result, Smooth, limit, limit_all


@dataclass(frozen=True)
class Policy:
    """A named limit: `name` is the draft's policy identifier, `spec` the limiter (Token, Window...).
    Not Concurrency: a lease must be released when the request ends, which a rate-limit check does not
    do (each request would hold its units until the lease expired); use acquire() and release(). Not
    Smooth: it reserves, and its wait_ms says how long to hold the request, which the middleware never
    does (and the headers have no mapping for a reservation: docs/headers.md); call limit() and wait."""
    name: str
    spec: object

    def __post_init__(self):
        if isinstance(self.spec, Concurrency):
            raise TypeError(f"policy {self.name!r}: Concurrency is not a rate limit (use acquire/release)")
        if isinstance(self.spec, Smooth):
            raise TypeError(f"policy {self.name!r}: Smooth reserves, its wait_ms is for the caller to wait "
                            "(use limit() and honour wait_ms)")


@dataclass(frozen=True)
class Decision:
    """One request's outcome: admitted or not, the retry for a denial (-1: never), the per-policy
    results, and how long the Redis round trip took (ns)."""
    allowed: bool
    retry_after_ms: int
    items: List[Tuple[str, object, Result]]
    elapsed_ns: int

    def headers(self) -> dict:
        return rate_limit_headers(self.items, self.allowed, self.retry_after_ms)

    def violated(self) -> List[str]:
        return [name for name, _, res in self.items if not res.allowed]

    def problem(self) -> dict:
        return problem(self.violated())


def redis_key(prefix: str, client_key: str, policy: Policy) -> str:
    return f"{prefix}{{{client_key}}}:{policy.name}"


def check_request(client, policies: Sequence[Policy], client_key: str, prefix: str = "rl:",
                  cost: int = 1) -> Decision:
    """Decide one request of `client_key` against every policy (RL.* for one, RL.ALL for several)."""
    start = time.perf_counter_ns()
    if len(policies) == 1:
        p = policies[0]
        res = limit(client, redis_key(prefix, client_key, p), p.spec, cost=cost)
        allowed, retry, results = res.allowed, res.retry_after_ms, [res]
    else:
        out = limit_all(client, [(redis_key(prefix, client_key, p), p.spec) for p in policies], cost=cost)
        allowed, retry, results = out.allowed, out.retry_after_ms, out.limits
    elapsed = time.perf_counter_ns() - start
    items = [(p.name, p.spec, r) for p, r in zip(policies, results)]
    return Decision(allowed, retry, items, elapsed)
