"""Lockouts through the helpers against a real redis-server with the module: a Lockout on every spec that
takes one locks its key on a denial, longer for a repeat offence (BACKOFF, MAXLOCK), seen by lockinfo();
block(), unblock() and lockinfo() by hand; a LOCKOUT clause in RL.ALL; bad input as the server's error
naming the argument. The clock is frozen, so every lock's length is exact."""

import unittest

import redis
from support import RedisCase

from redis_ratelimit import (Leaky, LockInfo, Lockout, Quota, Result, SlidingLog, Token, Window, block, limit,
                             limit_all, lockinfo, rate_limit_headers, unblock)
from redis_ratelimit.limits import all_args, command_args, parse_lockinfo


class Args(unittest.TestCase):
    def test_lockout_options(self):
        self.assertEqual(command_args("k", Token(10, 1, 1000, lockout=Lockout(5000))),
                         ["RL.TOKEN", "k", 10, 1, 1000, "LOCKOUT", 5000])
        full = Lockout(3_600_000, backoff=2, maxlock_ms=86_400_000, forgive_ms=86_400_000)
        self.assertEqual(command_args("k", Window(5, 900_000, fixed=True, lockout=full)),
                         ["RL.WINDOW", "k", 5, 900_000, "FIXED", "LOCKOUT", 3_600_000, "BACKOFF", 2,
                          "MAXLOCK", 86_400_000, "FORGIVE", 86_400_000])
        self.assertEqual(command_args("k", SlidingLog(2, 1000, mingap_ms=10, lockout=Lockout(1, forgive_ms=7))),
                         ["RL.SLIDINGLOG", "k", 2, 1000, "MINGAP", 10, "LOCKOUT", 1, "FORGIVE", 7])
        self.assertEqual(all_args([("a", Leaky(3, 1, 1000, nodelay=True, lockout=Lockout(9))),
                                   ("b", Quota(5, "DAY", offset_minutes=60, lockout=Lockout(8, backoff=3)))]),
                         ["RL.ALL", 2, "a", "b", "LIMIT", "LEAKY", 3, 1, 1000, "NODELAY", "LOCKOUT", 9,
                          "LIMIT", "QUOTA", 5, "DAY", "OFFSET", 60, "LOCKOUT", 8, "BACKOFF", 3])

    def test_lockout_must_be_a_lockout(self):
        with self.assertRaisesRegex(TypeError, "^lockout: "):
            command_args("k", Token(10, 1, 1000, lockout=5000))

    def test_lockinfo_reply(self):
        self.assertEqual(parse_lockinfo([5000, 1]), LockInfo(5000, 1))
        self.assertEqual(parse_lockinfo({b"lock_ms": 0, b"strikes": 2}), LockInfo(0, 2))
        self.assertEqual(parse_lockinfo({"lock_ms": 7, "strikes": 0}), LockInfo(7, 0))
        self.assertTrue(LockInfo(7, 0).locked)
        self.assertFalse(LockInfo(0, 2).locked)


class Lockouts(RedisCase):
    def test_every_spec_locks_its_key_on_a_denial(self):
        lock = Lockout(10_000)
        specs = [Token(1, 1, 60_000, lockout=lock), Leaky(1, 1, 60_000, nodelay=True, lockout=lock),
                 Window(1, 60_000, fixed=True, lockout=lock), SlidingLog(1, 60_000, lockout=lock),
                 Quota(1, "DAY", lockout=lock)]
        for i, spec in enumerate(specs):
            with self.subTest(spec=spec):
                key = f"k{i}"
                self.assertTrue(limit(self.r, key, spec).allowed)
                self.assertEqual(lockinfo(self.r, key), LockInfo(0, 0))
                self.assertFalse(limit(self.r, key, spec).allowed)
                self.assertEqual(lockinfo(self.r, key), LockInfo(10_000, 1))

    def test_backoff_and_unblock(self):
        spec = Token(1, 1, 1000, lockout=Lockout(10_000, backoff=2, maxlock_ms=30_000, forgive_ms=60_000))
        self.assertEqual(limit(self.r, "t", spec), Result(True, 1, 0, -1, 1000, 0))
        # Denied: the lock starts; its record lives FORGIVE past the lock's end.
        self.assertEqual(limit(self.r, "t", spec), Result(False, 1, 0, 10_000, 70_000, 0))
        self.advance(5000)
        self.assertEqual(limit(self.r, "t", spec), Result(False, 1, 0, 5000, 65_000, 0))  # the bucket is full again
        self.assertEqual(lockinfo(self.r, "t"), LockInfo(5000, 1))
        self.advance(5000)
        self.assertTrue(limit(self.r, "t", spec).allowed)
        self.assertEqual(limit(self.r, "t", spec).retry_after_ms, 20_000)  # the second strike: twice as long
        self.assertEqual(lockinfo(self.r, "t"), LockInfo(20_000, 2))
        self.assertTrue(unblock(self.r, "t"))
        self.assertEqual(lockinfo(self.r, "t"), LockInfo(0, 0))
        self.assertFalse(unblock(self.r, "t"))

    def test_readonly_and_dryrun_start_no_lock(self):
        spec = Window(1, 60_000, fixed=True, lockout=Lockout(10_000))
        limit(self.r, "w", spec)
        for kw in ({"dryrun": True}, {"readonly": True}):
            self.assertEqual(limit(self.r, "w", spec, **kw).retry_after_ms, 45_000)
        self.assertEqual(lockinfo(self.r, "w"), LockInfo(0, 0))

    def test_headers_of_a_locked_key(self):
        # The lock's record ends 70 s from now, the lock 10 s: t is capped at Retry-After (docs/headers.md).
        spec = Token(1, 1, 1000, lockout=Lockout(10_000, forgive_ms=60_000))
        limit(self.r, "h", spec)
        res = limit(self.r, "h", spec)
        self.assertEqual(rate_limit_headers([("login", spec, res)], res.allowed, res.retry_after_ms),
                         {"RateLimit-Policy": '"login";q=1;w=1', "RateLimit": '"login";r=0;t=10', "Retry-After": "10"})

    def test_bad_lockout_is_the_servers_error(self):
        cases = [(Lockout(0), "LOCKOUT"), (Lockout(1000, backoff=17), "BACKOFF"),
                 (Lockout(1000, maxlock_ms=999), "MAXLOCK"), (Lockout(1000, forgive_ms=0), "FORGIVE")]
        for lock, name in cases:
            with self.subTest(lockout=lock), self.assertRaisesRegex(redis.ResponseError, rf"^{name}: "):
                limit(self.r, "bad", Token(1, 1, 1000, lockout=lock))
        self.assertEqual(self.r.exists("bad"), 0)


