"""Policies kept in Redis through the helpers, against a real redis-server with the module: policy_set,
policy_get (read back into the same specs), policy_list, policy_del and policy_flush; check() (RL.CHECK,
RL.CHECK_RO) answering exactly what RL.ALL answers on separate keys, all or nothing, its DRYRUN, COST, a
limit's own COST and WAIT; SHADOW; a policy replaced under a live key (kept state, capped, fresh limits);
and every bad input as the server's error naming the argument, changing nothing."""

import threading
import unittest

import redis
from support import RedisCase, client

from redis_ratelimit import (AcquireResult, AllResult, Concurrency, Lease, Leaky, Lockout, Quota, Result, SlidingLog,
                             Smooth, StoredPolicy, Token, Window, check, leases, limit_all, policy_del, policy_flush,
                             policy_get, policy_list, policy_set, release, renew)
from redis_ratelimit.stored_policy import check_args, parse_policy, policy_set_args

BURST, HOUR = Token(3, 1, 1000), Window(5, 60_000, fixed=True)


class Args(unittest.TestCase):
    def test_set(self):
        self.assertEqual(policy_set_args("api", [("burst", Token(10, 10, 1000)), ("day", Quota(1000, "DAY"))]),
                         ["RL.POLICY", "SET", "api", "LIMIT", "burst", "TOKEN", 10, 10, 1000,
                          "LIMIT", "day", "QUOTA", 1000, "DAY"])
        self.assertEqual(policy_set_args("s", [("s", Smooth(5.5, cost=2))], shadow=True),
                         ["RL.POLICY", "SET", "s", "SHADOW", "LIMIT", "s", "SMOOTH", "5.5", "COST", 2])
        with self.assertRaisesRegex(TypeError, "not a limiter spec"):
            policy_set_args("api", [("burst", 10)])

    def test_check(self):
        self.assertEqual(check_args("api", "k"), ["RL.CHECK", "api", "k"])
        self.assertEqual(check_args("api", "k", cost=3, dryrun=True, wait_ms=100),
                         ["RL.CHECK", "api", "k", "COST", 3, "WAIT", 100, "DRYRUN"])
        self.assertEqual(check_args("api", "k", cost=0, dryrun=True, readonly=True),
                         ["RL.CHECK_RO", "api", "k", "COST", 0])

    def test_get_reads_the_specs_back(self):
        words = [b"SHADOW", b"LIMIT", b"s", b"TOKEN", b"10", b"10", b"1000", b"interval", b"LOCKOUT", b"50",
                 b"BACKOFF", b"2", b"LIMIT", b"LIMIT", b"WINDOW", b"6", b"60000", b"SUBWINDOWS", b"6", b"COST", b"2",
                 b"LIMIT", b"g", b"SMOOTH", b"5.5", b"WARMUP", b"100", b"COLDFACTOR", b"2", b"MAXWAIT", b"0"]
        self.assertEqual(parse_policy("p", words), StoredPolicy("p", [
            ("s", Token(10, 10, 1000, interval=True, lockout=Lockout(50, backoff=2))),
            ("LIMIT", Window(6, 60000, subwindows=6, cost=2)),  # a limit may be named LIMIT
            ("g", Smooth(5.5, warmup_ms=100, coldfactor=2, maxwait_ms=0))], shadow=True))
        for bad in ([b"LIMIT", b"x", b"TOKEN", b"1", b"1"], [b"LIMIT", b"x", b"HOURLY", b"1"],
                    [b"LIMIT", b"x", b"WINDOW", b"1", b"1", b"NEWOPTION"],
                    [b"LIMIT", b"x", b"WINDOW", b"1", b"1", b"NODELAY"],
                    [b"LIMIT", b"x", b"WINDOW", b"1", b"1", b"BACKOFF", b"2"], [b"TOKEN"]):
            with self.subTest(words=bad), self.assertRaisesRegex(ValueError, "^policy 'p'"):
                parse_policy("p", bad)


class PolicyCase(RedisCase):
    """A RedisCase without policies: FLUSHALL leaves them, RL.POLICY FLUSH does not."""

    def setUp(self):
        super().setUp()
        policy_flush(self.r)

    def tearDown(self):
        policy_flush(self.r)
        super().tearDown()


