"""The options beyond a spec's parameters, against a real redis-server with the module: ATMOST and its
`granted` field, RL.WINDOW's SUBWINDOWS n, WAIT on RL.TOKEN, RL.WINDOW and RL.ALL (woken by the clock),
a spec's own COST and FORCE (a clause's in RL.ALL); and the commands without a spec, RL.RESET and
CL.THROTTLE. Replies are the documented values (docs/commands.md) at a frozen clock."""

import threading
import unittest

import redis
from support import T0, RedisCase, client

from redis_ratelimit import (AtMostResult, Result, SlidingLog, ThrottleResult, Token, Window, limit, limit_all,
                             reset, throttle)
from redis_ratelimit.limits import all_args, command_args, parse_all, parse_result, throttle_args


class Args(unittest.TestCase):
    def test_subwindows(self):
        self.assertEqual(command_args("k", Window(6, 60000, subwindows=6)),
                         ["RL.WINDOW", "k", 6, 60000, "SUBWINDOWS", 6])
        # Both go, for the module to refuse the pair by name.
        self.assertEqual(command_args("k", Window(6, 60000, fixed=True, subwindows=6)),
                         ["RL.WINDOW", "k", 6, 60000, "FIXED", "SUBWINDOWS", 6])

    def test_atmost_and_wait(self):
        self.assertEqual(command_args("k", Token(10, 1, 1000), cost=5, atmost=True, wait_ms=100),
                         ["RL.TOKEN", "k", 10, 1, 1000, "COST", 5, "ATMOST", "WAIT", 100])
        self.assertEqual(all_args([("a", Token(10, 1, 1000))], cost=2, wait_ms=50),
                         ["RL.ALL", 1, "a", "COST", 2, "WAIT", 50, "LIMIT", "TOKEN", 10, 1, 1000])

    def test_a_specs_own_cost_and_force(self):
        self.assertEqual(all_args([("a", Token(10, 1, 1000, cost=4)), ("b", Window(3, 60000, fixed=True, force=True))]),
                         ["RL.ALL", 2, "a", "b", "LIMIT", "TOKEN", 10, 1, 1000, "COST", 4,
                          "LIMIT", "WINDOW", 3, 60000, "FIXED", "FORCE"])
        self.assertEqual(command_args("k", SlidingLog(5, 1000, cost=2)), ["RL.SLIDINGLOG", "k", 5, 1000, "COST", 2])

    def test_throttle(self):
        self.assertEqual(throttle_args("k", 15, 30, 60), ["CL.THROTTLE", "k", 15, 30, 60])
        self.assertEqual(throttle_args("k", 15, 30, 60, 0), ["CL.THROTTLE", "k", 15, 30, 60, 0])

    def test_granted_reply(self):
        self.assertEqual(parse_result([1, 10, 0, -1, 10000, 0, 3]), AtMostResult(True, 10, 0, -1, 10000, 0, 3))
        resp3 = {b"allowed": 0, b"limit": 10, b"remaining": 0, b"retry_after_ms": 9, b"reset_after_ms": 9,
                 b"wait_ms": 0, b"granted": 0}
        self.assertEqual(parse_result(resp3), AtMostResult(False, 10, 0, 9, 9, 0, 0))
        with self.assertRaises(ValueError):
            parse_result({**resp3, b"lease": 7})

    def test_check_reply_resp3(self):
        six = {"allowed": 1, "limit": 10, "remaining": 9, "retry_after_ms": -1, "reset_after_ms": 100, "wait_ms": 0}
        out = parse_all({"allowed": 1, "retry_after_ms": -1, "reset_after_ms": 100,
                         "limits": {"burst": six, "hour": {**six, "limit": 3, "remaining": 2}}})
        self.assertEqual(out.limits, [Result(True, 10, 9, -1, 100, 0), Result(True, 3, 2, -1, 100, 0)])


