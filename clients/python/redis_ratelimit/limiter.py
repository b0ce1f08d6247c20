"""The request core: `Limiter` (redis.Redis) and `AsyncLimiter` (redis.asyncio.Redis) decide one request
of a client key against the application's policies, with a per-call timeout, a choice on failure, and a
local cache of denials.

    limiter = Limiter(redis.Redis(), [Policy("default", Window(100, 60_000, fixed=True))],
                      timeout_ms=50, on_failure="local")
    decision = limiter.check("user:42")          # Decision: .allowed, .headers(), .source

The idea:
- One policy is one RL.* call, several one RL.ALL (policy.py builds the arguments and reads the reply).
- The timeout bounds each call. A sync redis-py client has none of its own per call, so the limiter sends
  through a private connection pool that copies the client's connection settings with socket_timeout and
  socket_connect_timeout set to the timeout: a call that outlasts it raises and its connection is dropped
  (a late reply can never be read as another call's). The async limiter does the same and also bounds the
  whole call with asyncio.wait_for, dropping the connection when it is cancelled (redis-py 4.3 would
  otherwise hand the connection back with the reply still to come).
- A failure (a connection error, a timeout, a server that is loading, paused past the timeout, or read-only)
  makes Redis "down": the on_failure answer takes over, "deny" (a failed decision: 503), "allow" (let
  through, no headers) or "local" (local.py's limiter with the same specs), and Redis is tried again at
  most every retry_ms rather than paying the timeout on every call. Each way is one log line (logger
  "redis_ratelimit") and one counter (stats.to_fallback, stats.to_redis).
- A denial with retry_after_ms r >= deny_cache_min_ms is remembered for the client key: calls of at least
  that cost are denied here until r has passed, with no round trip (the cached decision counts down). A
  smaller cost may fit sooner, so it still asks Redis. Not cached: a denial that can never pass (-1), and
  policies whose denials change the limiter (a SlidingLog logs every attempt, denied ones too)."""

import asyncio
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import redis
import redis.asyncio

from .limits import SlidingLog
from .local import LocalLimiter, local_form_error
from .replicas import NotReplicated, inner_client
from .policy import (FROM_FAILURE, FROM_LOCAL, Decision, Policy, decision_of, policy_keys,
                     request_args)

log = logging.getLogger("redis_ratelimit")

ON_FAILURE = ("deny", "allow", "local")


@dataclass
class Stats:
    """What a limiter did, since it was made. calls: checks; redis_calls: commands sent; failures: those
    that failed; cache_hits: denials answered by the cache; local_calls: checks decided by the local
    limiter; failed_calls: checks answered by "deny" or "allow"; to_fallback / to_redis: the times Redis
    was found unreachable (the on_failure answer took over) and came back."""
    calls: int = 0
    redis_calls: int = 0
    failures: int = 0
    cache_hits: int = 0
    local_calls: int = 0
    failed_calls: int = 0
    to_fallback: int = 0
    to_redis: int = 0


