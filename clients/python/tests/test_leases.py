"""acquire(), release(), renew(), leases() and the Concurrency spec in limit_all() against a real
redis-server with the module: a lease is taken while the held units leave room, denied (no lease) when
not, given back and renewed by id; an ID names the lease again; DRYRUN and RL.ACQUIRE_RO record nothing;
RL.ALL takes a lease only if every limit admits; WAIT is woken by a release; bad input is the server's
error, naming the argument. The clock is frozen, so every ttl and retry is exact."""

import threading
import unittest

import redis
from support import RedisCase, client

from redis_ratelimit import (AcquireResult, Concurrency, Lease, Policy, Result, Token, Window, acquire, leases,
                             limit, limit_all, release, renew)
from redis_ratelimit.limits import acquire_args, all_args, parse_all, parse_result


class Args(unittest.TestCase):
    def test_acquire(self):
        self.assertEqual(acquire_args("k", 5, 30000), ["RL.ACQUIRE", "k", 5, 30000])
        self.assertEqual(acquire_args("k", 5, 30000, cost=2, lease_id="job", wait_ms=100, dryrun=True),
                         ["RL.ACQUIRE", "k", 5, 30000, "ID", b"job", "COST", 2, "WAIT", 100, "DRYRUN"])
        self.assertEqual(acquire_args("k", 5, 30000, dryrun=True, readonly=True), ["RL.ACQUIRE_RO", "k", 5, 30000])

    def test_all(self):
        self.assertEqual(all_args([("a", Concurrency(3, 1000, lease_id="x")), ("b", Token(10, 1, 1000))], cost=2),
                         ["RL.ALL", 2, "a", "b", "COST", 2, "LIMIT", "CONCURRENCY", 3, 1000, "ID", b"x",
                          "LIMIT", "TOKEN", 10, 1, 1000])

    def test_seven_fields(self):
        self.assertEqual(parse_result([1, 5, 4, -1, 30000, 0, b"1-2"]), AcquireResult(True, 5, 4, -1, 30000, 0, "1-2"))
        resp3 = {b"allowed": 0, b"limit": 5, b"remaining": 0, b"retry_after_ms": 7, b"reset_after_ms": 9,
                 b"wait_ms": 0, b"lease": None}
        self.assertEqual(parse_result(resp3), AcquireResult(False, 5, 0, 7, 9, 0, None))
        six = [1, 10, 9, -1, 100, 0]
        out = parse_all([1, -1, 30000, [1, 5, 4, -1, 30000, 0, b"L"], six])
        self.assertEqual(out.limits, [AcquireResult(True, 5, 4, -1, 30000, 0, "L"), Result(True, 10, 9, -1, 100, 0)])

    def test_not_a_policy(self):
        with self.assertRaises(TypeError):
            Policy("jobs", Concurrency(5, 30000))


