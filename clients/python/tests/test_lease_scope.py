"""lease(): a lease held for a `with` block (and `async with` in redis_ratelimit.asyncio) against the real
server with its clock frozen and a real renewer (a thread, an asyncio task). While the block runs, the
module's clock is moved past lease_ms, twice over, and the lease is still held, because the renewer
renewed it (its ttl is back to lease_ms, measured from the moved clock); after the block it is released,
also when the block raises; a denial raises LeaseDenied and the block never runs; a lease released
behind the block's back is seen as lost and the renewing stops. Waiting for the renewer is polling the
server's state, bounded; no timing is asserted."""

import asyncio
import threading
import time
from typing import Any, Awaitable, Callable

import redis.asyncio
from support import PORT, RedisCase

import redis_ratelimit.asyncio as aio
from redis_ratelimit import Lease, LeaseDenied, acquire, lease, leases, release

LEASE_MS = 3000


def until(condition: Callable[[], bool]) -> bool:
    """Poll a condition (at most 10 s: a bound, not a timing under test)."""
    for _ in range(1000):
        if condition():
            return True
        time.sleep(0.01)
    return False


async def async_until(condition: Callable[[], Awaitable[bool]]) -> bool:
    for _ in range(1000):
        if await condition():
            return True
        await asyncio.sleep(0.01)
    return False


def renewers() -> int:
    return sum(1 for t in threading.enumerate() if t.name.startswith("lease-renewer"))


class SyncLease(RedisCase):
    def renewed_at_now(self, key: str) -> bool:
        """The key's one lease has its full ttl: renewed since the clock last moved."""
        return [held.ttl_ms for held in leases(self.r, key)] == [LEASE_MS]

    def test_renewed_while_the_block_runs_released_after(self) -> None:
        with lease(self.r, "jobs", 2, LEASE_MS, renew_every_ms=20) as held:
            self.assertTrue(held.result.allowed)
            self.assertEqual(leases(self.r, "jobs"), [Lease(held.lease_id, 1, LEASE_MS)])
            for _ in range(3):  # 6 s in all: twice the lease, which only renewals keep alive
                self.advance(2000)
                self.assertEqual([h.ttl_ms for h in leases(self.r, "jobs")], [1000])
                self.assertTrue(until(lambda: self.renewed_at_now("jobs")))
            self.assertGreaterEqual(held.renewals, 3)
            self.assertFalse(held.lost)
        self.assertEqual(leases(self.r, "jobs"), [])
        self.assertTrue(held.released)
        self.assertTrue(until(lambda: renewers() == 0))

    def test_released_when_the_block_raises(self) -> None:
        with self.assertRaises(RuntimeError):
            with lease(self.r, "jobs", 2, LEASE_MS, cost=2, lease_id="job-1") as held:
                self.assertEqual(leases(self.r, "jobs"), [Lease("job-1", 2, LEASE_MS)])
                raise RuntimeError("the work failed")
        self.assertEqual(leases(self.r, "jobs"), [])
        self.assertTrue(held.released)

    def test_denied_raises_and_the_block_never_runs(self) -> None:
        acquire(self.r, "jobs", 1, 10_000)
        ran = False
        with self.assertRaises(LeaseDenied) as denied:
            with lease(self.r, "jobs", 1, LEASE_MS):
                ran = True
        self.assertFalse(ran)
        self.assertEqual((denied.exception.result.allowed, denied.exception.result.retry_after_ms), (False, 10_000))
        self.assertEqual(denied.exception.key, "jobs")
        self.assertEqual(len(leases(self.r, "jobs")), 1)

    def test_a_lost_lease_is_seen_and_renewing_stops(self) -> None:
        with lease(self.r, "jobs", 1, LEASE_MS, renew_every_ms=20) as held:
            self.assertTrue(release(self.r, "jobs", held.lease_id))  # someone releases it by hand
            self.assertTrue(until(lambda: held.lost))
            self.assertTrue(until(lambda: renewers() == 0))
            renewals = held.renewals
        self.assertFalse(held.released)  # nothing left to release
        self.assertEqual(held.renewals, renewals)


class AsyncLease(RedisCase):
    def run_async(self, body: Callable[[Any], Awaitable[None]]) -> None:
        async def main() -> None:
            client = redis.asyncio.Redis(host="127.0.0.1", port=PORT)
            try:
                await body(client)
            finally:
                await client.close()
                await client.connection_pool.disconnect()
        asyncio.run(main())

    def test_renewed_while_the_block_runs_released_after(self) -> None:
        async def body(ar: Any) -> None:
            async def renewed_at_now() -> bool:
                return [h.ttl_ms for h in await aio.leases(ar, "jobs")] == [LEASE_MS]

            async with aio.lease(ar, "jobs", 2, LEASE_MS, renew_every_ms=20) as held:
                for _ in range(3):
                    self.advance(2000)
                    self.assertEqual([h.ttl_ms for h in await aio.leases(ar, "jobs")], [1000])
                    self.assertTrue(await async_until(renewed_at_now))
                self.assertGreaterEqual(held.renewals, 3)
                self.assertFalse(held.lost)
            self.assertEqual(await aio.leases(ar, "jobs"), [])
            self.assertTrue(held.released)
        self.run_async(body)

    def test_released_when_the_block_raises_and_denied(self) -> None:
        async def body(ar: Any) -> None:
            with self.assertRaises(RuntimeError):
                async with aio.lease(ar, "jobs", 1, LEASE_MS) as held:
                    with self.assertRaises(LeaseDenied):
                        async with aio.lease(ar, "jobs", 1, LEASE_MS):
                            self.fail("a denied lease's block ran")
                    raise RuntimeError("the work failed")
            self.assertEqual(await aio.leases(ar, "jobs"), [])
            self.assertTrue(held.released)
        self.run_async(body)

    def test_a_lost_lease_is_seen_and_renewing_stops(self) -> None:
        async def body(ar: Any) -> None:
            async def lost() -> bool:
                return held.lost

            async with aio.lease(ar, "jobs", 1, LEASE_MS, renew_every_ms=20) as held:
                self.assertTrue(await aio.release(ar, "jobs", held.lease_id))
                self.assertTrue(await async_until(lost))
                renewals = held.renewals
                await asyncio.sleep(0.1)  # room for a renewal that must not come
                self.assertEqual(held.renewals, renewals)
            self.assertFalse(held.released)
        self.run_async(body)