def is_outage(error: BaseException) -> bool:
    """A failure of Redis itself (the on_failure answer applies), as opposed to a wrong command, which is
    raised: connection errors and timeouts, a loading, busy or read-only server, a cluster that is down, and
    a grant too few replicas acknowledged (NotReplicated: with_replicas)."""
    if isinstance(error, (redis.ConnectionError, redis.TimeoutError, asyncio.TimeoutError, OSError,
                          redis.exceptions.ReadOnlyError, NotReplicated)):
        return True
    return isinstance(error, redis.ResponseError) and str(error).split(" ", 1)[0] in (
        "BUSY", "LOADING", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN")


def monotonic_ms() -> int:
    return time.monotonic_ns() // 1_000_000


class DenialCache:
    """Denials by client key: (the decision, the cost it denied, when, until when), at most `size`, the
    least recently used dropped first. Thread-safe."""

    def __init__(self, size: int, min_ms: int, clock: Callable[[], int]):
        if size < 1:
            raise ValueError("deny_cache_size: must be at least 1")
        if min_ms < 0:
            raise ValueError("deny_cache_min_ms: must be a non-negative integer")
        self.size, self.min_ms, self.clock = size, min_ms, clock
        self.entries: "OrderedDict[str, Tuple[Decision, int, int]]" = OrderedDict()
        self.lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, client_key: str, cost: int) -> Optional[Decision]:
        now = self.clock()
        with self.lock:
            entry = self.entries.get(client_key)
            if entry is None:
                return None
            decision, denied_cost, since = entry
            elapsed = now - since
            if elapsed >= decision.retry_after_ms or elapsed < 0:
                del self.entries[client_key]
                return None
            if cost < denied_cost:
                return None
            self.entries.move_to_end(client_key)
        return decision.aged(elapsed, 0)

    def put(self, client_key: str, cost: int, decision: Decision) -> None:
        if decision.allowed or decision.retry_after_ms < self.min_ms:
            return
        with self.lock:
            self.entries[client_key] = (decision, cost, self.clock())
            self.entries.move_to_end(client_key)
            while len(self.entries) > self.size:
                self.entries.popitem(last=False)

    def forget(self, client_key: str) -> None:
        with self.lock:
            self.entries.pop(client_key, None)


class LimiterCore:
    """Everything but the sending, shared by Limiter and AsyncLimiter: the policies, the cache, whether
    Redis is up, the fallback answers and the counters."""

    def __init__(self, policies: Sequence[Policy], prefix: str, timeout_ms: Optional[int], on_failure: str,
                 retry_ms: int, deny_cache: bool, deny_cache_min_ms: int, deny_cache_size: int,
                 local_max_keys: int, clock: Callable[[], int]):
        self.policies = list(policies)
        if not self.policies:
            raise ValueError("policies: at least one policy")
        if on_failure not in ON_FAILURE:
            raise ValueError(f"on_failure: must be one of {', '.join(ON_FAILURE)}, not {on_failure!r}")
        if timeout_ms is not None and timeout_ms <= 0:
            raise ValueError("timeout_ms: must be a positive number of ms (or None: the client's own)")
        if retry_ms < 0:
            raise ValueError("retry_ms: must be a non-negative number of ms")
        if on_failure == "local":
            for p in self.policies:
                error = local_form_error(p.spec)
                if error is not None:
                    raise ValueError(f"on_failure='local': policy {p.name!r}: {error}")
        self.prefix, self.timeout_ms, self.on_failure, self.retry_ms = prefix, timeout_ms, on_failure, retry_ms
        self.clock = clock
        self.stats = Stats()
        self.cacheable = not any(isinstance(p.spec, SlidingLog) for p in self.policies)
        self.cache = DenialCache(deny_cache_size, deny_cache_min_ms, clock) if deny_cache else None
        self.local = LocalLimiter(local_max_keys) if on_failure == "local" else None
        self.state_lock = threading.Lock()
        self.down = False        # Redis failed, and has not answered since
        self.next_try_ms = 0     # while down: when a call may try Redis again

    def count(self, name: str) -> None:
        with self.state_lock:
            setattr(self.stats, name, getattr(self.stats, name) + 1)

    def args(self, client_key: str, cost: int) -> List[object]:
        return request_args(self.policies, client_key, self.prefix, cost)

    def before(self, client_key: str, cost: int) -> Optional[Decision]:
        """The answer without Redis, when there is one: a cached denial, or the fallback while Redis is
        down and not yet due to be tried again (one caller at a time gets to try it)."""
        self.count("calls")
        if cost < 0:
            raise ValueError(f"cost: must be a non-negative integer, not {cost}")
        if self.cache is not None:
            cached = self.cache.get(client_key, cost)
            if cached is not None:
                self.count("cache_hits")
                return cached
        with self.state_lock:
            if not self.down:
                return None
            now = self.clock()
            if now >= self.next_try_ms:
                self.next_try_ms = now + self.retry_ms  # this caller tries; the others fall back meanwhile
                return None
        return self.fallback(client_key, cost, 0)

    def answered(self, client_key: str, cost: int, reply: Any, elapsed_ns: int) -> Decision:
        """Redis answered: it is up (hand back if it was down), and the denial may be cached."""
        with self.state_lock:
            was_down, self.down = self.down, False
            self.stats.redis_calls += 1
            if was_down:
                self.stats.to_redis += 1
        if was_down:
            log.warning("Redis answers again: the limiter decides with it (on_failure=%s "
                        "handed back)", self.on_failure)
            if self.local is not None:
                self.local.clear()
        decision = decision_of(self.policies, reply, elapsed_ns)
        if self.cache is not None and self.cacheable:
            self.cache.put(client_key, cost, decision)
        return decision

    def failed(self, client_key: str, cost: int, error: BaseException, elapsed_ns: int) -> Decision:
        """Redis failed: down from now (tried again in retry_ms), and the on_failure answer."""
        with self.state_lock:
            was_down, self.down = self.down, True
            self.next_try_ms = self.clock() + self.retry_ms
            self.stats.redis_calls += 1
            self.stats.failures += 1
            if not was_down:
                self.stats.to_fallback += 1
        if not was_down:
            detail = str(error) or f"no answer within {self.timeout_ms} ms"
            log.warning("Redis failed (%s: %s): on_failure=%s until it answers, "
                        "tried again every %d ms", type(error).__name__, detail, self.on_failure, self.retry_ms)
        return self.fallback(client_key, cost, elapsed_ns)

    def fallback(self, client_key: str, cost: int, elapsed_ns: int) -> Decision:
        if self.local is None:
            self.count("failed_calls")
            return Decision(self.on_failure == "allow", -1, [], elapsed_ns, FROM_FAILURE)
        self.count("local_calls")
        start = time.perf_counter_ns()
        limits: Any = policy_keys(self.policies, client_key, self.prefix)
        if len(limits) == 1:
            result: Any = self.local.limit(limits[0][0], limits[0][1], cost)
        else:
            result = self.local.limit_all(limits, cost)
        return decision_of(self.policies, result, elapsed_ns + time.perf_counter_ns() - start, FROM_LOCAL)

    def forget(self, client_key: str) -> None:
        if self.cache is not None:
            self.cache.forget(client_key)