class Leases(RedisCase):
    def test_acquire_deny_release(self):
        first = acquire(self.r, "c", 2, 30000)
        self.assertIsInstance(first.lease, str)
        self.assertEqual(first, AcquireResult(True, 2, 1, -1, 30000, 0, first.lease))
        self.advance(1000)
        second = acquire(self.r, "c", 2, 30000)
        self.assertEqual((second.allowed, second.remaining, second.reset_after_ms), (True, 0, 30000))
        self.assertNotEqual(second.lease, first.lease)
        # Full: the first lease frees a unit when it expires, 29 s from now.
        self.assertEqual(acquire(self.r, "c", 2, 30000), AcquireResult(False, 2, 0, 29000, 30000, 0, None))
        self.assertEqual(leases(self.r, "c"), [Lease(first.lease, 1, 29000), Lease(second.lease, 1, 30000)])
        self.assertTrue(release(self.r, "c", first.lease))
        self.assertFalse(release(self.r, "c", first.lease))
        self.assertFalse(release(self.r, "c", "no-such-lease"))
        self.advance(500)  # leases taken at one instant are listed by end: later, oldest first is by age
        third = acquire(self.r, "c", 2, 10000)
        self.assertEqual((third.allowed, third.remaining, third.reset_after_ms), (True, 0, 29500))
        self.assertEqual(leases(self.r, "c"), [Lease(second.lease, 1, 29500), Lease(third.lease, 1, 10000)])

    def test_cost(self):
        self.assertEqual(acquire(self.r, "c", 5, 1000, cost=3).remaining, 2)
        self.advance(400)
        self.assertEqual(acquire(self.r, "c", 5, 1000, cost=3), AcquireResult(False, 5, 2, 600, 600, 0, None))
        self.assertEqual(acquire(self.r, "c", 5, 1000, cost=6), AcquireResult(False, 5, 2, -1, 600, 0, None))
        self.assertEqual([lease.units for lease in leases(self.r, "c")], [3])

    def test_expiry_and_renew(self):
        held = acquire(self.r, "c", 1, 1000).lease
        self.advance(600)
        self.assertTrue(renew(self.r, "c", held, 5000))
        self.assertEqual(leases(self.r, "c"), [Lease(held, 1, 5000)])
        self.advance(1000)  # past the first end: renewed, still held
        self.assertFalse(acquire(self.r, "c", 1, 1000).allowed)
        self.assertFalse(renew(self.r, "c", "other", 5000))
        self.advance(4000)  # now it has expired
        self.assertEqual(leases(self.r, "c"), [])
        self.assertFalse(renew(self.r, "c", held, 5000))
        self.assertFalse(release(self.r, "c", held))
        self.assertTrue(acquire(self.r, "c", 1, 1000).allowed)

    def test_id_names_the_lease_again(self):
        held = AcquireResult(True, 1, 0, -1, 3000, 0, "job-1")
        self.assertEqual(acquire(self.r, "c", 1, 3000, lease_id="job-1"), held)
        self.advance(500)
        # The same id renews the lease it names, taking no more units; another id finds no room.
        self.assertEqual(acquire(self.r, "c", 1, 3000, lease_id="job-1"), held)
        self.assertFalse(acquire(self.r, "c", 1, 3000, lease_id="job-2").allowed)
        self.assertEqual(leases(self.r, "c"), [Lease("job-1", 1, 3000)])

    def test_any_bytes_make_an_id(self):
        got = acquire(self.r, "c", 2, 3000, lease_id=b"\xffjob")
        self.assertEqual(got.lease, "\udcffjob")  # not UTF-8: kept as a surrogate, sent back as the byte
        self.assertEqual(leases(self.r, "c"), [Lease("\udcffjob", 1, 3000)])
        self.assertTrue(renew(self.r, "c", got.lease, 4000))
        self.assertTrue(release(self.r, "c", got.lease))

    def test_dryrun_and_readonly_record_nothing(self):
        for kw in ({"dryrun": True}, {"readonly": True}):
            self.assertEqual(acquire(self.r, "c", 3, 1000, cost=3, **kw), AcquireResult(True, 3, 0, -1, 1000, 0, None))
        self.assertEqual(self.r.exists("c"), 0)
        acquire(self.r, "c", 3, 1000)
        for cost in (1, 2, 3):
            self.assertEqual(acquire(self.r, "c", 3, 1000, cost=cost, readonly=True),
                             acquire(self.r, "c", 3, 1000, cost=cost, dryrun=True))
        self.assertEqual(len(leases(self.r, "c")), 1)
        self.assertEqual(limit(self.r, "c", Concurrency(3, 1000), readonly=True),
                         acquire(self.r, "c", 3, 1000, readonly=True))

    def test_bad_input_is_the_servers_error(self):
        cases = [({"limit": 0}, "limit"), ({"lease_ms": 0}, "lease_ms"), ({"cost": 10001}, "COST"),
                 ({"lease_id": ""}, "ID"), ({"lease_id": "x" * 65}, "ID"), ({"wait_ms": 0}, "WAIT"),
                 ({"readonly": True, "wait_ms": 100}, "WAIT")]
        for change, name in cases:
            kw = {"limit": 2, "lease_ms": 1000, **change}
            with self.subTest(change=change), self.assertRaises(redis.ResponseError) as err:
                acquire(self.r, "c", **kw)
            self.assertRegex(str(err.exception), rf"(^|\s)'?{name}'?: ")  # the argument named first
        self.assertEqual(self.r.exists("c"), 0)
        with self.assertRaisesRegex(redis.ResponseError, "lease_ms: "):
            renew(self.r, "c", "x", 0)
        self.r.set("s", "a string")
        for call in (lambda: release(self.r, "s", "x"), lambda: renew(self.r, "s", "x", 1000),
                     lambda: leases(self.r, "s"), lambda: acquire(self.r, "s", 1, 1000)):
            with self.assertRaisesRegex(redis.ResponseError, "WRONGTYPE"):
                call()
        self.assertEqual(self.r.get("s"), b"a string")

    def test_wait_is_woken_by_a_release(self):
        held = acquire(self.r, "c", 1, 600_000).lease
        waiter, answers = client(), []
        thread = threading.Thread(target=lambda: answers.append(acquire(waiter, "c", 1, 1000, wait_ms=600_000)))
        thread.start()
        try:
            self.assertTrue(self.wait_blocked(1), "the waiter never blocked")
            self.assertTrue(release(self.r, "c", held))
        finally:
            thread.join(30)
            waiter.close()
        self.assertEqual(len(answers), 1)
        got = answers[0]
        self.assertEqual((got.allowed, got.remaining), (True, 0))
        self.assertEqual(leases(self.r, "c"), [Lease(got.lease, 1, 1000)])


