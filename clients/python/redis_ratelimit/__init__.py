"""redis_ratelimit: Python calls for the redis-ratelimit module's RL.* commands (limits.py), its policies
kept in Redis (RL.POLICY and RL.CHECK: stored_policy.py), their HTTP headers (headers.py),
framework-neutral request checks (policy.py) and a Flask middleware (flask.py, imported on its own so
that the rest needs only redis-py)."""

from .headers import rate_limit_headers
from .limits import (AcquireResult, AllResult, AtMostResult, Concurrency, Lease, Leaky, LockInfo, Lockout, Quota,
                     Result, SlidingLog, Smooth, ThrottleResult, Token, Window, acquire, block, leases, limit,
                     limit_all, lockinfo, release, renew, reset, throttle, unblock)
from .policy import Decision, Policy, check_request
from .stored_policy import (StoredPolicy, check, policy_del, policy_flush, policy_get, policy_list,
                            policy_set)

__all__ = ["AcquireResult", "AllResult", "AtMostResult", "Concurrency", "Decision", "Lease", "Leaky", "LockInfo",
           "Lockout", "Policy", "Quota", "Result", "SlidingLog", "Smooth", "ThrottleResult", "Token", "Window",
           "StoredPolicy", "acquire", "block", "check", "check_request", "leases", "limit", "limit_all", "lockinfo",
           "policy_del", "policy_flush", "policy_get", "policy_list", "policy_set", "rate_limit_headers", "release",
           "renew", "reset", "throttle", "unblock"]