class AtMost(RedisCase):
    def test_token_takes_what_is_there(self):
        spec = Token(10, 1, 1000)
        limit(self.r, "t", spec, cost=7)
        self.assertEqual(limit(self.r, "t", spec, cost=5, atmost=True), AtMostResult(True, 10, 0, -1, 10000, 0, 3))
        self.assertEqual(limit(self.r, "t", spec, cost=5, atmost=True), AtMostResult(False, 10, 0, 1000, 10000, 0, 0))
        self.advance(2000)
        self.assertEqual(limit(self.r, "t", spec, cost=5, atmost=True, dryrun=True),
                         AtMostResult(True, 10, 0, -1, 10000, 0, 2))
        self.assertEqual(limit(self.r, "t", spec, cost=0, readonly=True).remaining, 2)  # the dry run took nothing

    def test_window(self):
        spec = Window(5, 60000, fixed=True)
        limit(self.r, "w", spec, cost=4)
        self.assertEqual(limit(self.r, "w", spec, cost=3, atmost=True), AtMostResult(True, 5, 0, -1, 45000, 0, 1))
        self.assertEqual(type(limit(self.r, "w", spec)), Result)  # without ATMOST, six fields

    def test_refused_where_it_does_not_apply(self):
        with self.assertRaisesRegex(redis.ResponseError, "ATMOST"):
            limit(self.r, "t", Token(10, 1, 1000), cost=5, atmost=True, force=True)
        with self.assertRaisesRegex(redis.ResponseError, "ATMOST"):
            limit(self.r, "q", SlidingLog(10, 1000), cost=5, atmost=True)


class Subwindows(RedisCase):
    def test_cells(self):
        spec = Window(6, 60000, subwindows=6)  # 6 per minute in cells of 10 s
        self.set_clock(T0)
        self.assertEqual(limit(self.r, "s", spec, cost=3), Result(True, 6, 3, -1, 60000, 0))
        self.set_clock(T0 + 25000)
        self.assertEqual(limit(self.r, "s", spec, cost=3), Result(True, 6, 0, -1, 55000, 0))
        self.assertEqual(limit(self.r, "s", spec), Result(False, 6, 0, 35000, 55000, 0))  # until cell 0 leaves
        self.set_clock(T0 + 60000)  # cell 0 has left: 3 counted; the 3 taken now count until 120 s
        self.assertEqual(limit(self.r, "s", spec, cost=5, atmost=True), AtMostResult(True, 6, 0, -1, 60000, 0, 3))

    def test_bad_cells_are_the_servers_error(self):
        with self.assertRaisesRegex(redis.ResponseError, "^SUBWINDOWS: "):
            limit(self.r, "s", Window(6, 60000, subwindows=7))
        with self.assertRaisesRegex(redis.ResponseError, "^SUBWINDOWS: "):
            limit(self.r, "s", Window(6, 60000, subwindows=61))
        with self.assertRaisesRegex(redis.ResponseError, "^(FIXED|SUBWINDOWS): cannot be combined"):
            limit(self.r, "s", Window(6, 60000, fixed=True, subwindows=6))
        self.assertEqual(self.r.exists("s"), 0)


class Wait(RedisCase):
    def waited(self, call):
        """Run call(a client of its own) in a thread until it blocks, advance the clock a second, and
        answer what the call got."""
        waiter, answers = client(), []
        thread = threading.Thread(target=lambda: answers.append(call(waiter)))
        thread.start()
        try:
            self.assertTrue(self.wait_blocked(1), "the waiter never blocked")
            self.advance(1000)
        finally:
            thread.join(30)
            waiter.close()
        self.assertEqual(len(answers), 1)
        return answers[0]

    def test_token_waits_for_its_token(self):
        spec = Token(1, 1, 1000)
        limit(self.r, "t", spec)
        got = self.waited(lambda c: limit(c, "t", spec, wait_ms=600_000))
        self.assertEqual(got, Result(True, 1, 0, -1, 1000, 0))

    def test_window_and_all_wait(self):
        spec = Window(1, 1000, fixed=True)
        limit(self.r, "w", spec)
        self.assertEqual(self.waited(lambda c: limit(c, "w", spec, wait_ms=600_000)), Result(True, 1, 0, -1, 1000, 0))
        limits = [("{u}:a", Token(1, 1, 1000)), ("{u}:b", Window(5, 60000, fixed=True))]
        limit_all(self.r, limits)
        got = self.waited(lambda c: limit_all(c, limits, wait_ms=600_000))
        self.assertEqual((got.allowed, [r.remaining for r in got.limits]), (True, [0, 3]))

    def test_no_wait_when_it_cannot_fit_in_time(self):
        spec = Token(1, 1, 1000)
        limit(self.r, "t", spec)
        self.assertEqual(limit(self.r, "t", spec, wait_ms=999), Result(False, 1, 0, 1000, 1000, 0))
        with self.assertRaisesRegex(redis.ResponseError, "WAIT"):
            limit(self.r, "t", spec, wait_ms=100, readonly=True)
        with self.assertRaisesRegex(redis.ResponseError, "^WAIT: "):
            limit(self.r, "t", spec, wait_ms=0)