class Store(PolicyCase):
    def test_set_get_list_del_flush(self):
        limits = [("burst", Token(10, 10, 1000)), ("hour", Window(100, 3_600_000, fixed=True))]
        self.assertIsNone(policy_set(self.r, "api", limits))
        self.assertEqual(policy_get(self.r, "api"), StoredPolicy("api", limits))
        policy_set(self.r, "B-2", [("s", Token(10, 10, 1000))], shadow=True)
        self.assertEqual(self.r.execute_command("RL.POLICY", "GET", "B-2"),
                         [b"SHADOW", b"LIMIT", b"s", b"TOKEN", b"10", b"10", b"1000"])
        self.assertEqual(policy_get(self.r, "B-2"), StoredPolicy("B-2", [("s", Token(10, 10, 1000))], shadow=True))
        self.assertEqual(policy_list(self.r), ["B-2", "api"])  # bytewise
        self.r.flushall()  # keys go, policies stay
        self.assertEqual(policy_list(self.r), ["B-2", "api"])
        self.assertTrue(policy_del(self.r, "api"))
        self.assertFalse(policy_del(self.r, "api"))
        self.assertIsNone(policy_get(self.r, "api"))
        self.assertIsNone(policy_flush(self.r))
        self.assertEqual(policy_list(self.r), [])

    def test_every_kind_and_option_reads_back(self):
        limits = [("t", Token(10, 2, 1000, interval=True, lockout=Lockout(5000, backoff=2, maxlock_ms=60000),
                                cost=2)),
                  ("l", Leaky(5, 1, 200, nodelay=True, force=True)),
                  ("w", Window(6, 60000, subwindows=6)), ("f", Window(9, 1000, fixed=True, lockout=Lockout(10))),
                  ("g", Smooth(5.5, warmup_ms=4000, coldfactor=2.5, maxwait_ms=100)), ("b", Smooth(2, maxburst_ms=0)),
                  ("q", Quota(1000, "DAY", offset_minutes=60, lockout=Lockout(1000, forgive_ms=2000))),
                  ("s", SlidingLog(5, 1000, mingap_ms=10, lockout=Lockout(20))), ("c", Concurrency(3, 30000, cost=2))]
        policy_set(self.r, "all-kinds_1", limits)
        self.assertEqual(policy_get(self.r, "all-kinds_1"), StoredPolicy("all-kinds_1", limits))

    def test_replacing_is_whole(self):
        policy_set(self.r, "api", [("a", BURST), ("b", HOUR)])
        policy_set(self.r, "api", [("c", Token(1, 1, 1000))])
        self.assertEqual(policy_get(self.r, "api"), StoredPolicy("api", [("c", Token(1, 1, 1000))]))

    def test_bad_input_is_the_servers_error_and_changes_nothing(self):
        policy_set(self.r, "api", [("burst", BURST)])
        cases = [("bad name", [("a", BURST)], r"^name: "), ("x" * 65, [("a", BURST)], r"^name: "),
                 ("", [("a", BURST)], r"^name: "), ("api", [], r"^LIMIT: a policy needs 1 to 16 limits"),
                 ("api", [(f"l{i}", BURST) for i in range(17)], r"^LIMIT: a policy needs 1 to 16 limits"),
                 ("api", [("a", BURST), ("burst", HOUR), ("burst", BURST)],
                  r"^LIMIT 3 \(burst\): limit name used twice"),
                 ("api", [("a", BURST), ("burst", Token(0, 1, 1000))], r"^LIMIT 2 \(burst\): capacity: "),
                 ("api", [("jobs", Concurrency(3, 30000, lease_id="x"))], r"^LIMIT 1 \(jobs\): ID: "),
                 ("api", [("bad name", BURST)], r"^LIMIT 1"), ("api", [("x" * 33, BURST)], r"^LIMIT 1")]
        for name, limits, error in cases:
            with self.subTest(name=name, limits=limits), self.assertRaisesRegex(redis.ResponseError, error):
                policy_set(self.r, name, limits)
        self.assertEqual(policy_list(self.r), ["api"])
        self.assertEqual(policy_get(self.r, "api"), StoredPolicy("api", [("burst", BURST)]))


