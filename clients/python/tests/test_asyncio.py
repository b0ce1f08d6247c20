"""redis_ratelimit.asyncio against the same real server as the sync tests: it has every sync call, with
the same parameters and defaults; each call answers exactly what the sync call answers on twin keys
(one scenario run twice, sync on "s:" keys and async on "a:" keys, with the clock frozen, every result
compared; lease ids, made by the module, compared by shape); errors are the same; and BLOCK holds only
the awaiting coroutine, not the event loop."""

import asyncio
import inspect
import unittest
from typing import Any, Awaitable, Callable, Dict, List, Tuple, TypeVar

import redis
import redis.asyncio
from support import PORT, RedisCase

import redis_ratelimit
import redis_ratelimit.asyncio as aio
from redis_ratelimit import (AcquireResult, Concurrency, Leaky, Lockout, Quota, SlidingLog, Smooth, StoredPolicy,
                             Token, Window)

NAMES = ["limit", "limit_all", "acquire", "release", "renew", "leases", "block", "unblock", "lockinfo", "reset",
         "throttle", "check", "policy_set", "policy_get", "policy_del", "policy_list", "policy_flush", "lease"]

T = TypeVar("T")
LOGIN = Window(2, 60_000, fixed=True, lockout=Lockout(10_000, backoff=2))

# One scenario: (call name, its arguments after the client given the key prefix and the last lease id,
# its keyword arguments). Policy names are prefixed too ("s_api", "a_api"): policies are not keys.
Step = Tuple[str, Callable[[str, str], Tuple[Any, ...]], Dict[str, Any]]
SCENARIO: List[Step] = [
    ("limit", lambda p, _: (p + "t", Token(3, 1, 1000)), {}),
    ("limit", lambda p, _: (p + "t", Token(3, 1, 1000)), {"cost": 2, "dryrun": True}),
    ("limit", lambda p, _: (p + "t", Token(3, 1, 1000)), {"cost": 5, "atmost": True}),
    ("limit", lambda p, _: (p + "t", Token(3, 1, 1000)), {"readonly": True}),
    ("limit", lambda p, _: (p + "t", Token(3, 1, 1000)), {"refund": 1}),
    ("limit", lambda p, _: (p + "t", Token(3, 1, 1000)), {"cost": 4, "force": True}),
    ("limit", lambda p, _: (p + "t", Token(3, 1, 1000, interval=True)), {"wait_ms": 100}),
    ("limit", lambda p, _: (p + "l", Leaky(3, 1, 1000)), {"block": True}),
    ("limit", lambda p, _: (p + "l", Leaky(3, 1, 1000, nodelay=True)), {}),
    ("limit", lambda p, _: (p + "w", Window(5, 60_000, subwindows=6)), {"cost": 2}),
    ("limit", lambda p, _: (p + "log", SlidingLog(3, 1000, mingap_ms=10)), {}),
    ("limit", lambda p, _: (p + "sm", Smooth("2.5", warmup_ms=4000, coldfactor=3)), {"block": True}),
    ("limit", lambda p, _: (p + "sm", Smooth("2.5", warmup_ms=4000, coldfactor=3)), {"cost": 3}),
    ("limit", lambda p, _: (p + "q", Quota(1000, "MONTH", offset_minutes=60)), {"cost": 10}),
    ("limit", lambda p, _: (p + "login", LOGIN), {"cost": 3}),
    ("lockinfo", lambda p, _: (p + "login",), {}),
    ("unblock", lambda p, _: (p + "login",), {}),
    ("block", lambda p, _: (p + "login", 5000), {}),
    ("lockinfo", lambda p, _: (p + "login",), {}),
    ("limit_all", lambda p, _: ([("{%s}s" % p, Token(10, 1, 1000)), ("{%s}h" % p, Window(100, 3_600_000))],),
     {"cost": 2}),
    ("limit_all", lambda p, _: ([("{%s}s" % p, Token(10, 1, 1000)), ("{%s}j" % p, Concurrency(2, 30_000))],),
     {"wait_ms": 100}),
    ("limit_all", lambda p, _: ([("{%s}s" % p, Token(10, 1, 1000))],), {"readonly": True}),
    ("acquire", lambda p, _: (p + "jobs", 2, 30_000), {"cost": 1}),
    ("acquire", lambda p, _: (p + "jobs", 2, 30_000), {"lease_id": "job-7", "wait_ms": 100}),
    ("acquire", lambda p, _: (p + "jobs", 2, 30_000), {"dryrun": True}),
    ("leases", lambda p, _: (p + "jobs",), {}),
    ("renew", lambda p, lease: (p + "jobs", lease, 60_000), {}),
    ("renew", lambda p, _: (p + "jobs", "no-such-lease", 60_000), {}),
    ("release", lambda p, lease: (p + "jobs", lease), {}),
    ("release", lambda p, lease: (p + "jobs", lease), {}),
    ("reset", lambda p, _: (p + "t", p + "w", p + "nothing"), {}),
    ("throttle", lambda p, _: (p + "cell", 15, 30, 60), {}),
    ("throttle", lambda p, _: (p + "cell", 15, 30, 60), {"quantity": 0}),
    ("policy_set", lambda p, _: (p[0] + "_api", [("burst", Token(10, 10, 1000)), ("jobs", Concurrency(3, 30_000))]),
     {}),
    ("policy_set", lambda p, _: (p[0] + "_shadow", [("day", Quota(10, "DAY", cost=2))]), {"shadow": True}),
    ("check", lambda p, _: (p[0] + "_api", p + "user"), {"cost": 2}),
    ("check", lambda p, _: (p[0] + "_api", p + "user"), {"readonly": True}),
    ("check", lambda p, _: (p[0] + "_shadow", p + "user2"), {"dryrun": True, "wait_ms": None}),
    ("policy_get", lambda p, _: (p[0] + "_api",), {}),
    ("policy_get", lambda p, _: (p[0] + "_none",), {}),
    ("policy_del", lambda p, _: (p[0] + "_shadow",), {}),
    ("policy_del", lambda p, _: (p[0] + "_shadow",), {}),
]


