"""with_replicas (redis_ratelimit.replicas) on real servers: the test server as the primary and a replica
of it started here (the same binary, the module loaded, --replicaof 127.0.0.1). Proven: an admitted call
through the wrapper returns once the replica holds the grant (the key read on the replica right after, the
same DUMP and expiry, no sleep); the Redis WAIT follows a reply the module held (RL.ACQUIRE WAIT); each
writing call sends exactly one WAIT and a read-only or DRYRUN call none (the primary's commandstats); with
the replica stopped a grant raises NotReplicated (its reply and acked) while a denial, a release and a
reset are returned, and the Limiter with on_failure="deny" answers a failed decision; the asyncio wrapper
does the same; bad arguments are refused by name."""

import asyncio
import os
import shutil
import subprocess
import tempfile
import threading
import time
import unittest
from typing import Any, List

import redis
import redis.asyncio

from support import PORT, RedisCase, client
from test_lua_mode import executable, free_port

import redis_ratelimit.asyncio as aio
from redis_ratelimit import (NotReplicated, Policy, SlidingLog, Token, acquire, check, limit, limit_all, policy_set,
                             release, renew, reset, throttle, with_replicas)
from redis_ratelimit.limiter import AsyncLimiter, Limiter
from redis_ratelimit.replicas import ReplicaClient
from redis_ratelimit.policy import FROM_FAILURE

FULL = Token(2, 1, 60_000)  # two admissions, then denials (the clock is frozen: no refill)