class SpecsOwnCost(RedisCase):
    def test_a_clause_cost_and_force(self):
        limits = [("{u}:a", Token(10, 1, 1000, cost=4)), ("{u}:b", Window(3, 60000, fixed=True))]
        out = limit_all(self.r, limits)
        self.assertEqual((out.allowed, [r.remaining for r in out.limits]), (True, [6, 2]))
        forced = [("{u}:a", Token(10, 1, 1000, force=True)), ("{u}:b", Window(3, 60000, fixed=True))]
        out = limit_all(self.r, forced, cost=2)  # the window admits 2, the bucket takes 2 of its 6
        self.assertEqual((out.allowed, [r.remaining for r in out.limits]), (True, [4, 0]))
        # The window denies: nothing is written, the forced bucket included (read at capacity 2, it holds 2).
        out = limit_all(self.r, [("{u}:a", Token(2, 1, 1000, force=True)), limits[1]])
        self.assertEqual((out.allowed, [(r.allowed, r.remaining) for r in out.limits]),
                         (False, [(True, 2), (False, 0)]))
        self.assertEqual(limit(self.r, "{u}:a", Token(10, 1, 1000), cost=0, readonly=True).remaining, 4)  # unwritten

    def test_in_one_command(self):
        self.assertEqual(limit(self.r, "t", Token(10, 1, 1000, cost=4)).remaining, 6)
        with self.assertRaisesRegex(redis.ResponseError, "^COST: given more than once"):
            limit(self.r, "t", Token(10, 1, 1000, cost=4), cost=2)


class Reset(RedisCase):
    def test_deletes_limiter_keys(self):
        limit(self.r, "a", Token(10, 1, 1000))
        limit(self.r, "b", SlidingLog(5, 1000))
        self.assertEqual(reset(self.r, "a", "b", "missing"), 2)
        self.assertEqual(self.r.exists("a", "b"), 0)
        self.assertEqual(limit(self.r, "a", Token(10, 1, 1000)).remaining, 9)  # a new bucket
        self.assertEqual(reset(self.r, "nothing"), 0)

    def test_another_type_deletes_nothing(self):
        limit(self.r, "a", Token(10, 1, 1000))
        self.r.set("s", "x")
        with self.assertRaisesRegex(redis.ResponseError, "WRONGTYPE"):
            reset(self.r, "a", "s")
        self.assertEqual(self.r.exists("a", "s"), 2)


class Throttle(RedisCase):
    def test_redis_cells_replies(self):
        self.assertEqual(throttle(self.r, "user123", 15, 30, 60), ThrottleResult(False, 16, 15, -1, 2))
        denied = throttle(self.r, "user123", 15, 30, 60, 16)
        self.assertEqual(denied, ThrottleResult(True, 16, 15, 2, 2))
        self.assertFalse(denied.allowed)
        self.assertEqual(throttle(self.r, "user123", 15, 30, 60, 0), ThrottleResult(False, 16, 15, -1, 2))
        with self.assertRaisesRegex(redis.ResponseError, "^max_burst: "):
            throttle(self.r, "user123", "x", 30, 60)


if __name__ == "__main__":
    unittest.main()