def timeout_pool_kwargs(pool: Any, timeout_s: float) -> Dict[str, Any]:
    """A copy of a pool's connection settings with both socket timeouts set to the limiter's."""
    kwargs = dict(pool.connection_kwargs)
    kwargs.update(socket_timeout=timeout_s, socket_connect_timeout=timeout_s)
    return kwargs


def rewrapped(replicas: Any, private: Any) -> Any:
    """The limiter's private client, in the application's with_replicas wrapper again if it had one (the
    same replicas and timeout): the timeout bounds the command and its WAIT together."""
    return private if replicas is None else type(replicas)(private, replicas.replicas, replicas.timeout_ms)


class BaseLimiter:
    """The constructor and the read-only attributes both limiters share."""

    def __init__(self, client: Any, policies: Sequence[Policy], *, prefix: str = "rl:",
                 timeout_ms: Optional[int] = 50, on_failure: str = "deny", retry_ms: int = 1000,
                 deny_cache: bool = True, deny_cache_min_ms: int = 100, deny_cache_size: int = 10_000,
                 local_max_keys: int = 10_000, clock: Callable[[], int] = monotonic_ms):
        self.core = LimiterCore(policies, prefix, timeout_ms, on_failure, retry_ms, deny_cache, deny_cache_min_ms,
                                deny_cache_size, local_max_keys, clock)
        self.client = client

    @property
    def policies(self) -> List[Policy]:
        return self.core.policies

    @property
    def stats(self) -> Stats:
        return self.core.stats

    @property
    def local(self) -> Optional[LocalLimiter]:
        return self.core.local

    def forget(self, client_key: str) -> None:
        """Drop a cached denial (after an RL.RESET or RL.UNBLOCK of that client, say)."""
        self.core.forget(client_key)


