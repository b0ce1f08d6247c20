"""The Quota spec (RL.QUOTA, RL.QUOTA_RO, a QUOTA clause in RL.ALL) against a real redis-server with the
module: calendar windows in UTC and in fixed time zones, FORCE into debt and REFUND back, RL.ALL all or
nothing with a quota, bad input as the server's error naming the argument, and the HTTP headers.

The clock is frozen at 2023-11-14 22:14:15 UTC, a Tuesday (support.T0 + 15 s), so the ends of the day,
the week (Monday 2023-11-20) and the month (2023-12-01) are exact numbers of ms away."""

import unittest

import redis
from support import RedisCase

from redis_ratelimit import Quota, Result, Token, limit, limit_all, rate_limit_headers
from redis_ratelimit.headers import quota_policy
from redis_ratelimit.limits import all_args, command_args

TO_MIDNIGHT_UTC = 6_345_000                       # 1 h 45 min 45 s
TO_MONDAY = 5 * 86_400_000 + TO_MIDNIGHT_UTC      # the rest of Tuesday, then Wednesday to Sunday
TO_DECEMBER = 16 * 86_400_000 + TO_MIDNIGHT_UTC   # November 15 to 30


class Args(unittest.TestCase):
    def test_command(self):
        self.assertEqual(command_args("k", Quota(1000, "DAY")), ["RL.QUOTA", "k", 1000, "DAY"])
        self.assertEqual(command_args("k", Quota(1000, "WEEK", offset_minutes=-300), cost=5, readonly=True),
                         ["RL.QUOTA_RO", "k", 1000, "WEEK", "OFFSET", -300, "COST", 5])
        self.assertEqual(command_args("k", Quota(10, "MONTH"), cost=25, force=True, dryrun=True),
                         ["RL.QUOTA", "k", 10, "MONTH", "COST", 25, "FORCE", "DRYRUN"])

    def test_all(self):
        self.assertEqual(all_args([("a", Token(10, 1, 1000)), ("b", Quota(1000, "MONTH", offset_minutes=60))]),
                         ["RL.ALL", 2, "a", "b", "LIMIT", "TOKEN", 10, 1, 1000,
                          "LIMIT", "QUOTA", 1000, "MONTH", "OFFSET", 60])


class Commands(RedisCase):
    def test_day_counts_until_utc_midnight(self):
        spec = Quota(3, "DAY")
        self.assertEqual(limit(self.r, "q", spec, cost=2), Result(True, 3, 1, -1, TO_MIDNIGHT_UTC, 0))
        self.assertEqual(limit(self.r, "q", spec, cost=2), Result(False, 3, 1, TO_MIDNIGHT_UTC, TO_MIDNIGHT_UTC, 0))
        self.advance(TO_MIDNIGHT_UTC)  # a new day: everything is back
        self.assertEqual(limit(self.r, "q", spec, cost=3), Result(True, 3, 0, -1, 86_400_000, 0))

    def test_time_zones_weeks_and_months(self):
        cases = [(Quota(3, "DAY", offset_minutes=60), 2_745_000),           # UTC+1: the day ends at 23:00 UTC
                 (Quota(3, "day", offset_minutes=-300), 24_345_000),        # UTC-5, any case: at 05:00 UTC
                 (Quota(3, "WEEK"), TO_MONDAY), (Quota(3, "MONTH"), TO_DECEMBER)]
        for i, (spec, reset) in enumerate(cases):
            with self.subTest(spec=spec):
                self.assertEqual(limit(self.r, f"q{i}", spec), Result(True, 3, 2, -1, reset, 0))

    def test_force_debt_and_refund(self):
        spec = Quota(3, "MONTH")
        self.assertEqual(limit(self.r, "m", spec, cost=5, force=True), Result(True, 3, 0, -1, TO_DECEMBER, 0))
        self.assertEqual(limit(self.r, "m", spec, cost=0), Result(False, 3, 0, TO_DECEMBER, TO_DECEMBER, 0))
        self.assertEqual(limit(self.r, "m", spec, refund=3).remaining, 1)  # 2 counted: the debt is paid
        self.assertEqual(limit(self.r, "m", spec).remaining, 0)

    def test_dryrun_and_readonly_count_nothing(self):
        spec = Quota(2, "WEEK")
        for kw in ({"dryrun": True}, {"readonly": True}):
            self.assertEqual(limit(self.r, "w", spec, cost=2, **kw), Result(True, 2, 0, -1, TO_MONDAY, 0))
        self.assertEqual(self.r.exists("w"), 0)

    def test_bad_input_is_the_servers_error(self):
        cases = [(Quota(3, "YEAR"), {}, "period"), (Quota(3, "DAY", offset_minutes=841), {}, "OFFSET"),
                 (Quota(0, "DAY"), {}, "limit"), (Quota(3, "DAY"), {"cost": -1}, "COST")]
        for spec, kw, name in cases:
            with self.subTest(spec=spec), self.assertRaisesRegex(redis.ResponseError, rf"^{name}: "):
                limit(self.r, "bad", spec, **kw)
        with self.assertRaisesRegex(redis.ResponseError, r"^LIMIT 2: period: "):
            limit_all(self.r, [("{b}:s", Token(10, 1, 1000)), ("{b}:q", Quota(3, "HOUR"))])
        self.assertEqual(self.r.exists("bad", "{b}:s", "{b}:q"), 0)
        with self.assertRaises(ValueError):
            limit(self.r, "bad", Quota(3, "DAY"), refund=1, force=True)