def shape(value: Any, prefix: str) -> Any:
    """A result with what legitimately differs between twins made equal: a lease id (the module makes
    one per lease) becomes "<lease>", a policy's name loses its prefix."""
    if isinstance(value, AcquireResult) and value.lease is not None:
        return AcquireResult(value.allowed, value.limit, value.remaining, value.retry_after_ms,
                             value.reset_after_ms, value.wait_ms, "<lease>" if value.lease != "job-7" else "job-7")
    if isinstance(value, redis_ratelimit.AllResult):
        return redis_ratelimit.AllResult(value.allowed, value.retry_after_ms, value.reset_after_ms,
                                         [shape(one, prefix) for one in value.limits])
    if isinstance(value, list):
        return [shape(one, prefix) for one in value]
    if isinstance(value, redis_ratelimit.Lease):
        return (value.lease_id if value.lease_id == "job-7" else "<lease>", value.units, value.ttl_ms)
    if isinstance(value, StoredPolicy):
        return StoredPolicy(value.name[len(prefix):], value.limits, value.shadow)
    return value


def last_lease(value: Any, lease: str) -> str:
    if isinstance(value, AcquireResult) and value.lease:
        return value.lease
    return lease


class Signatures(unittest.TestCase):
    def test_same_names_and_parameters(self) -> None:
        for name in NAMES:
            sync, coro = getattr(redis_ratelimit, name), getattr(aio, name)
            self.assertEqual(inspect.iscoroutinefunction(coro), name != "lease", name)
            params = [(p.name, p.kind, p.default) for p in inspect.signature(sync).parameters.values()]
            aparams = [(p.name, p.kind, p.default) for p in inspect.signature(coro).parameters.values()]
            self.assertEqual(params, aparams, name)
            # Every parameter but the client has the same annotation; so has the result (but lease's).
            annotations = {k: v for k, v in sync.__annotations__.items() if k not in ("client", "return")}
            self.assertEqual(annotations, {k: v for k, v in coro.__annotations__.items()
                                           if k not in ("client", "return")}, name)
            if name != "lease":
                self.assertEqual(sync.__annotations__["return"], coro.__annotations__["return"], name)
        self.assertTrue(set(NAMES) <= set(aio.__all__))


