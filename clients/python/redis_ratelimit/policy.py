"""Framework-neutral request limiting: named policies, one decision per request, and the HTTP answer a
decision calls for (429 with the draft's headers and a problem+json body, 503 when Redis failed and the
limiter fails closed, 403 for a deny-listed request). The Limiter (limiter.py) and every middleware
(flask.py, starlette.py, fastapi.py, django.py) are built on these pieces; `check_request()` is the one
plain call, kept for code written before the Limiter.
(These policies live in the application; stored_policy.py has the ones kept in Redis, RL.POLICY.)

The idea: one policy is one RL.* command; several run as one atomic RL.ALL, so a request is admitted by
all of them or consumes from none. Each client key gets one Redis key per policy, all under the same
hash tag so that RL.ALL also works on Redis Cluster. The arguments are built and the reply read by pure
functions (`request_args`, `decision_of`), so the sync and async limiters share them and only send."""

import json
import time
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .headers import problem, rate_limit_headers
from .limits import (AllResult, Concurrency, Result, Smooth, Spec, all_args, command_args, parse_all,
                     parse_result)

# Where a decision came from (Decision.source).
FROM_REDIS, FROM_LOCAL, FROM_CACHE, FROM_FAILURE = "redis", "local", "cache", "failure"


@dataclass(frozen=True)
class Policy:
    """A named limit: `name` is the draft's policy identifier, `spec` the limiter (Token, Window...).
    Not Concurrency: a lease must be released when the request ends, which a rate-limit check does not
    do (each request would hold its units until the lease expired); use acquire() and release(). Not
    Smooth: it reserves, and its wait_ms says how long to hold the request, which the middleware never
    does (and the headers have no mapping for a reservation: docs/headers.md); call limit() and wait."""
    name: str
    spec: Spec

    def __post_init__(self) -> None:
        if isinstance(self.spec, Concurrency):
            raise TypeError(f"policy {self.name!r}: Concurrency is not a rate limit (use acquire/release)")
        if isinstance(self.spec, Smooth):
            raise TypeError(f"policy {self.name!r}: Smooth reserves, its wait_ms is for the caller to wait "
                            "(use limit() and honour wait_ms)")


Item = Tuple[str, Spec, Result]


@dataclass(frozen=True)
class Decision:
    """One request's outcome: admitted or not, the retry for a denial (-1: never), the per-policy
    results, how long the decision took (ns), and where it came from: "redis" (the module), "local"
    (the in-process limiter, Redis being unreachable), "cache" (a denial remembered in this process) or
    "failure" (Redis failed: the on_failure answer, no results)."""
    allowed: bool
    retry_after_ms: int
    items: List[Item]
    elapsed_ns: int
    source: str = FROM_REDIS

    @property
    def failed(self) -> bool:
        """Redis failed and no limiter decided: with allowed False, the middlewares answer 503."""
        return self.source == FROM_FAILURE

    def headers(self) -> Dict[str, str]:
        """RateLimit-Policy, RateLimit (and Retry-After on a denial); none without results."""
        if not self.items:
            return {}
        return rate_limit_headers(self.items, self.allowed, self.retry_after_ms)

    def violated(self) -> List[str]:
        return [name for name, _, res in self.items if not res.allowed]

    def problem(self) -> Dict[str, Any]:
        return problem(self.violated())

    def aged(self, elapsed_ms: int, elapsed_ns: int) -> "Decision":
        """This denial `elapsed_ms` later, as the denial cache answers it: every retry and reset counts
        down (never below 0), the rest as it was."""
        def down(ms: int) -> int:
            return ms if ms < 0 else max(0, ms - elapsed_ms)
        items = [(name, spec, replace(res, retry_after_ms=down(res.retry_after_ms),
                                      reset_after_ms=down(res.reset_after_ms))) for name, spec, res in self.items]
        return Decision(self.allowed, down(self.retry_after_ms), items, elapsed_ns, FROM_CACHE)


def redis_key(prefix: str, client_key: str, policy: Policy) -> str:
    return f"{prefix}{{{client_key}}}:{policy.name}"


def policy_keys(policies: Sequence[Policy], client_key: str, prefix: str) -> List[Tuple[str, Spec]]:
    """(Redis key, spec) for each policy of one client key."""
    return [(redis_key(prefix, client_key, p), p.spec) for p in policies]


def request_args(policies: Sequence[Policy], client_key: str, prefix: str = "rl:", cost: int = 1) -> List[object]:
    """The one command that decides a request: RL.* for one policy, RL.ALL for several."""
    limits = policy_keys(policies, client_key, prefix)
    if len(limits) == 1:
        return command_args(limits[0][0], limits[0][1], cost=cost)
    return all_args(limits, cost=cost)


def decision_of(policies: Sequence[Policy], reply: Any, elapsed_ns: int, source: str = FROM_REDIS) -> Decision:
    """The decision in the reply to request_args' command (or in a local limiter's Result/AllResult)."""
    if len(policies) == 1:
        res = reply if isinstance(reply, Result) else parse_result(reply)
        allowed, retry, results = res.allowed, res.retry_after_ms, [res]
    else:
        out = reply if isinstance(reply, AllResult) else parse_all(reply)
        allowed, retry, results = out.allowed, out.retry_after_ms, out.limits
    items = [(p.name, p.spec, r) for p, r in zip(policies, results)]
    return Decision(allowed, retry, items, elapsed_ns, source)


def check_request(client: Any, policies: Sequence[Policy], client_key: str, prefix: str = "rl:",
                  cost: int = 1) -> Decision:
    """Decide one request of `client_key` against every policy (RL.* for one, RL.ALL for several) with
    the client as it is: no timeout of its own, no failure mode, no cache (a redis.RedisError is
    raised). The Limiter (limiter.py) adds those."""
    start = time.perf_counter_ns()
    reply = client.execute_command(*request_args(policies, client_key, prefix, cost))
    return decision_of(policies, reply, time.perf_counter_ns() - start)


# --- the HTTP answer of a decision ------------------------------------------------------------------------

@dataclass(frozen=True)
class Refusal:
    """An HTTP answer that refuses a request: status, body, content type and headers."""
    status: int
    body: bytes
    content_type: str
    headers: Dict[str, str] = field(default_factory=dict)


UNAVAILABLE = Refusal(503, b"rate limiter unavailable\n", "text/plain")
# A deny-listed request: refused before any limiter is asked (docs: clients/python/README.md, Frameworks).
FORBIDDEN = Refusal(403, json.dumps({"type": "about:blank", "title": "Forbidden", "status": 403}).encode() + b"\n",
                    "application/problem+json")


def refusal(decision: Decision) -> Optional[Refusal]:
    """What to answer instead of the application: None when admitted; 503 when Redis failed and the
    limiter fails closed; else 429 with the headers and the draft's problem+json body."""
    if decision.allowed:
        return None
    if decision.failed:
        return UNAVAILABLE
    return Refusal(429, json.dumps(decision.problem()).encode() + b"\n", "application/problem+json",
                   decision.headers())


def admitted_headers(decision: Optional[Decision]) -> Dict[str, str]:
    """The headers an admitted response carries (none for an unlimited request or a failure)."""
    return decision.headers() if decision is not None and decision.allowed else {}


def merged(name: str, existing: Optional[str], ours: str) -> str:
    """A header value when a response already carries one of that name (a route's own limit inside an
    app-wide one): RateLimit-Policy and RateLimit are lists, so the items of both are kept; any other
    header keeps the one already there."""
    if existing is None:
        return ours
    if name.lower() in ("ratelimit-policy", "ratelimit"):
        return f"{existing}, {ours}"
    return existing
