"""Limiter and AsyncLimiter on the shared test server: the same decisions as check_request, the denial cache
(no round trip while a denial holds, counted down; a smaller cost still asks; off with deny_cache=False;
not for a SlidingLog; bounded), the construction errors, and the private pool's timeouts. The limiters'
clock follows the module's frozen clock, so the cache's expiry is exact."""

import asyncio
import unittest

from support import PORT, T0, RedisCase

import redis
import redis.asyncio

from redis_ratelimit import Leaky, Policy, SlidingLog, Token, Window, check_request
from redis_ratelimit.limiter import AsyncLimiter, Limiter


def calls(r) -> int:
    """Limiter commands the server has run (INFO commandstats)."""
    stats = r.info("commandstats")
    return sum(v["calls"] for k, v in stats.items() if k.startswith("cmdstat_rl.") and k != "cmdstat_rl.clock")


class SyncLimiter(RedisCase):
    def setUp(self):
        super().setUp()
        self.now = T0 + 15_000
        self.r.config_resetstat()

    def set_clock(self, ms: int) -> None:
        super().set_clock(ms)
        self.now = ms

    def limiter(self, policies, **options):
        limiter = Limiter(self.r, policies, clock=lambda: self.now, **options)
        self.addCleanup(limiter.close)
        return limiter

    def test_same_decisions_as_check_request(self):
        policies = [Policy("burst", Token(3, 1, 1000)), Policy("minute", Window(5, 60_000, fixed=True))]
        limiter = self.limiter(policies, prefix="a:", deny_cache=False)
        for i in range(9):
            got = limiter.check(f"u{i % 2}", cost=i % 3)
            plain = check_request(self.r, policies, f"u{i % 2}", prefix="b:", cost=i % 3)  # its own keys
            self.assertEqual((got.source, got.allowed, got.retry_after_ms, got.items),
                             ("redis", plain.allowed, plain.retry_after_ms, plain.items))
            self.advance(300)
        self.assertEqual(limiter.stats.redis_calls, 9)

    def test_denial_cache_counts_down_and_expires(self):
        limiter = self.limiter([Policy("w", Window(2, 60_000, fixed=True))])
        self.assertEqual([limiter.check("a").allowed for _ in range(3)], [True, True, False])
        sent = calls(self.r)
        self.set_clock(self.now + 10_000)
        cached = limiter.check("a")
        self.assertEqual((cached.allowed, cached.source, cached.retry_after_ms), (False, "cache", 35_000))
        self.assertEqual(cached.headers()["Retry-After"], "35")
        self.assertEqual(cached.headers()["RateLimit"], '"w";r=0;t=35')
        self.assertEqual(calls(self.r), sent)  # no round trip
        self.assertEqual(limiter.check("b").source, "redis")  # another key asks
        self.set_clock(self.now + 35_000)  # the window ends: the denial no longer holds
        back = limiter.check("a")
        self.assertEqual((back.allowed, back.source), (True, "redis"))
        self.assertEqual((limiter.stats.cache_hits, limiter.stats.calls), (1, 6))

    def test_smaller_cost_still_asks(self):
        limiter = self.limiter([Policy("t", Token(10, 1, 1000))])
        self.assertTrue(limiter.check("c", 8).allowed)
        denied = limiter.check("c", 5)  # 2 left: 3 s to wait
        self.assertEqual((denied.allowed, denied.retry_after_ms), (False, 3000))
        self.assertEqual(limiter.check("c", 6).source, "cache")  # more than the denied cost: denied here
        small = limiter.check("c", 2)  # fits now: Redis says so
        self.assertEqual((small.allowed, small.source), (True, "redis"))

    def test_short_or_never_denials_are_not_cached(self):
        limiter = self.limiter([Policy("t", Token(1, 1, 50))], deny_cache_min_ms=100)
        limiter.check("d")
        self.assertEqual(limiter.check("d").retry_after_ms, 50)
        self.assertEqual(limiter.check("d").source, "redis")  # 50 ms < 100 ms: not cached
        self.assertEqual(limiter.check("d", 5).retry_after_ms, -1)  # never fits
        self.assertEqual(limiter.check("d", 5).source, "redis")

    def test_cache_off_and_sliding_log(self):
        for policies, options in (([Policy("w", Window(1, 60_000, fixed=True))], {"deny_cache": False}),
                                  ([Policy("log", SlidingLog(1, 60_000))], {})):
            limiter = self.limiter(policies, **options)
            limiter.check("e")
            self.assertEqual([limiter.check("e").source for _ in range(3)], ["redis"] * 3)
            self.r.flushall()

    def test_cache_is_bounded_and_forgets(self):
        limiter = self.limiter([Policy("w", Window(1, 60_000, fixed=True))], deny_cache_size=2)
        for key in ("f1", "f2", "f3"):
            limiter.check(key)
            limiter.check(key)
        self.assertEqual(len(limiter.core.cache), 2)
        self.assertEqual(limiter.check("f1").source, "redis")  # the oldest went first
        self.assertEqual(limiter.check("f3").source, "cache")
        limiter.forget("f3")
        self.assertEqual(limiter.check("f3").source, "redis")

    def test_bad_construction_is_named(self):
        for policies, options, word in (
                ([], {}, "policies"),
                ([Policy("w", Window(1, 1000, fixed=True))], {"on_failure": "maybe"}, "on_failure"),
                ([Policy("w", Window(1, 1000, fixed=True))], {"timeout_ms": 0}, "timeout_ms"),
                ([Policy("lk", Leaky(1, 1, 1000))], {"on_failure": "local"}, "'lk'"),
                ([Policy("sl", Window(1, 1000))], {"on_failure": "local"}, "'sl'"),
                ([Policy("w", Window(1, 1000, fixed=True))], {"deny_cache_size": 0}, "deny_cache_size")):
            with self.assertRaisesRegex(ValueError, word):
                Limiter(self.r, policies, **options)

    def test_private_pool_has_the_timeout(self):
        limiter = self.limiter([Policy("w", Window(1, 1000, fixed=True))], timeout_ms=75)
        kwargs = limiter.sender.connection_pool.connection_kwargs
        self.assertEqual((kwargs["socket_timeout"], kwargs["socket_connect_timeout"], kwargs["port"]),
                         (0.075, 0.075, PORT))
        self.assertIsNone(self.r.connection_pool.connection_kwargs.get("socket_timeout"))  # the app's, unchanged

    def test_a_wrong_command_is_raised_not_a_failure(self):
        limiter = self.limiter([Policy("w", Window(1, 1000, fixed=True))], on_failure="allow")
        self.r.set("rl:{g}:w", "a string")
        with self.assertRaises(redis.ResponseError):
            limiter.check("g")
        self.assertEqual(limiter.stats.failures, 0)


class AsyncLimiterCase(RedisCase):
    def test_async_decides_and_caches_as_sync(self):
        now = [T0 + 15_000]

        async def run():
            client = redis.asyncio.Redis(host="127.0.0.1", port=PORT)
            limiter = AsyncLimiter(client, [Policy("w", Window(2, 60_000, fixed=True))], clock=lambda: now[0])
            try:
                got = [await limiter.check("a") for _ in range(4)]
                both = await asyncio.gather(limiter.check("b"), limiter.check("b"), limiter.check("b"))
            finally:
                await limiter.close()
                await client.close()
            return got, both

        got, both = asyncio.run(run())
        self.assertEqual([(d.allowed, d.source) for d in got],
                         [(True, "redis"), (True, "redis"), (False, "redis"), (False, "cache")])
        self.assertEqual(got[3].headers(), got[2].headers())
        self.assertEqual(sorted(d.allowed for d in both), [False, True, True])


if __name__ == "__main__":
    unittest.main()
