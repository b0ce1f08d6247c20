"""redis_ratelimit: Python calls for the redis-ratelimit module's RL.* commands (limits.py), their HTTP
headers (headers.py), framework-neutral request checks (policy.py) and a Flask middleware (flask.py,
imported on its own so that the rest needs only redis-py)."""

from .headers import rate_limit_headers
from .limits import (AcquireResult, AllResult, Concurrency, Lease, Leaky, Result, SlidingLog, Token, Window,
                     acquire, leases, limit, limit_all, release, renew)
from .policy import Decision, Policy, check

__all__ = ["AcquireResult", "AllResult", "Concurrency", "Decision", "Lease", "Leaky", "Policy", "Result",
           "SlidingLog", "Token", "Window", "acquire", "check", "leases", "limit", "limit_all",
           "rate_limit_headers", "release", "renew"]
