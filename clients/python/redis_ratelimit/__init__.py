"""redis_ratelimit: Python calls for the redis-ratelimit module's RL.* commands (limits.py), its policies
kept in Redis (RL.POLICY and RL.CHECK: stored_policy.py), leases held for a `with` block (held_lease.py),
their HTTP headers (headers.py), framework-neutral request checks (policy.py) and a Flask middleware
(flask.py, imported on its own so that the rest needs only redis-py). redis_ratelimit.asyncio has every
call again, with the same names, for redis.asyncio; commands.py lists which call sends which option.

The idea: every call is one command built once (its words, its reply's parser: _call.py), run by the
sync functions here on redis.Redis or redis.RedisCluster and awaited by the asyncio ones."""

from .headers import rate_limit_headers
from .held_lease import HeldLease, LeaseDenied, lease
from .limits import (AcquireResult, AllResult, AtMostResult, Concurrency, Lease, Leaky, LockInfo, Lockout, Quota,
                     Result, SlidingLog, Smooth, Spec, ThrottleResult, Token, Window, acquire, block, leases, limit,
                     limit_all, lockinfo, release, renew, reset, throttle, unblock)
from .lua_mode import ModeClient, with_mode
from .replicas import NotReplicated, ReplicaClient, with_replicas
from .policy import Decision, Policy, check_request
from .stored_policy import (StoredPolicy, check, policy_del, policy_flush, policy_get, policy_list,
                            policy_set)

__version__ = "1.5.0"

__all__ = ["AcquireResult", "AllResult", "AtMostResult", "Concurrency", "Decision", "HeldLease", "Lease",
           "LeaseDenied", "Leaky", "LockInfo", "Lockout", "Policy", "Quota", "Result", "SlidingLog", "Smooth", "Spec",
           "ThrottleResult", "Token", "Window", "StoredPolicy", "acquire", "block", "check", "check_request", "lease",
           "leases", "limit", "limit_all", "lockinfo", "policy_del", "policy_flush", "policy_get", "policy_list",
           "policy_set", "rate_limit_headers", "release", "renew", "reset", "throttle", "unblock"]
__all__ += ["ModeClient", "with_mode"]  # the Lua mode (lua_mode.py)
__all__ += ["NotReplicated", "ReplicaClient", "with_replicas"]  # grants that survive a failover (replicas.py)
