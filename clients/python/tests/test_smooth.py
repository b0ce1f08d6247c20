"""The Smooth spec (RL.SMOOTH, RL.SMOOTH_RO, a SMOOTH clause in RL.ALL) against a real redis-server with
the module: the reservations of docs/commands.md's examples (bursty, a large COST paid by the next
caller, MAXWAIT's denial, the warm-up slope), decimals sent as plain digits, DRYRUN and the _RO form
reserving nothing, and bad input as the server's error naming the argument. The clock is frozen, so
every wait is exact."""

import unittest
from decimal import Decimal

import redis
from support import RedisCase

from redis_ratelimit import Lockout, Policy, Result, Smooth, Token, limit, limit_all, lockinfo
from redis_ratelimit.limits import all_args, command_args


class Args(unittest.TestCase):
    def test_options(self):
        self.assertEqual(command_args("k", Smooth(5)), ["RL.SMOOTH", "k", "5"])
        self.assertEqual(command_args("k", Smooth(2.5, warmup_ms=4000, coldfactor=4, maxwait_ms=100), cost=3,
                                      readonly=True),
                         ["RL.SMOOTH_RO", "k", "2.5", "WARMUP", 4000, "COLDFACTOR", "4", "MAXWAIT", 100, "COST", 3])
        self.assertEqual(command_args("k", Smooth("7.25", maxburst_ms=0, lockout=Lockout(50)), dryrun=True),
                         ["RL.SMOOTH", "k", "7.25", "MAXBURST", 0, "LOCKOUT", 50, "DRYRUN"])
        self.assertEqual(all_args([("a", Smooth(1, cost=2)), ("b", Token(10, 1, 1000))]),
                         ["RL.ALL", 2, "a", "b", "LIMIT", "SMOOTH", "1", "COST", 2, "LIMIT", "TOKEN", 10, 1, 1000])

    def test_decimals_are_plain_digits(self):
        # Python writes these with an exponent; the module reads digits and a point only.
        self.assertEqual(Smooth(0.000001).params(), ["0.000001"])
        self.assertEqual(Smooth(1e9).params(), ["1000000000.0"])
        self.assertEqual(Smooth(Decimal("0.5")).params(), ["0.5"])
        self.assertEqual(Smooth(1e-7).params(), ["0.0000001"])  # not rounded: the module refuses it
        with self.assertRaises(TypeError):
            Smooth(True).params()

    def test_not_a_middleware_policy(self):
        with self.assertRaisesRegex(TypeError, "Smooth reserves"):
            Policy("api", Smooth(5))