class Replica:
    """A redis-server with the module that replicates the test server, on 127.0.0.1; stop() ends it."""

    def __init__(self) -> None:
        module = next(entry for entry in client().execute_command("MODULE", "LIST")
                      if b"ratelimit" in dict(zip(entry[::2], entry[1::2]))[b"name"])
        path = dict(zip(module[::2], module[1::2]))[b"path"].decode()
        self.dir = tempfile.mkdtemp(prefix="rl-replica-")
        self.port = free_port()
        self.proc = subprocess.Popen([executable(), "--bind", "127.0.0.1", "--port", str(self.port), "--dir", self.dir,
                                      "--save", "", "--appendonly", "no", "--loadmodule", path,
                                      "--replicaof", "127.0.0.1", str(PORT)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.r = redis.Redis(host="127.0.0.1", port=self.port)
        if not self.linked():
            self.stop()
            raise RuntimeError("the replica never linked to the test server")

    def linked(self) -> bool:
        for _ in range(500):  # a bound on the polling, not a timing being asserted
            try:
                if self.r.info("replication").get("master_link_status") == "up":
                    return True
            except redis.ConnectionError:
                pass
            if self.proc.poll() is not None:
                return False
            time.sleep(0.02)
        return False

    def stop(self) -> None:
        self.r.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


def waits(r: redis.Redis) -> int:
    """WAIT commands the server has run (INFO commandstats: cmdstat_wait)."""
    return int(r.info("commandstats").get("cmdstat_wait", {}).get("calls", 0))


class WithAReplica(RedisCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.replica = Replica() if PORT else None

    @classmethod
    def tearDownClass(cls) -> None:
        if cls.replica:
            cls.replica.stop()

    def setUp(self) -> None:
        super().setUp()
        self.w = with_replicas(self.r, replicas=1, timeout_ms=5000)

    def assert_on_replica(self, key: str) -> None:
        """The key as the primary holds it, read on the replica at once."""
        copy = self.replica.r
        self.assertIsNotNone(self.r.dump(key), key)
        self.assertEqual(copy.dump(key), self.r.dump(key), key)
        self.assertEqual(copy.execute_command("PEXPIRETIME", key), self.r.execute_command("PEXPIRETIME", key), key)

    def test_a_grant_is_on_the_replica_when_it_returns(self) -> None:
        self.assertTrue(limit(self.w, "u:1", FULL).allowed)
        self.assert_on_replica("u:1")
        pair = [("{u:2}:a", Token(5, 1, 1000)), ("{u:2}:b", SlidingLog(3, 60_000))]
        self.assertTrue(limit_all(self.w, pair).allowed)
        for key, _ in pair:
            self.assert_on_replica(key)
        self.assertFalse(throttle(self.w, "u:cell", 5, 10, 60).limited)
        self.assert_on_replica("u:cell")
        got = acquire(self.w, "u:jobs", 2, 30_000)
        self.assertTrue(got.allowed)
        self.assert_on_replica("u:jobs")
        self.assertTrue(renew(self.w, "u:jobs", got.lease or "", 60_000))
        self.assert_on_replica("u:jobs")
        policy_set(self.r, "api", [("burst", Token(3, 1, 1000))])
        self.assertTrue(check(self.w, "api", "u:3").allowed)
        self.assert_on_replica("u:3")

    def test_one_wait_per_writing_call_none_for_reads(self) -> None:
        calls: List[Any] = [
            lambda: limit(self.w, "u:4", FULL), lambda: limit(self.w, "u:4", FULL),
            lambda: limit(self.w, "u:4", FULL),  # the denial is sent with its WAIT too
            lambda: limit_all(self.w, [("{u:5}:a", FULL)]), lambda: throttle(self.w, "u:cell", 5, 10, 60),
            lambda: reset(self.w, "u:4"),
        ]
        for call in calls:
            before = waits(self.r)
            call()
            self.assertEqual(waits(self.r), before + 1)
        reads: List[Any] = [
            lambda: limit(self.w, "u:4", FULL, readonly=True), lambda: limit(self.w, "u:4", FULL, dryrun=True),
            lambda: limit_all(self.w, [("{u:5}:a", FULL)], dryrun=True),
            lambda: acquire(self.w, "u:jobs", 2, 30_000, dryrun=True),
            lambda: acquire(self.w, "DRYRUN", 2, 30_000, lease_id="DRYRUN", readonly=True),
        ]
        for call in reads:
            before = waits(self.r)
            call()
            self.assertEqual(waits(self.r), before)
        # a key or a lease id spelled DRYRUN is not the DRYRUN option: the call writes, and waits
        before = waits(self.r)
        self.assertTrue(acquire(self.w, "DRYRUN", 2, 30_000, lease_id="DRYRUN").allowed)
        self.assertEqual(waits(self.r), before + 1)
        self.assert_on_replica("DRYRUN")

    def test_the_wait_follows_a_reply_the_module_held(self) -> None:
        held = acquire(self.r, "u:slot", 1, 60_000)
        answers: List[Any] = []
        waiter = threading.Thread(target=lambda: answers.append(acquire(self.w, "u:slot", 1, 60_000, wait_ms=60_000)))
        waiter.start()
        self.assertTrue(self.wait_blocked(1))
        release(self.r, "u:slot", held.lease or "")
        waiter.join(60)
        self.assertEqual([a.allowed for a in answers], [True])
        self.assert_on_replica("u:slot")

    def test_asyncio(self) -> None:
        async def main() -> None:
            ar = redis.asyncio.Redis(host="127.0.0.1", port=PORT)
            w = aio.with_replicas(ar, timeout_ms=5000)
            try:
                before = waits(self.r)
                self.assertEqual([(await aio.limit(w, "a:1", FULL)).allowed for _ in range(3)], [True, True, False])
                self.assertEqual(waits(self.r), before + 3)
                self.assert_on_replica("a:1")
                self.assertEqual((await aio.limit(w, "a:1", FULL, readonly=True)).remaining, 0)
                self.assertEqual(waits(self.r), before + 3)
                with self.assertRaisesRegex(redis.ResponseError, "capacity"):  # the error, the connection clean
                    await w.execute_command("RL.TOKEN", "a:bad", 0, 1, 1000)
                self.assertTrue((await aio.limit(w, "a:2", FULL)).allowed)
            finally:
                await w.close()
                await ar.close()
        asyncio.run(main())


class WithoutAReplica(RedisCase):
    """The test server alone: WAIT answers 0, whatever timeout (10 ms here: the tests do not wait long)."""

    def setUp(self) -> None:
        super().setUp()
        self.w = with_replicas(self.r, timeout_ms=10)

    def test_a_grant_raises_a_denial_returns(self) -> None:
        with self.assertRaises(NotReplicated) as caught:
            limit(self.w, "u:1", FULL)
        self.assertEqual((caught.exception.acked, caught.exception.replicas), (0, 1))
        self.assertEqual(caught.exception.reply[:3], [1, 2, 1])  # allowed, limit, remaining: the raw reply
        self.assertIn("RL.TOKEN: the grant reached 0 of 1 replica(s)", str(caught.exception))
        with self.assertRaises(NotReplicated):
            limit(self.w, "u:1", FULL)
        self.assertFalse(limit(self.w, "u:1", FULL).allowed)  # the denial
        with self.assertRaises(NotReplicated):
            throttle(self.w, "u:cell", 0, 1, 60)
        self.assertTrue(throttle(self.w, "u:cell", 0, 1, 60).limited)
        with self.assertRaises(NotReplicated) as got:
            acquire(self.w, "u:jobs", 1, 30_000)
        lease = got.exception.reply[6].decode()
        self.assertFalse(acquire(self.w, "u:jobs", 1, 30_000).allowed)
        with self.assertRaises(NotReplicated):
            renew(self.w, "u:jobs", lease, 30_000)
        self.assertFalse(renew(self.w, "u:jobs", "no-such-lease", 30_000))
        self.assertTrue(release(self.w, "u:jobs", lease))
        self.assertEqual(reset(self.w, "u:1"), 1)
        self.assertTrue(limit(self.w, "u:1", FULL, dryrun=True).allowed)  # no WAIT: nothing to raise

    def test_the_limiter_takes_it_as_a_failure(self) -> None:
        limiter = Limiter(self.w, [Policy("api", FULL)], on_failure="deny", timeout_ms=1000)
        # its private pool (the timeout) in the application's wrapper again, with the same settings
        self.assertIsInstance(limiter.sender, ReplicaClient)
        self.assertIsNot(limiter.sender, self.w)
        self.assertEqual((limiter.sender.replicas, limiter.sender.timeout_ms), (1, 10))
        try:
            decision = limiter.check("u:7")
            self.assertEqual((decision.allowed, decision.source), (False, FROM_FAILURE))
            self.assertEqual((limiter.stats.failures, limiter.stats.to_fallback), (1, 1))
        finally:
            limiter.close()
        # the grant was written (its WAIT came short): the read-only form, after it, leaves none
        self.assertEqual(limit(self.r, "rl:{u:7}:api", FULL, readonly=True).remaining, 0)

    def test_asyncio(self) -> None:
        async def main() -> None:
            ar = redis.asyncio.Redis(host="127.0.0.1", port=PORT)
            w = aio.with_replicas(ar, timeout_ms=10)
            try:
                with self.assertRaises(aio.NotReplicated):
                    await aio.limit(w, "a:1", Token(1, 1, 60_000))
                self.assertFalse((await aio.limit(w, "a:1", Token(1, 1, 60_000))).allowed)
                limiter = AsyncLimiter(w, [Policy("api", FULL)], on_failure="deny", timeout_ms=1000)
                decision = await limiter.check("a:7")
                self.assertEqual((decision.allowed, decision.source), (False, FROM_FAILURE))
                await limiter.close()
            finally:
                await ar.close()
        asyncio.run(main())


class BadArguments(unittest.TestCase):
    def test_each_is_named(self) -> None:
        r = redis.Redis(host="127.0.0.1", port=PORT or 6379)
        for replicas in (0, -1, 1.5, "1", True, None):
            with self.assertRaisesRegex(ValueError, r"^replicas: must be an integer >= 1, not "):
                with_replicas(r, replicas=replicas)  # type: ignore[arg-type]
            with self.assertRaisesRegex(ValueError, r"^replicas: must be an integer >= 1, not "):
                aio.with_replicas(r, replicas=replicas)  # type: ignore[arg-type]
        for timeout_ms in (-1, 0.5, "100", False, None):
            with self.assertRaisesRegex(ValueError, r"^timeout_ms: must be an integer >= 0, not "):
                with_replicas(r, timeout_ms=timeout_ms)  # type: ignore[arg-type]
        self.assertEqual(with_replicas(r, 2, 0).timeout_ms, 0)
        r.close()


if __name__ == "__main__":
    unittest.main()