class ByHand(RedisCase):
    def test_block_keeps_the_state(self):
        self.assertEqual(lockinfo(self.r, "none"), LockInfo(0, 0))
        spec = Token(3, 1, 1000)
        self.assertEqual(limit(self.r, "b", spec, cost=2).remaining, 1)
        self.assertIsNone(block(self.r, "b", 5000))
        self.assertEqual(lockinfo(self.r, "b"), LockInfo(5000, 0))  # a lock by hand counts no strike
        self.assertEqual(limit(self.r, "b", spec), Result(False, 3, 0, 5000, 5000, 0))
        self.assertTrue(unblock(self.r, "b"))
        self.assertEqual(limit(self.r, "b", spec).remaining, 0)  # the bucket as it was: 1 left, now taken

    def test_block_a_new_key_until_it_ends(self):
        block(self.r, "n", 2000)
        self.assertEqual(limit(self.r, "n", Window(5, 60_000, fixed=True)), Result(False, 5, 0, 2000, 2000, 0))
        self.advance(2000)
        self.assertEqual(lockinfo(self.r, "n"), LockInfo(0, 0))
        self.assertEqual(limit(self.r, "n", Window(5, 60_000, fixed=True)).remaining, 4)

    def test_bad_input_is_the_servers_error(self):
        with self.assertRaisesRegex(redis.ResponseError, "^ms: "):
            block(self.r, "b", 0)
        self.assertEqual(self.r.exists("b"), 0)
        self.r.set("s", "a string")
        for call in (lambda: block(self.r, "s", 1000), lambda: unblock(self.r, "s"), lambda: lockinfo(self.r, "s")):
            with self.assertRaisesRegex(redis.ResponseError, "WRONGTYPE"):
                call()
        self.assertEqual(self.r.get("s"), b"a string")


class All(RedisCase):
    def test_lockout_clause_locks_on_a_denied_call(self):
        limits = [("{u}:s", Token(10, 1, 60_000)), ("{u}:l", Window(1, 60_000, fixed=True, lockout=Lockout(60_000)))]
        self.assertTrue(limit_all(self.r, limits).allowed)
        self.advance(10_000)  # the window has 35 s left, less than the lock will hold
        out = limit_all(self.r, limits)
        self.assertEqual((out.allowed, out.retry_after_ms), (False, 60_000))
        # The lock is the one write of the denied call: the bucket kept its token.
        self.assertEqual(lockinfo(self.r, "{u}:l"), LockInfo(60_000, 1))
        self.assertEqual([r.remaining for r in limit_all(self.r, limits, cost=0, readonly=True).limits], [9, 0])
        self.advance(35_000)  # a new window, but the lock holds 25 s longer: the whole call is denied
        out = limit_all(self.r, limits)
        self.assertEqual((out.allowed, [r.allowed for r in out.limits]), (False, [True, False]))
        # The lock's record lives until its strike is forgiven: 25 s, then the lock's own 60 s.
        self.assertEqual(out.limits[1], Result(False, 1, 0, 25_000, 85_000, 0))
        unblock(self.r, "{u}:l")
        self.assertTrue(limit_all(self.r, limits).allowed)

    def test_blocked_key_denies_the_call(self):
        limits = [("{v}:s", Token(10, 1, 1000)), ("{v}:q", Quota(100, "MONTH"))]
        block(self.r, "{v}:q", 3000)
        out = limit_all(self.r, limits)
        self.assertEqual((out.allowed, out.retry_after_ms), (False, 3000))
        self.assertEqual(self.r.exists("{v}:s"), 0)


if __name__ == "__main__":
    unittest.main()