class Commands(RedisCase):
    def test_bursty_reservations(self):
        spec = Smooth(5)
        self.assertEqual(limit(self.r, "api", spec), Result(True, 5, 4, -1, 200, 0))  # rested: 5 stored
        self.assertEqual(limit(self.r, "api", spec, cost=10), Result(True, 5, 0, -1, 2200, 0))  # 6 fresh charged
        self.assertEqual(limit(self.r, "api", spec), Result(True, 5, 0, -1, 2400, 1200))  # waits for that
        # tryAcquire(1, 1 s): the ticket is 1.4 s away, so nothing is reserved.
        self.assertEqual(limit(self.r, "api", Smooth(5, maxwait_ms=1000)), Result(False, 5, 0, 400, 2400, 0))
        self.assertEqual(limit(self.r, "api", Smooth(5, maxwait_ms=1400)), Result(True, 5, 0, -1, 2600, 1400))

    def test_warmup_slope(self):
        spec = Smooth(2, warmup_ms=4000)
        first = limit(self.r, "db", spec)
        self.assertEqual(first, Result(True, 8, 7, -1, 1875, 0))
        waits = [limit(self.r, "db", spec).wait_ms for _ in range(5)]
        self.assertEqual(waits, [1375, 2500, 3375, 4000, 4500])  # Guava's documented shape

    def test_decimal_rate_and_coldfactor(self):
        # 2.5 per second: a permit every 400 ms; one second stored, 2.5 permits: the limit is 2.
        spec = Smooth(2.5)
        self.assertEqual([limit(self.r, "d", spec).wait_ms for _ in range(4)], [0, 0, 0, 200])
        # Stable 2 s, cold 4 s: a threshold of 0.5 * 10 / 2 = 2.5 permits, a most of 2.5 + 2 * 10 / 6.
        cold = limit(self.r, "c", Smooth("0.5", warmup_ms=10_000, coldfactor=Decimal("2")))
        self.assertEqual((cold.allowed, cold.limit, cold.remaining, cold.wait_ms), (True, 5, 4, 0))

    def test_dryrun_and_readonly_reserve_nothing(self):
        spec = Smooth(5)
        for kw in ({"dryrun": True}, {"readonly": True}):
            self.assertEqual(limit(self.r, "s", spec, cost=5, **kw), Result(True, 5, 0, -1, 1000, 0))
        self.assertEqual(self.r.exists("s"), 0)
        self.assertEqual(limit(self.r, "s", spec, cost=5), Result(True, 5, 0, -1, 1000, 0))
        self.assertEqual(limit(self.r, "s", spec, readonly=True), limit(self.r, "s", spec, dryrun=True))
        # Nothing stored: a permit is charged ahead (the next caller waits), not to this one.
        self.assertEqual(limit(self.r, "s", spec, readonly=True), Result(True, 5, 0, -1, 1200, 0))

    def test_lockout_on_a_maxwait_denial(self):
        spec = Smooth(1, maxburst_ms=0, maxwait_ms=0, lockout=Lockout(5000))
        self.assertTrue(limit(self.r, "l", spec).allowed)
        self.assertEqual(limit(self.r, "l", spec).allowed, False)  # the ticket is 1 s away: locked
        self.assertEqual(lockinfo(self.r, "l").lock_ms, 5000)

    def test_bad_input_is_the_servers_error(self):
        cases = [(Smooth(0), {}, "permits_per_second"), (Smooth(1e-7), {}, "permits_per_second"),
                 (Smooth("1e3"), {}, "permits_per_second"), (Smooth(float("nan")), {}, "permits_per_second"),
                 (Smooth(5, coldfactor=2), {}, "COLDFACTOR"), (Smooth(5, warmup_ms=10, maxburst_ms=10), {}, "MAXBURST"),
                 (Smooth(5), {"cost": 0}, "COST"), (Smooth(5), {"refund": 1}, "REFUND"),
                 (Smooth(5), {"force": True}, "FORCE"), (Smooth(5), {"cost": 2, "atmost": True}, "ATMOST")]
        for spec, kw, name in cases:
            with self.subTest(spec=spec, kw=kw), self.assertRaises(redis.ResponseError) as err:
                limit(self.r, "bad", spec, **kw)
            self.assertRegex(str(err.exception), rf"^'?{name}'?: ")
        self.assertEqual(self.r.exists("bad"), 0)


class All(RedisCase):
    LIMITS = [("{u}:g", Smooth(5, maxwait_ms=0)), ("{u}:s", Token(3, 1, 1000))]

    def test_smooth_clause_is_all_or_nothing(self):
        out = limit_all(self.r, self.LIMITS, cost=3)
        self.assertEqual((out.allowed, out.reset_after_ms), (True, 3000))
        self.assertEqual(out.limits, [Result(True, 5, 2, -1, 600, 0), Result(True, 3, 0, -1, 3000, 0)])
        # The bucket is empty: denied, and the smooth limiter keeps its 2 stored permits.
        out = limit_all(self.r, self.LIMITS)
        self.assertEqual((out.allowed, out.retry_after_ms), (False, 1000))
        self.assertEqual(out.limits, [Result(True, 5, 2, -1, 600, 0), Result(False, 3, 0, 1000, 3000, 0)])
        self.assertEqual(limit(self.r, "{u}:g", Smooth(5), readonly=True).remaining, 1)  # 2 stored, 1 taken

    def test_refund_is_refused_by_name(self):
        with self.assertRaisesRegex(redis.ResponseError, "^LIMIT 1: REFUND: "):
            limit_all(self.r, self.LIMITS, refund=1)


if __name__ == "__main__":
    unittest.main()