def run_async(body: Callable[[Any], Awaitable[T]]) -> T:
    """Run body(client) in a fresh event loop with its own redis.asyncio client, closed after."""
    async def main() -> T:
        client = redis.asyncio.Redis(host="127.0.0.1", port=PORT)
        try:
            return await body(client)
        finally:
            await client.close()
            await client.connection_pool.disconnect()
    return asyncio.run(main())


class Twins(RedisCase):
    def setUp(self) -> None:
        super().setUp()
        self.r.execute_command("RL.POLICY", "FLUSH")

    def tearDown(self) -> None:
        self.r.execute_command("RL.POLICY", "FLUSH")
        super().tearDown()

    def test_every_call_answers_as_the_sync_one(self) -> None:
        sync_out, lease = [], ""
        for name, args, options in SCENARIO:
            value = getattr(redis_ratelimit, name)(self.r, *args("s:", lease), **options)
            sync_out.append(shape(value, "s"))
            lease = last_lease(value, lease)
            self.advance(100)
        self.set_clock(self.r.execute_command("RL.CLOCK", "GET") - 100 * len(SCENARIO))

        async def scenario(ar: Any) -> List[Any]:
            out, lease = [], ""
            for name, args, options in SCENARIO:
                value = await getattr(aio, name)(ar, *args("a:", lease), **options)
                out.append(shape(value, "a"))
                lease = last_lease(value, lease)
                self.advance(100)
            return out

        async_out = run_async(scenario)
        for step, (sync_value, async_value) in enumerate(zip(sync_out, async_out)):
            self.assertEqual(sync_value, async_value, f"step {step}: {SCENARIO[step][0]}")
        self.assertEqual(len(async_out), len(SCENARIO))
        # The scenario means something: it was admitted, denied, leased and locked along the way.
        self.assertIn(AcquireResult(True, 2, 0, -1, 30_000, 0, "job-7"), sync_out)
        self.assertEqual(sync_out[15], redis_ratelimit.LockInfo(9_900, 1))  # locked 100 ms before
        self.assertEqual(redis_ratelimit.policy_list(self.r), ["a_api", "s_api"])
        self.assertEqual(sync_out[-2:], [True, False])

    def test_errors_are_the_servers_as_in_sync(self) -> None:
        with self.assertRaises(redis.ResponseError) as sync_error:
            redis_ratelimit.limit(self.r, "s:x", Leaky(3, 1, 1000, nodelay=True), block=True)

        async def fail(ar: Any) -> None:
            await aio.limit(ar, "a:x", Leaky(3, 1, 1000, nodelay=True), block=True)

        with self.assertRaises(redis.ResponseError) as async_error:
            run_async(fail)
        self.assertEqual(str(sync_error.exception), str(async_error.exception))
        self.assertIn("BLOCK", str(async_error.exception))

    def test_block_holds_the_coroutine_not_the_loop(self) -> None:
        """RL.LEAKY BLOCK on a request that must wait: the reply is held (one blocked client) while other
        coroutines go on; CLIENT UNBLOCK releases it early, with the wait it was admitted with."""
        self.r.execute_command("RL.CLOCK", "REAL")  # BLOCK holds on real time
        spec = Leaky(2, 1, 600_000)  # the second unit waits 10 minutes
        self.assertEqual(redis_ratelimit.limit(self.r, "a:held", spec).wait_ms, 0)

        async def scenario(ar: Any) -> Tuple[Any, List[Any]]:
            held = asyncio.ensure_future(aio.limit(ar, "a:held", spec, block=True))
            meanwhile = []
            while int(self.r.info("clients")["blocked_clients"]) != 1:
                self.assertFalse(held.done())
                await asyncio.sleep(0.01)
            meanwhile.append(await aio.lockinfo(ar, "a:other"))  # the loop is free
            meanwhile.append(held.done())
            for client in self.r.client_list():
                if "b" in client["flags"]:
                    self.r.client_unblock(int(client["id"]))
            return await held, meanwhile

        result, meanwhile = run_async(scenario)
        self.assertEqual(meanwhile, [redis_ratelimit.LockInfo(0, 0), False])
        self.assertTrue(result.allowed)
        self.assertGreater(result.wait_ms, 599_000)
