"""limit() and limit_all() against a real redis-server with the module: every command's typed result,
DRYRUN and the _RO forms consume nothing, RL.ALL is all-or-nothing and its REFUND gives back to every
limit, and the replies are exactly the documented values (docs/commands.md) at a frozen clock."""

import unittest

from support import RedisCase

from redis_ratelimit import Leaky, Result, SlidingLog, Token, Window, limit, limit_all
from redis_ratelimit.limits import all_args, command_args, parse_all, parse_result


class CommandArgs(unittest.TestCase):
    def test_each_spec(self):
        self.assertEqual(command_args("k", Token(10, 5, 1000)), ["RL.TOKEN", "k", 10, 5, 1000])
        self.assertEqual(command_args("k", Token(10, 5, 1000, interval=True), cost=3, dryrun=True),
                         ["RL.TOKEN", "k", 10, 5, 1000, "INTERVAL", "COST", 3, "DRYRUN"])
        self.assertEqual(command_args("k", Leaky(3, 3, 1000, nodelay=True), readonly=True),
                         ["RL.LEAKY_RO", "k", 3, 3, 1000, "NODELAY"])
        self.assertEqual(command_args("k", Window(10, 60000, fixed=True)), ["RL.WINDOW", "k", 10, 60000, "FIXED"])
        self.assertEqual(command_args("k", SlidingLog(2, 1000, mingap_ms=100)),
                         ["RL.SLIDINGLOG", "k", 2, 1000, "MINGAP", 100])

    def test_all(self):
        self.assertEqual(all_args([("a", Token(10, 1, 1000)), ("b", Window(3, 60000))], cost=2),
                         ["RL.ALL", 2, "a", "b", "COST", 2, "LIMIT", "TOKEN", 10, 1, 1000,
                          "LIMIT", "WINDOW", 3, 60000, "SLIDING"])
        self.assertEqual(all_args([("a", Token(10, 1, 1000))], refund=3, readonly=True, dryrun=True),
                         ["RL.ALL_RO", 1, "a", "REFUND", 3, "LIMIT", "TOKEN", 10, 1, 1000])

    def test_refund(self):
        self.assertEqual(command_args("k", Window(10, 60000), refund=2),
                         ["RL.WINDOW", "k", 10, 60000, "SLIDING", "REFUND", 2])
        with self.assertRaises(ValueError):
            all_args([("a", Token(10, 1, 1000))], cost=2, refund=2)

    def test_force(self):
        self.assertEqual(command_args("k", Token(10, 1, 1000), cost=30, force=True),
                         ["RL.TOKEN", "k", 10, 1, 1000, "COST", 30, "FORCE"])
        self.assertEqual(command_args("k", Window(10, 60000), force=True),
                         ["RL.WINDOW", "k", 10, 60000, "SLIDING", "FORCE"])
        self.assertEqual(all_args([("a", Token(10, 1, 1000))], cost=5, force=True, readonly=True),
                         ["RL.ALL_RO", 1, "a", "COST", 5, "FORCE", "LIMIT", "TOKEN", 10, 1, 1000])
        with self.assertRaises(ValueError):
            command_args("k", Token(10, 1, 1000), refund=2, force=True)

    def test_resp3_map(self):
        reply = {b"allowed": 1, b"limit": 10, b"remaining": 9, b"retry_after_ms": -1,
                 b"reset_after_ms": 200, b"wait_ms": 0}
        self.assertEqual(parse_result(reply), Result(True, 10, 9, -1, 200, 0))
        out = parse_all({"allowed": 0, "retry_after_ms": 5, "reset_after_ms": 7, "limits": [reply]})
        self.assertEqual((out.allowed, out.retry_after_ms, out.reset_after_ms, len(out.limits)), (False, 5, 7, 1))


