"""The package's calls for asyncio: the same names, arguments and typed results as redis_ratelimit's
sync calls (limit, limit_all, acquire, release, renew, leases, block, unblock, lockinfo, reset,
throttle, check, policy_set, policy_get, policy_del, policy_list, policy_flush, lease), each a
coroutine taking a redis.asyncio.Redis or redis.asyncio.RedisCluster.

The idea: a call is built once, as a Call (its argument list, its reply's parser, where it goes on a
cluster: _call.py), by the same `*_call` builders the sync calls use; here it is only awaited. So the two
forms cannot drift apart: an option added to a builder is in both. The specs and results are the sync
module's own classes, re-exported so that one import serves."""

import asyncio
from types import TracebackType
from typing import Any, Awaitable, List, Optional, Protocol, Sequence, Tuple, Type, TypeVar

from redis.asyncio.cluster import RedisCluster

from ._call import Call, merged, route
from .lua_mode import AsyncModeClient
from .replicas import AsyncReplicaClient, NotReplicated
from .held_lease import HeldLease, LeaseDenied, held_or_denied, renew_every_s, renewed
from .limits import (AcquireResult, AllResult, AtMostResult, Concurrency, Lease, LeaseId, Leaky, LockInfo, Lockout,
                     Quota, Result, SlidingLog, Smooth, Spec, ThrottleResult, Token, Window, acquire_call, block_call,
                     leases_call, limit_all_call, limit_call, lockinfo_call, release_call, renew_call,
                     reset_call, throttle_call, unblock_call)
from .stored_policy import (StoredPolicy, check_call, policy_del_call, policy_flush_call, policy_get_call,
                            policy_list_call, policy_set_call)

__all__ = ["AcquireResult", "AsyncModeClient", "with_mode", "AsyncReplicaClient", "NotReplicated", "with_replicas",
           "AllResult", "AtMostResult", "Concurrency", "HeldLease", "Lease", "LeaseDenied", "Leaky",
           "LockInfo", "Lockout", "Quota", "Result", "SlidingLog", "Smooth", "StoredPolicy", "ThrottleResult",
           "Token", "Window", "acquire", "block", "check", "lease", "leases", "limit", "limit_all", "lockinfo",
           "policy_del", "policy_flush", "policy_get", "policy_list", "policy_set", "release", "renew", "reset",
           "throttle", "unblock"]

T = TypeVar("T")


class AsyncClient(Protocol):
    """What an async call needs of its client: redis.asyncio.Redis or redis.asyncio.RedisCluster."""

    def execute_command(self, *args: Any, **options: Any) -> Awaitable[Any]: ...


def with_mode(client: Any, mode: str = "auto") -> AsyncModeClient:
    """A redis.asyncio.Redis for this module's calls in a mode: "module", "lua" (the script, on a server
    without the module) or "auto" (redis_ratelimit.lua_mode)."""
    return AsyncModeClient(client, mode)


def with_replicas(client: Any, replicas: int = 1, timeout_ms: int = 100) -> AsyncReplicaClient:
    """A redis.asyncio.Redis or RedisCluster for this module's calls, each grant acknowledged by at least
    `replicas` replicas within timeout_ms, else NotReplicated (redis_ratelimit.replicas)."""
    return AsyncReplicaClient(client, replicas, timeout_ms)


async def arun(client: AsyncClient, call: "Call[T]") -> T:
    """Await a call on an asyncio client and parse its reply."""
    cluster = isinstance(client, RedisCluster)
    return call.parse(merged(call, await client.execute_command(*call.args, **route(call, cluster)), cluster))


async def limit(client: AsyncClient, key: str, spec: Spec, cost: int = 1, dryrun: bool = False,
                readonly: bool = False, refund: Optional[int] = None, force: bool = False, atmost: bool = False,
                wait_ms: Optional[int] = None, block: bool = False) -> Result:
    """redis_ratelimit.limit. With block=True (Leaky, Smooth) the server holds the reply for wait_ms:
    this coroutine waits, the event loop does not."""
    return await arun(client, limit_call(key, spec, cost, dryrun, readonly, refund, force, atmost, wait_ms, block))


async def limit_all(client: AsyncClient, limits: Sequence[Tuple[str, Spec]], cost: int = 1, dryrun: bool = False,
                    readonly: bool = False, refund: Optional[int] = None, force: bool = False,
                    wait_ms: Optional[int] = None) -> AllResult:
    """redis_ratelimit.limit_all (RL.ALL; on a cluster the keys share a hash tag)."""
    return await arun(client, limit_all_call(limits, cost, dryrun, readonly, refund, force, wait_ms))


async def acquire(client: AsyncClient, key: str, limit: int, lease_ms: int, cost: int = 1,
                  lease_id: Optional[LeaseId] = None, wait_ms: Optional[int] = None, dryrun: bool = False,
                  readonly: bool = False) -> AcquireResult:
    """redis_ratelimit.acquire (RL.ACQUIRE)."""
    return await arun(client, acquire_call(key, limit, lease_ms, cost, lease_id, wait_ms, dryrun, readonly))


async def release(client: AsyncClient, key: str, lease_id: LeaseId) -> bool:
    """redis_ratelimit.release (RL.RELEASE)."""
    return await arun(client, release_call(key, lease_id))


