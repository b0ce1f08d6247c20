"""redis_ratelimit.adapters.limits_storage under python `limits` 2.8's own strategies, against the real
redis-server of run-tests.sh (module loaded, its clock frozen at T0 + 15 s): registration of the URI
schemes; the moving window (MovingWindowRateLimiter) exact at the frozen clock, one RL.ALL per hit, a
refused hit logging nothing (measured beside a bare RL.SLIDINGLOG, which logs it); the fixed window and
its elastic variant on plain counters; clear, reset, check; the errors (a limit out of the log's range,
a server without the module, a URI of another scheme).

The idea: limits' strategies are the client, so every assertion goes through hit/test/get_window_stats
as an application's would, and the server's state (keys, TTLs, INFO commandstats) shows what each did."""

import os
import socket
import subprocess
import time
import unittest

from support import PORT, RedisCase

import redis
from limits import parse
from limits.errors import ConfigurationError
from limits.limits import RateLimitItemPerMinute
from limits.storage import storage_from_string
from limits.strategies import (FixedWindowElasticExpiryRateLimiter, FixedWindowRateLimiter,
                               MovingWindowRateLimiter)
from redis_ratelimit.adapters.limits_storage import RateLimitStorage

URI = f"redis+ratelimit://127.0.0.1:{PORT}"


def commandstats(r: redis.Redis) -> dict:
    """{command: calls} from INFO commandstats (lower-case names, as the server prints them)."""
    return {name[len("cmdstat_"):]: int(stats["calls"])
            for name, stats in r.info("commandstats").items()}


class Scheme(unittest.TestCase):
    def test_registered(self):
        self.assertIsInstance(storage_from_string("redis+ratelimit://127.0.0.1:6379/2"), RateLimitStorage)
        tls = storage_from_string("rediss+ratelimit://127.0.0.1:6380")
        self.assertIsInstance(tls, RateLimitStorage)
        self.assertEqual(tls.storage.connection_pool.connection_kwargs["port"], 6380)

    def test_url_kept(self):
        storage = storage_from_string("redis+ratelimit://:sekret@127.0.0.1:6390/3")
        kwargs = storage.storage.connection_pool.connection_kwargs
        self.assertEqual((kwargs["host"], kwargs["port"], kwargs["db"], kwargs["password"]),
                         ("127.0.0.1", 6390, 3, "sekret"))

    def test_other_scheme_refused(self):
        with self.assertRaisesRegex(ConfigurationError, "uri: 'redis://127.0.0.1:6379' is not a redis\\+ratelimit"):
            RateLimitStorage("redis://127.0.0.1:6379")


class StorageCase(RedisCase):
    def setUp(self):
        super().setUp()
        self.storage = storage_from_string(URI)

    def tearDown(self):
        self.storage.storage.close()
        super().tearDown()

    def frozen_s(self) -> int:
        """The module's frozen clock in Unix seconds (T0 + 15 s plus what the test advanced)."""
        return self.clock_ms // 1000

    def set_clock(self, ms: int) -> None:
        super().set_clock(ms)
        self.clock_ms = ms

    def advance(self, ms: int) -> None:
        super().advance(ms)
        self.clock_ms += ms