class Check(PolicyCase):
    def setUp(self):
        super().setUp()
        policy_set(self.r, "api", [("burst", BURST), ("hour", HOUR)])

    def test_answers_what_rl_all_answers(self):
        self.assertEqual(check(self.r, "api", "u1"), AllResult(True, -1, 45000, [Result(True, 3, 2, -1, 1000, 0),
                                                                                Result(True, 5, 4, -1, 45000, 0)]))
        self.assertEqual(self.r.type("u1"), b"rl-checks")
        self.r.delete("u1")
        # The same calls on one key under the policy and on two keys under RL.ALL: the same replies.
        steps = [(1, 0), (2, 0), (1, 0), (0, 0), (3, 1500), (1, 0), (2, 30_000), (5, 20_000), (1, 0)]
        for cost, later in steps:
            with self.subTest(cost=cost):
                for kw in ({"dryrun": True}, {"readonly": True}, {}):
                    self.assertEqual(check(self.r, "api", "u1", cost=cost, **kw),
                                     limit_all(self.r, [("{x}:1", BURST), ("{x}:2", HOUR)], cost=cost, **kw))
            self.advance(later)

    def test_all_or_nothing(self):
        check(self.r, "api", "u1", cost=3)  # the bucket is empty, the window has 2 left
        denied = check(self.r, "api", "u1")
        self.assertEqual(denied, AllResult(False, 1000, 45000, [Result(False, 3, 0, 1000, 3000, 0),
                                                                 Result(True, 5, 2, -1, 45000, 0)]))
        self.advance(1000)  # one token back; the window took nothing from the denial
        self.assertEqual([r.remaining for r in check(self.r, "api", "u1").limits], [0, 1])

    def test_dryrun_and_readonly_write_nothing(self):
        for kw in ({"dryrun": True}, {"readonly": True}):
            self.assertTrue(check(self.r, "api", "u1", cost=3, **kw).allowed)
        self.assertEqual(self.r.exists("u1"), 0)
        with self.assertRaisesRegex(redis.ResponseError, "DRYRUN|WAIT"):
            check(self.r, "api", "u1", readonly=True, wait_ms=100)

    def test_a_limits_own_cost(self):
        policy_set(self.r, "bytes", [("calls", Token(10, 1, 1000, cost=1)), ("bytes", Token(10_000, 1000, 1000))])
        out = check(self.r, "bytes", "u1", cost=4096)
        self.assertEqual([r.remaining for r in out.limits], [9, 10_000 - 4096])

    def test_wait_is_woken_by_the_clock(self):
        check(self.r, "api", "u1", cost=3)  # the bucket is empty: the next call waits for a token
        waiter, answers = client(), []
        thread = threading.Thread(target=lambda: answers.append(check(waiter, "api", "u1", wait_ms=600_000)))
        thread.start()
        try:
            self.assertTrue(self.wait_blocked(1), "the waiter never blocked")
            self.advance(1000)
        finally:
            thread.join(30)
            waiter.close()
        self.assertEqual(answers, [AllResult(True, -1, 44000, [Result(True, 3, 0, -1, 3000, 0),
                                                                Result(True, 5, 1, -1, 44000, 0)])])

    def test_errors_name_the_policy_and_change_nothing(self):
        with self.assertRaisesRegex(redis.ResponseError, r"^policy 'nope': no such policy"):
            check(self.r, "nope", "u1")
        self.assertEqual(self.r.exists("u1"), 0)
        self.r.set("s", "x")
        with self.assertRaisesRegex(redis.ResponseError, "^WRONGTYPE"):
            check(self.r, "api", "s")
        check(self.r, "api", "u1")
        policy_set(self.r, "other", [("burst", BURST)])
        with self.assertRaisesRegex(redis.ResponseError, r"^key was checked under policy 'api', not 'other'"):
            check(self.r, "other", "u1")
        with self.assertRaisesRegex(redis.ResponseError, r"^COST: "):
            check(self.r, "api", "u1", cost=-1)
        self.assertEqual([r.remaining for r in check(self.r, "api", "u1", cost=0).limits], [2, 4])
        self.assertTrue(policy_del(self.r, "api"))  # the key keeps its state, and answers no such policy
        with self.assertRaisesRegex(redis.ResponseError, r"^policy 'api': no such policy"):
            check(self.r, "api", "u1")
        self.assertEqual(self.r.exists("u1"), 1)


