"""redis_ratelimit: Python calls for the redis-ratelimit module's RL.* commands (limits.py), their HTTP
headers (headers.py), framework-neutral request checks (policy.py) and a Flask middleware (flask.py,
imported on its own so that the rest needs only redis-py)."""

from .headers import rate_limit_headers
from .limits import (AcquireResult, AllResult, AtMostResult, Concurrency, Lease, Leaky, LockInfo, Lockout, Quota,
                     Result, SlidingLog, Smooth, ThrottleResult, Token, Window, acquire, block, leases, limit,
                     limit_all, lockinfo, release, renew, reset, throttle, unblock)
from .policy import Decision, Policy, check

__all__ = ["AcquireResult", "AllResult", "AtMostResult", "Concurrency", "Decision", "Lease", "Leaky", "LockInfo",
           "Lockout", "Policy", "Quota", "Result", "SlidingLog", "Smooth", "ThrottleResult", "Token", "Window",
           "acquire", "block", "check", "leases", "limit", "limit_all", "lockinfo", "rate_limit_headers", "release",
           "renew", "reset", "throttle", "unblock"]