class MovingWindow(StorageCase):
    def test_hit_test_stats(self):
        mw = MovingWindowRateLimiter(self.storage)
        item = parse("3/minute")
        self.assertEqual(mw.get_window_stats(item, "alice")[1], 3)
        self.assertTrue(mw.test(item, "alice"))
        self.assertEqual([mw.hit(item, "alice") for _ in range(4)], [True, True, True, False])
        self.assertFalse(mw.test(item, "alice"))
        # reset: the newest entry's second plus the window, exact at the frozen clock
        self.assertEqual(mw.get_window_stats(item, "alice"), (self.frozen_s() + 60, 0))
        self.assertTrue(mw.hit(item, "bob"))                       # another identifier, its own log
        self.assertEqual(self.r.type("LIMITER/alice/3/1/minute"), b"zset")

    def test_refused_hit_not_logged(self):
        """limits' moving window logs no refused entry; RL.ALL denies all or nothing, so neither does
        the storage. Measured beside a bare RL.SLIDINGLOG, which logs its refused attempt."""
        mw = MovingWindowRateLimiter(self.storage)
        item = RateLimitItemPerMinute(3)
        bare = ["RL.SLIDINGLOG", "bare", 3, 60_000]
        self.assertEqual([mw.hit(item, "a") for _ in range(3)], [True] * 3)
        for _ in range(3):
            self.r.execute_command(*bare)
        self.advance(10_000)
        self.assertFalse(mw.hit(item, "a"))                                  # refused at +10 s
        self.assertEqual(self.r.execute_command(*bare)[0], 0)                # refused at +10 s, logged
        self.advance(50_000)                                                 # +60 s: the first three leave
        self.assertTrue(mw.hit(item, "a"))
        self.assertEqual(mw.get_window_stats(item, "a"), (self.frozen_s() + 60, 2))
        self.assertEqual(self.r.execute_command(*bare)[:3], [1, 3, 1])       # the refused one still counts

    def test_one_module_call_per_decision(self):
        mw = MovingWindowRateLimiter(self.storage)
        item = parse("2/minute")
        self.r.config_resetstat()
        for _ in range(5):
            mw.hit(item, "c")
        stats = commandstats(self.r)
        self.assertEqual(stats.get("rl.all"), 5)
        self.assertFalse({"zadd", "eval", "evalsha", "lpush", "rl.slidinglog"} & set(stats))

    def test_cost(self):
        mw = MovingWindowRateLimiter(self.storage)
        item = parse("3/minute")
        self.assertTrue(mw.hit(item, "d", cost=2))
        self.assertEqual(mw.get_window_stats(item, "d")[1], 1)
        self.assertFalse(mw.hit(item, "d", cost=2))
        self.assertTrue(mw.hit(item, "d", cost=1))
        self.assertFalse(mw.hit(item, "e", cost=4))                   # above the limit: never, nothing kept
        self.assertFalse(self.r.exists("LIMITER/e/3/1/minute"))

    def test_window_edge(self):
        """An entry leaves exactly one window after it was taken (the module's log: score <= now - window
        no longer counts), to the millisecond of the server's clock."""
        mw = MovingWindowRateLimiter(self.storage)
        item = parse("1/second")
        self.assertTrue(mw.hit(item, "f"))
        self.advance(999)
        self.assertFalse(mw.hit(item, "f"))
        self.advance(1)
        self.assertTrue(mw.hit(item, "f"))

    def test_empty_stats(self):
        mw = MovingWindowRateLimiter(self.storage)
        before = int(time.time())
        reset, remaining = mw.get_window_stats(parse("5/hour"), "g")
        self.assertEqual(remaining, 5)
        self.assertTrue(before <= reset - 3600 <= int(time.time()), reset)   # limits' (now, 0)

    def test_limit_out_of_range(self):
        mw = MovingWindowRateLimiter(self.storage)
        with self.assertRaisesRegex(ValueError, "limit: the moving window takes 1 to 100000 entries .* not 200000"):
            mw.hit(parse("200000/day"), "h")
        self.assertEqual(self.r.dbsize(), 0)

    def test_clear(self):
        mw = MovingWindowRateLimiter(self.storage)
        item = parse("1/minute")
        mw.hit(item, "i")
        self.assertFalse(mw.hit(item, "i"))
        mw.clear(item, "i")
        self.assertTrue(mw.hit(item, "i"))