class LogsAndLeases(PolicyCase):
    def test_a_sliding_log_answers_what_rl_all_answers(self):
        limits = [("log", SlidingLog(3, 1000)), ("burst", Token(5, 1, 1000))]
        policy_set(self.r, "strict", limits)
        for cost, later in [(1, 0), (2, 100), (1, 100), (0, 0), (1, 500), (2, 400), (1, 0), (4, 0), (1, 1000)]:
            with self.subTest(cost=cost):
                for kw in ({"dryrun": True}, {"readonly": True}, {}):
                    on_keys = [("{x}:1", limits[0][1]), ("{x}:2", limits[1][1])]
                    self.assertEqual(check(self.r, "strict", "u1", cost=cost, **kw),
                                     limit_all(self.r, on_keys, cost=cost, **kw))
            self.advance(later)

    def test_a_concurrency_limit_takes_leases_on_the_key(self):
        policy_set(self.r, "jobs", [("rate", Token(10, 1, 1000)), ("jobs", Concurrency(2, 30000))])
        first = check(self.r, "jobs", "u1").limits[1]
        self.assertIsInstance(first.lease, str)
        self.assertEqual(first, AcquireResult(True, 2, 1, -1, 30000, 0, first.lease))
        self.assertIsNone(check(self.r, "jobs", "u1", dryrun=True).limits[1].lease)  # a look takes no lease
        second = check(self.r, "jobs", "u1").limits[1].lease
        self.assertEqual(leases(self.r, "u1"), [Lease(first.lease, 1, 30000), Lease(second, 1, 30000)])
        denied = check(self.r, "jobs", "u1")
        self.assertEqual((denied.allowed, denied.retry_after_ms), (False, 30000))
        self.assertEqual(denied.limits[1], AcquireResult(False, 2, 0, 30000, 30000, 0, None))
        self.assertEqual(denied.limits[0].remaining, 8)  # the denial took nothing from the bucket either
        self.assertTrue(renew(self.r, "u1", second, 5000))
        # Taken in the same µs (the frozen clock), the leases are listed by their end: the renewed one first.
        self.assertEqual(leases(self.r, "u1"), [Lease(second, 1, 5000), Lease(first.lease, 1, 30000)])
        self.assertTrue(release(self.r, "u1", first.lease))
        self.assertFalse(release(self.r, "u1", first.lease))
        third = check(self.r, "jobs", "u1")
        self.assertEqual((third.allowed, third.limits[1].remaining), (True, 0))
        self.assertEqual(len(leases(self.r, "u1")), 2)


class Shadow(PolicyCase):
    def test_never_denies_and_keeps_the_state_right(self):
        policy_set(self.r, "s", [("burst", Token(2, 1, 1000))], shadow=True)
        self.assertEqual(check(self.r, "s", "u1", cost=2).limits, [Result(True, 2, 0, -1, 2000, 0)])
        would = check(self.r, "s", "u1")
        self.assertEqual(would, AllResult(True, -1, 2000, [Result(False, 2, 0, 1000, 2000, 0)]))
        policy_set(self.r, "s", [("burst", Token(2, 1, 1000))])  # enforced from the next call on
        self.assertEqual(check(self.r, "s", "u1"), AllResult(False, 1000, 2000, [Result(False, 2, 0, 1000, 2000, 0)]))
        self.advance(1000)
        self.assertTrue(check(self.r, "s", "u1").allowed)


class LiveChange(PolicyCase):
    def test_a_key_moves_to_the_new_policy(self):
        policy_set(self.r, "p", [("burst", Token(10, 1, 1000)), ("gone", Window(3, 60_000, fixed=True))])
        self.assertEqual([r.remaining for r in check(self.r, "p", "u1", cost=3).limits], [7, 0])
        # burst keeps its name and kind: its 7 tokens, capped at 5 (never refilled); "hour" is new: full.
        policy_set(self.r, "p", [("burst", Token(5, 1, 1000)), ("hour", Window(3, 60_000, fixed=True))])
        out = check(self.r, "p", "u1", cost=0)
        self.assertEqual(out.limits, [Result(True, 5, 5, -1, 0, 0), Result(True, 3, 3, -1, 0, 0)])
        self.assertEqual([r.remaining for r in check(self.r, "p", "u1", cost=2).limits], [3, 1])
        # A limit whose kind changed starts fresh.
        policy_set(self.r, "p", [("burst", Window(4, 60_000, fixed=True)), ("hour", Window(3, 60_000, fixed=True))])
        self.assertEqual([r.remaining for r in check(self.r, "p", "u1").limits], [3, 0])


if __name__ == "__main__":
    unittest.main()