class All(RedisCase):
    LIMITS = [("{u}:s", Token(10, 1, 1000)), ("{u}:d", Quota(3, "DAY"))]

    def test_quota_clause_is_all_or_nothing(self):
        out = limit_all(self.r, self.LIMITS, cost=2)
        self.assertEqual((out.allowed, [r.remaining for r in out.limits]), (True, [8, 1]))
        out = limit_all(self.r, self.LIMITS, cost=2)
        self.assertEqual((out.allowed, out.retry_after_ms), (False, TO_MIDNIGHT_UTC))
        self.assertEqual(out.limits, [Result(True, 10, 8, -1, 2000, 0),
                                      Result(False, 3, 1, TO_MIDNIGHT_UTC, TO_MIDNIGHT_UTC, 0)])
        self.assertEqual([r.remaining for r in limit_all(self.r, self.LIMITS, cost=0, readonly=True).limits],
                         [8, 1])  # nothing was taken
        out = limit_all(self.r, self.LIMITS, refund=2)
        self.assertEqual([r.remaining for r in out.limits], [10, 3])


class Headers(RedisCase):
    def test_policy_is_the_calendar_period(self):
        self.assertEqual(quota_policy(Quota(1000, "DAY")), (1000, 86_400))
        self.assertEqual(quota_policy(Quota(1000, "week", offset_minutes=60)), (1000, 604_800))
        self.assertEqual(quota_policy(Quota(1000, "MONTH")), (1000, 2_592_000))  # 30 days
        with self.assertRaisesRegex(ValueError, "^period: "):
            quota_policy(Quota(1000, "YEAR"))

    def test_t_is_the_end_of_the_window(self):
        spec = Quota(2, "DAY")
        res = limit(self.r, "h", spec)
        self.assertEqual(rate_limit_headers([("daily", spec, res)], res.allowed, res.retry_after_ms),
                         {"RateLimit-Policy": '"daily";q=2;w=86400', "RateLimit": '"daily";r=1;t=6345'})
        limit(self.r, "h", spec)
        res = limit(self.r, "h", spec)
        self.assertEqual(rate_limit_headers([("daily", spec, res)], res.allowed, res.retry_after_ms),
                         {"RateLimit-Policy": '"daily";q=2;w=86400', "RateLimit": '"daily";r=0;t=6345',
                          "Retry-After": "6345"})


if __name__ == "__main__":
    unittest.main()
