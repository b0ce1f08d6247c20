"""RateLimit-Policy / RateLimit / Retry-After values (draft-ietf-httpapi-ratelimit-headers-11) for each
algorithm, from real replies at a frozen clock, compared exactly with docs/headers.md's rules."""

import unittest

from support import RedisCase

from redis_ratelimit import Leaky, Result, SlidingLog, Token, Window, limit, rate_limit_headers
from redis_ratelimit.headers import next_quota_ms, quota_policy, sf_string


def headers(spec, res, name="default"):
    return rate_limit_headers([(name, spec, res)], res.allowed, res.retry_after_ms)


class Policy(unittest.TestCase):
    def test_quota_and_window(self):
        self.assertEqual(quota_policy(Token(100, 10, 1000)), (100, 10))            # refills fully in 10 s
        self.assertEqual(quota_policy(Token(100, 100, 60000, interval=True)), (100, 60))
        self.assertEqual(quota_policy(Token(10, 3, 1000, interval=True)), (10, 4))  # 4 chunks of 3
        self.assertEqual(quota_policy(Leaky(3, 3, 1000)), (3, 1))
        self.assertEqual(quota_policy(Window(100, 60000, fixed=True)), (100, 60))
        self.assertEqual(quota_policy(SlidingLog(5, 1500)), (5, 2))                 # rounded up
        self.assertEqual(quota_policy(Window(10, 100)), (10, 1))                    # at least 1 s

    def test_sf_string(self):
        self.assertEqual(sf_string('a"b\\c'), '"a\\"b\\\\c"')
        with self.assertRaises(ValueError):
            sf_string("caf\u00e9")


class ServiceLimit(unittest.TestCase):
    def test_full_limiter_has_no_t(self):
        self.assertIsNone(next_quota_ms(Token(10, 1, 1000), Result(True, 10, 10, -1, 0, 0)))

    def test_token_next_unit(self):
        # 7 of 10 left, full in 3000 ms at 1 per 1000 ms: the 8th is back in 1000 ms.
        self.assertEqual(next_quota_ms(Token(10, 1, 1000), Result(True, 10, 7, -1, 3000, 0)), 1000)

    def test_interval_next_chunk(self):
        # 4 of 10 left, chunks of 3 every 1000 ms: full after 2 chunks, the first in 400 ms.
        self.assertEqual(next_quota_ms(Token(10, 3, 1000, interval=True), Result(True, 10, 4, -1, 1400, 0)), 400)

    def test_sliding_uses_reset(self):
        self.assertEqual(next_quota_ms(Window(10, 1000), Result(True, 10, 3, -1, 1500, 0)), 1500)


class FromReplies(RedisCase):
    def test_fixed_window(self):
        spec = Window(3, 60000, fixed=True)
        got = [headers(spec, limit(self.r, "w", spec)) for _ in range(4)]
        self.assertEqual(got[0], {"RateLimit-Policy": '"default";q=3;w=60', "RateLimit": '"default";r=2;t=45'})
        self.assertEqual(got[2]["RateLimit"], '"default";r=0;t=45')
        self.assertEqual(got[3], {"RateLimit-Policy": '"default";q=3;w=60', "RateLimit": '"default";r=0;t=45',
                                  "Retry-After": "45"})

    def test_token_bucket(self):
        spec = Token(10, 1, 2000)  # one token per 2 s, full in 20 s
        for _ in range(3):
            res = limit(self.r, "t", spec)
        self.assertEqual(headers(spec, res), {"RateLimit-Policy": '"default";q=10;w=20',
                                              "RateLimit": '"default";r=7;t=2'})
        res = limit(self.r, "t", spec, cost=8)
        self.assertEqual(headers(spec, res), {"RateLimit-Policy": '"default";q=10;w=20',
                                              "RateLimit": '"default";r=7;t=2', "Retry-After": "2"})

    def test_leaky_policing(self):
        spec = Leaky(2, 1, 1500, nodelay=True)
        for _ in range(3):
            res = limit(self.r, "l", spec)
        self.assertEqual(headers(spec, res), {"RateLimit-Policy": '"default";q=2;w=3',
                                              "RateLimit": '"default";r=0;t=2', "Retry-After": "2"})

    def test_sliding_log_t_capped_by_retry(self):
        spec = SlidingLog(2, 10000)
        limit(self.r, "s", spec)
        self.advance(4000)
        limit(self.r, "s", spec)
        self.advance(1000)
        res = limit(self.r, "s", spec)  # blocked and logged: admitted once the first two have left
        self.assertEqual((res.retry_after_ms, res.reset_after_ms), (9000, 10000))
        self.assertEqual(headers(spec, res)["RateLimit"], '"default";r=0;t=9')
        self.assertEqual(headers(spec, res)["Retry-After"], "9")

    def test_never_admitted_has_no_retry_after(self):
        spec = Window(5, 1000, fixed=True)
        got = headers(spec, limit(self.r, "n", spec, cost=6))
        self.assertNotIn("Retry-After", got)
        self.assertEqual(got["RateLimit"], '"default";r=5')


if __name__ == "__main__":
    unittest.main()