async def renew(client: AsyncClient, key: str, lease_id: LeaseId, lease_ms: int) -> bool:
    """redis_ratelimit.renew (RL.RENEW)."""
    return await arun(client, renew_call(key, lease_id, lease_ms))


async def leases(client: AsyncClient, key: str) -> List[Lease]:
    """redis_ratelimit.leases (RL.LEASES)."""
    return await arun(client, leases_call(key))


async def block(client: AsyncClient, key: str, ms: int) -> None:
    """redis_ratelimit.block (RL.BLOCK)."""
    await arun(client, block_call(key, ms))


async def unblock(client: AsyncClient, key: str) -> bool:
    """redis_ratelimit.unblock (RL.UNBLOCK)."""
    return await arun(client, unblock_call(key))


async def lockinfo(client: AsyncClient, key: str) -> LockInfo:
    """redis_ratelimit.lockinfo (RL.LOCKINFO)."""
    return await arun(client, lockinfo_call(key))


async def reset(client: AsyncClient, *keys: str) -> int:
    """redis_ratelimit.reset (RL.RESET)."""
    return await arun(client, reset_call(*keys))


async def throttle(client: AsyncClient, key: str, max_burst: int, count_per_period: int, period: int,
                   quantity: Optional[int] = None) -> ThrottleResult:
    """redis_ratelimit.throttle (CL.THROTTLE)."""
    return await arun(client, throttle_call(key, max_burst, count_per_period, period, quantity))


async def check(client: AsyncClient, policy: str, key: str, cost: int = 1, dryrun: bool = False,
                readonly: bool = False, wait_ms: Optional[int] = None) -> AllResult:
    """redis_ratelimit.check (RL.CHECK)."""
    return await arun(client, check_call(policy, key, cost, dryrun, readonly, wait_ms))


async def policy_set(client: AsyncClient, name: str, limits: Sequence[Tuple[str, Spec]],
                     shadow: bool = False) -> None:
    """redis_ratelimit.policy_set (RL.POLICY SET; every primary of a cluster)."""
    await arun(client, policy_set_call(name, limits, shadow))


async def policy_get(client: AsyncClient, name: str) -> Optional[StoredPolicy]:
    """redis_ratelimit.policy_get (RL.POLICY GET)."""
    return await arun(client, policy_get_call(name))


async def policy_del(client: AsyncClient, name: str) -> bool:
    """redis_ratelimit.policy_del (RL.POLICY DEL)."""
    return await arun(client, policy_del_call(name))


async def policy_list(client: AsyncClient) -> List[str]:
    """redis_ratelimit.policy_list (RL.POLICY LIST)."""
    return await arun(client, policy_list_call())


async def policy_flush(client: AsyncClient) -> None:
    """redis_ratelimit.policy_flush (RL.POLICY FLUSH)."""
    await arun(client, policy_flush_call())


class AsyncLeaseScope:
    """The context manager lease() returns (asyncio: `async with`). The renewer is a task that waits on
    an event between renewals, so that stopping it never cancels a command halfway (a cancelled read
    could leave its reply on a pooled connection)."""

    def __init__(self, client: AsyncClient, key: str, limit: int, lease_ms: int, cost: int,
                 lease_id: Optional[LeaseId], wait_ms: Optional[int], renew_every_ms: Optional[int]) -> None:
        self.client, self.key, self.limit, self.lease_ms = client, key, limit, lease_ms
        self.cost, self.lease_id, self.wait_ms = cost, lease_id, wait_ms
        self.every_s = renew_every_s(lease_ms, renew_every_ms)
        self.stop = asyncio.Event()
        self.held: Optional[HeldLease] = None
        self.renewer: Optional["asyncio.Task[None]"] = None

    async def __aenter__(self) -> HeldLease:
        result = await acquire(self.client, self.key, self.limit, self.lease_ms, self.cost, self.lease_id,
                               self.wait_ms)
        self.held = held_or_denied(self.key, self.lease_ms, result)
        self.renewer = asyncio.get_running_loop().create_task(self.renew_until_stopped(self.held))
        return self.held

    async def stopped_within(self, seconds: float) -> bool:
        try:
            await asyncio.wait_for(self.stop.wait(), seconds)
            return True
        except asyncio.TimeoutError:
            return False

    async def renew_until_stopped(self, held: HeldLease) -> None:
        while not await self.stopped_within(self.every_s):
            try:
                if not renewed(held, await renew(self.client, self.key, held.lease_id, self.lease_ms)):
                    return
            except Exception as err:  # the server unreachable for a moment: try again next turn
                held.renew_error = err

    async def __aexit__(self, kind: Optional[Type[BaseException]], error: Optional[BaseException],
                        trace: Optional[TracebackType]) -> None:
        self.stop.set()
        if self.renewer is not None:
            await self.renewer
        if self.held is not None:
            self.held.released = await release(self.client, self.key, self.held.lease_id)


def lease(client: AsyncClient, key: str, limit: int, lease_ms: int, *, cost: int = 1,
          lease_id: Optional[LeaseId] = None, wait_ms: Optional[int] = None,
          renew_every_ms: Optional[int] = None) -> AsyncLeaseScope:
    """redis_ratelimit.lease for `async with`: acquired on entry (LeaseDenied if not), renewed by an
    asyncio task every renew_every_ms (default lease_ms / 3) while the block runs, released on exit."""
    return AsyncLeaseScope(client, key, limit, lease_ms, cost, lease_id, wait_ms, renew_every_ms)