class AllWithConcurrency(RedisCase):
    LIMITS = [("{u}:c", Concurrency(2, 30000)), ("{u}:h", Window(3, 60000))]

    def test_takes_a_lease_only_if_every_limit_admits(self):
        out = limit_all(self.r, self.LIMITS)
        self.assertTrue(out.allowed)
        lease_result, window_result = out.limits
        self.assertIsInstance(lease_result.lease, str)
        self.assertEqual(lease_result, AcquireResult(True, 2, 1, -1, 30000, 0, lease_result.lease))
        self.assertEqual(type(window_result), Result)
        self.assertEqual(window_result.remaining, 2)
        self.assertEqual(leases(self.r, "{u}:c"), [Lease(lease_result.lease, 1, 30000)])
        # The window admits 2 more, the leases only 1: denied, no lease, nothing written.
        denied = limit_all(self.r, self.LIMITS, cost=2)
        self.assertFalse(denied.allowed)
        self.assertEqual([(r.allowed, r.remaining) for r in denied.limits], [(False, 1), (True, 2)])
        self.assertIsNone(denied.limits[0].lease)
        self.assertEqual(len(leases(self.r, "{u}:c")), 1)
        self.assertEqual([r.remaining for r in limit_all(self.r, self.LIMITS, readonly=True).limits], [0, 1])

    def test_id_renews_its_lease(self):
        first = limit_all(self.r, self.LIMITS).limits[0].lease
        self.advance(1000)
        again = limit_all(self.r, [("{u}:c", Concurrency(2, 30000, lease_id=first)), self.LIMITS[1]])
        self.assertEqual(again.limits[0], AcquireResult(True, 2, 1, -1, 30000, 0, first))
        self.assertEqual(leases(self.r, "{u}:c"), [Lease(first, 1, 30000)])

    def test_readonly_is_dryrun(self):
        limit_all(self.r, self.LIMITS)
        for cost in (1, 2):
            ro = limit_all(self.r, self.LIMITS, cost=cost, readonly=True)
            self.assertEqual(ro, limit_all(self.r, self.LIMITS, cost=cost, dryrun=True))
            self.assertIsNone(ro.limits[0].lease)
        self.assertEqual(len(leases(self.r, "{u}:c")), 1)

    def test_bad_clause_is_the_servers_error(self):
        with self.assertRaisesRegex(redis.ResponseError, "LIMIT 1: ID: "):
            limit_all(self.r, [("{u}:c", Concurrency(2, 30000, lease_id="x" * 65)), self.LIMITS[1]])
        self.assertEqual(self.r.exists("{u}:c", "{u}:h"), 0)


if __name__ == "__main__":
    unittest.main()