class FixedWindow(StorageCase):
    KEY = "LIMITER/j/2/1/minute"

    def test_hit_test_stats(self):
        fw = FixedWindowRateLimiter(self.storage)
        item = parse("2/minute")
        before = int(time.time())
        self.assertEqual([fw.hit(item, "j") for _ in range(3)], [True, True, False])
        self.assertFalse(fw.test(item, "j"))
        reset, remaining = fw.get_window_stats(item, "j")
        self.assertEqual(remaining, 0)
        self.assertEqual(reset, int(self.r.execute_command("PEXPIRETIME", self.KEY)) // 1000)
        self.assertTrue(before <= reset <= int(time.time()) + 60, reset)
        self.assertEqual(self.r.get(self.KEY), b"3")            # a refused hit counts, as in limits

    def test_window_starts_with_first_hit(self):
        fw = FixedWindowRateLimiter(self.storage)
        item = parse("2/minute")
        fw.hit(item, "j")
        self.r.pexpire(self.KEY, 5000)
        fw.hit(item, "j")                                        # EXPIRE NX: the window is not moved
        self.assertLessEqual(self.r.pttl(self.KEY), 5000)

    def test_elastic_expiry_restarts(self):
        fw = FixedWindowElasticExpiryRateLimiter(self.storage)
        item = parse("2/minute")
        fw.hit(item, "j")
        self.r.pexpire(self.KEY, 5000)
        self.assertTrue(fw.hit(item, "j"))
        self.assertGreater(self.r.pttl(self.KEY), 5000)          # every hit restarts the window
        self.assertFalse(fw.hit(item, "j"))

    def test_window_end(self):
        fw = FixedWindowRateLimiter(self.storage)
        item = parse("2/minute")
        fw.hit(item, "j")
        fw.hit(item, "j")
        self.assertFalse(fw.hit(item, "j"))
        self.r.pexpire(self.KEY, 1)
        for _ in range(1000):                                    # a bound on the polling, not a timing
            if not self.r.exists(self.KEY):
                break
            time.sleep(0.005)
        self.assertTrue(fw.hit(item, "j"))
        self.assertEqual(fw.get_window_stats(item, "j")[1], 1)

    def test_cost_and_clear(self):
        fw = FixedWindowRateLimiter(self.storage)
        item = parse("10/minute")
        self.assertTrue(fw.hit(item, "k", cost=7))
        self.assertFalse(fw.hit(item, "k", cost=4))
        self.assertEqual(fw.get_window_stats(item, "k")[1], 0)   # 11 counted: limits' max(0, ...)
        fw.clear(item, "k")
        self.assertEqual(fw.get_window_stats(item, "k")[1], 10)

    def test_one_transaction_per_hit(self):
        fw = FixedWindowRateLimiter(self.storage)
        self.r.config_resetstat()
        fw.hit(parse("2/minute"), "l")
        stats = commandstats(self.r)
        self.assertEqual((stats.get("multi"), stats.get("incrby"), stats.get("expire"), stats.get("exec")),
                         (1, 1, 1, 1))


class Housekeeping(StorageCase):
    def test_reset_deletes_limits_keys_only(self):
        mw, fw = MovingWindowRateLimiter(self.storage), FixedWindowRateLimiter(self.storage)
        for who in range(1500):                                  # more than one SCAN/UNLINK batch
            fw.hit(parse("5/minute"), f"u{who}")
        mw.hit(parse("5/minute"), "m")
        self.r.set("other", 1)
        self.assertEqual(self.storage.reset(), 1501)
        self.assertEqual(self.r.keys("*"), [b"other"])

    def test_check(self):
        self.assertTrue(self.storage.check())
        self.assertFalse(storage_from_string("redis+ratelimit://127.0.0.1:1?socket_connect_timeout=1").check())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class WithoutModule(unittest.TestCase):
    """A plain redis-server (no module), started and stopped here: check() says so, and a moving-window
    hit raises a ConfigurationError naming the missing module instead of 'unknown command'."""

    def setUp(self):
        self.port = free_port()
        self.dir = os.path.join("/tmp", f"rl-nomodule-{self.port}")
        os.makedirs(self.dir, exist_ok=True)
        self.server = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", self.dir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.r = redis.Redis(host="127.0.0.1", port=self.port)
        for _ in range(500):                                     # a bound on the start, not a timing
            try:
                self.r.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.01)

    def tearDown(self):
        try:
            self.r.shutdown(nosave=True)
        except redis.RedisError:
            pass
        self.server.wait(timeout=30)
        os.rmdir(self.dir)

    def test_no_module(self):
        storage = storage_from_string(f"redis+ratelimit://127.0.0.1:{self.port}")
        self.assertFalse(storage.check())
        with self.assertRaisesRegex(ConfigurationError, "the server has no redis-ratelimit module"):
            MovingWindowRateLimiter(storage).hit(parse("1/minute"), "n")
        self.assertTrue(FixedWindowRateLimiter(storage).hit(parse("1/minute"), "n"))   # plain counters work


if __name__ == "__main__":
    unittest.main()