class Commands(RedisCase):
    def test_token(self):
        spec = Token(1, 3, 1000)
        self.assertEqual(limit(self.r, "t", spec), Result(True, 1, 0, -1, 334, 0))
        self.advance(100)
        self.assertEqual(limit(self.r, "t", spec), Result(False, 1, 0, 234, 234, 0))

    def test_leaky_shaping(self):
        spec = Leaky(3, 3, 1000)
        waits = [limit(self.r, "q", spec).wait_ms for _ in range(3)]
        self.assertEqual(waits, [0, 334, 667])
        self.assertEqual(limit(self.r, "q", spec), Result(False, 3, 0, 334, 1000, 0))

    def test_window_fixed(self):
        spec = Window(2, 60000, fixed=True)
        self.assertEqual([limit(self.r, "w", spec).remaining for _ in range(2)], [1, 0])
        self.assertEqual(limit(self.r, "w", spec), Result(False, 2, 0, 45000, 45000, 0))

    def test_slidinglog_logs_denials(self):
        spec = SlidingLog(2, 1000)
        self.assertEqual([limit(self.r, "l", spec).allowed for _ in range(3)], [True, True, False])
        # The denied attempt is logged too (attempts in one µs share a weighted member): a peek is denied
        # while the log holds more than the limit.
        self.assertFalse(limit(self.r, "l", spec, cost=0).allowed)

    def test_dryrun_and_readonly_consume_nothing(self):
        spec = Token(5, 1, 1000)
        for kw in ({"dryrun": True}, {"readonly": True}):
            self.assertEqual(limit(self.r, "d", spec, cost=5, **kw).allowed, True)
        self.assertEqual(self.r.exists("d"), 0)
        self.assertEqual(limit(self.r, "d", spec, cost=5).remaining, 0)

    def test_cost_above_capacity(self):
        res = limit(self.r, "c", Token(10, 5, 1000), cost=11)
        self.assertEqual((res.allowed, res.retry_after_ms), (False, -1))


class All(RedisCase):
    LIMITS = [("{u}:s", Token(10, 1, 1000)), ("{u}:h", Window(3, 60000))]

    def test_admits_and_consumes_from_every_limit(self):
        out = limit_all(self.r, self.LIMITS)
        self.assertTrue(out.allowed)
        self.assertEqual([r.remaining for r in out.limits], [9, 2])

    def test_denial_consumes_nothing(self):
        out = limit_all(self.r, self.LIMITS, cost=4)
        self.assertFalse(out.allowed)
        self.assertEqual([r.allowed for r in out.limits], [True, False])
        self.assertEqual(self.r.exists("{u}:s", "{u}:h"), 0)

    def test_refund_gives_back_to_every_limit(self):
        limit_all(self.r, self.LIMITS, cost=2)
        self.assertEqual([r.remaining for r in limit_all(self.r, self.LIMITS, readonly=True).limits], [7, 0])
        out = limit_all(self.r, self.LIMITS, refund=2)
        self.assertEqual((out.allowed, out.retry_after_ms, out.reset_after_ms), (True, -1, 0))
        self.assertEqual([r.remaining for r in out.limits], [10, 3])
        self.assertEqual(self.r.exists("{u}:s", "{u}:h"), 0)  # both idle again: no key

    def test_force_takes_past_every_limit(self):
        out = limit_all(self.r, self.LIMITS, cost=5, force=True)
        self.assertTrue(out.allowed)
        self.assertEqual([r.remaining for r in out.limits], [5, 0])
        out = limit(self.r, "{u}:s", Token(10, 1, 1000), cost=12, force=True)  # 7 below empty
        self.assertEqual((out.allowed, out.remaining, out.retry_after_ms), (True, 0, -1))
        after = limit(self.r, "{u}:s", Token(10, 1, 1000))
        self.assertEqual((after.allowed, after.retry_after_ms), (False, 8000))  # the debt, then 1 token

    def test_readonly_is_dryrun(self):
        limit_all(self.r, self.LIMITS)
        for cost in (1, 2, 3):
            self.assertEqual(limit_all(self.r, self.LIMITS, cost=cost, readonly=True),
                             limit_all(self.r, self.LIMITS, cost=cost, dryrun=True))
        self.assertEqual(limit_all(self.r, self.LIMITS, readonly=True, refund=1),
                         limit_all(self.r, self.LIMITS, dryrun=True, refund=1))
        self.assertEqual(limit(self.r, "{u}:s", Token(10, 1, 1000), refund=1).remaining, 10)


if __name__ == "__main__":
    unittest.main()