class Limiter(BaseLimiter):
    """The sync limiter, for a redis.Redis client (any client with execute_command: a RedisCluster is
    used as it is, with its own socket timeouts). Thread-safe.

    on_failure: "deny" (a failed decision: 503), "allow" (admitted, no headers), or "local" (the local
    limiter; every policy must be a Token or a fixed Window without lockout, else ValueError at once)."""

    def __init__(self, client: Any, policies: Sequence[Policy], **options: Any):
        super().__init__(client, policies, **options)
        self.sender = client
        timeout_ms = self.core.timeout_ms
        inner, replicas = inner_client(client)
        if timeout_ms is not None and isinstance(inner, redis.Redis):
            pool = inner.connection_pool
            kwargs = timeout_pool_kwargs(pool, timeout_ms / 1000)
            self.sender = rewrapped(replicas, redis.Redis(connection_pool=redis.ConnectionPool(
                connection_class=pool.connection_class, max_connections=pool.max_connections, **kwargs)))

    def check(self, client_key: str, cost: int = 1) -> Decision:
        """Decide one request of `client_key` (of `cost` units) against every policy."""
        early = self.core.before(client_key, cost)
        if early is not None:
            return early
        start = time.perf_counter_ns()
        try:
            reply = self.sender.execute_command(*self.core.args(client_key, cost))
        except Exception as error:  # noqa: BLE001 -- sorted by is_outage, the rest raised
            if not is_outage(error):
                raise
            return self.core.failed(client_key, cost, error, time.perf_counter_ns() - start)
        return self.core.answered(client_key, cost, reply, time.perf_counter_ns() - start)

    def close(self) -> None:
        """Close the private pool (the application's client is left as it is)."""
        if self.sender is not self.client:
            inner_client(self.sender)[0].connection_pool.disconnect()


class AsyncLimiter(BaseLimiter):
    """The asyncio limiter, for a redis.asyncio.Redis client: the same constructor, `await check()`."""

    def __init__(self, client: Any, policies: Sequence[Policy], **options: Any):
        super().__init__(client, policies, **options)
        self.sender = client
        timeout_ms = self.core.timeout_ms
        inner, replicas = inner_client(client)
        if timeout_ms is not None and isinstance(inner, redis.asyncio.Redis):
            pool = inner.connection_pool
            kwargs = timeout_pool_kwargs(pool, timeout_ms / 1000)
            self.sender = rewrapped(replicas, redis.asyncio.Redis(connection_pool=redis.asyncio.ConnectionPool(
                connection_class=pool.connection_class, max_connections=pool.max_connections, **kwargs)))

    async def send(self, args: List[object]) -> Any:
        """One command on one connection of the pool; a connection left by an error or a cancellation is
        dropped, never handed back with a reply still to come."""
        if not isinstance(self.sender, redis.asyncio.Redis):
            return await self.sender.execute_command(*args)
        pool = self.sender.connection_pool
        conn = await pool.get_connection(str(args[0]))
        try:
            await conn.send_command(*args)
            return await self.sender.parse_response(conn, str(args[0]))
        except BaseException:
            await asyncio.shield(conn.disconnect())
            raise
        finally:
            await pool.release(conn)

    async def check(self, client_key: str, cost: int = 1) -> Decision:
        """Decide one request of `client_key` (of `cost` units) against every policy."""
        early = self.core.before(client_key, cost)
        if early is not None:
            return early
        start = time.perf_counter_ns()
        args = self.core.args(client_key, cost)
        timeout_ms = self.core.timeout_ms
        try:
            if timeout_ms is None:
                reply = await self.send(args)
            else:
                reply = await asyncio.wait_for(self.send(args), timeout_ms / 1000)
        except Exception as error:  # noqa: BLE001 -- sorted by is_outage, the rest raised
            if not is_outage(error):
                raise
            return self.core.failed(client_key, cost, error, time.perf_counter_ns() - start)
        return self.core.answered(client_key, cost, reply, time.perf_counter_ns() - start)

    async def close(self) -> None:
        if self.sender is not self.client:
            await inner_client(self.sender)[0].connection_pool.disconnect()
