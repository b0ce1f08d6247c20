"""The Lua mode (redis_ratelimit.lua_mode) proven equal to the module: generated traces of calls (random
limiters, costs, DRYRUN, RL.ALL over several keys, clock steps) run against the module under its frozen
test clock and against the script on a second redis-server started here WITHOUT the module, at the same
times, and every field of every reply must agree. Also: the packages' copies of the script are the one
script, auto mode finds the module or its absence, NOSCRIPT reloads the script, a replica holds what the
script wrote (its effects), and what the script does not run is refused by name.

The idea: the script keeps integer ms states that are exactly the module's µs states divided by 1000 when
times are whole ms, so equality is exact, not within a bound (docs/migrating.md, the Lua mode)."""

import os
import random
import shutil
import socket
import subprocess
import tempfile
import time
import unittest

import redis
from redis.exceptions import ResponseError

from support import PORT, RedisCase, client

from redis_ratelimit import Leaky, SlidingLog, Token, Window, limit, limit_all, with_mode
from redis_ratelimit.lua_mode import SCRIPT, SHA

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

# Each key keeps one limiter (as an application's keys do); the trace picks keys, costs and steps.
SPECS = {
    "tok:a": Token(10, 3, 1000),
    "tok:b": Token(5, 1, 7),
    "tok:c": Token(1000, 7, 333),
    "leaky:nodelay": Leaky(10, 3, 1000, nodelay=True),
    "leaky:shape": Leaky(4, 1, 250),
    "leaky:odd": Leaky(7, 3, 10),
    "win:fixed": Window(10, 1000, fixed=True),
    "win:minute": Window(7, 60_000),
    "win:odd": Window(5, 999),
    "win:sliding": Window(20, 1000, subwindows=None),
    "log:a": SlidingLog(5, 1000),
    "log:gap": SlidingLog(3, 500, mingap_ms=100),
    "log:wide": SlidingLog(12, 300),
}
STEPS = (0, 0, 1, 1, 7, 13, 50, 99, 100, 250, 333, 500, 999, 1000, 1001, 5000, 60_000)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PlainServer:
    """A redis-server without the module, the same binary as the module's test server, on 127.0.0.1."""

    def __init__(self, executable: str) -> None:
        self.dir = tempfile.mkdtemp(prefix="rl-lua-")
        self.proc = None
        for _ in range(5):
            self.port = free_port()
            self.proc = subprocess.Popen([executable, "--bind", "127.0.0.1", "--port", str(self.port), "--dir",
                                          self.dir, "--save", "", "--appendonly", "no"],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if self._up():
                return
            self.stop()
        raise RuntimeError("could not start a plain redis-server")

    def _up(self) -> bool:
        for _ in range(200):  # a bound on the polling, not a timing being asserted
            if self.proc.poll() is not None:
                return False
            try:
                if redis.Redis(host="127.0.0.1", port=self.port).ping():
                    return True
            except redis.ConnectionError:
                time.sleep(0.02)
        return False

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


def executable() -> str:
    """The module's test server's binary (run-tests.sh picks it per server under test); Redis reports a
    binary started from PATH as if in its working directory, so that one is looked up on PATH."""
    path = client().info("server")["executable"]
    return path if os.path.exists(path) else shutil.which(os.path.basename(path)) or path


def result_fields(res):
    if hasattr(res, "limits"):
        return (res.allowed, res.retry_after_ms, res.reset_after_ms, [result_fields(r) for r in res.limits])
    return (res.allowed, res.limit, res.remaining, res.retry_after_ms, res.reset_after_ms, res.wait_ms)


class LuaModeTest(RedisCase):
    @classmethod
    def setUpClass(cls):
        cls.plain = PlainServer(executable()) if PORT else None

    @classmethod
    def tearDownClass(cls):
        if cls.plain:
            cls.plain.stop()

    def setUp(self):
        super().setUp()
        self.p = redis.Redis(host="127.0.0.1", port=self.plain.port)
        self.p.flushall()
        self.lua = with_mode(self.p, "lua")

    def tearDown(self):
        self.p.close()
        super().tearDown()

    def test_the_packages_carry_the_one_script(self):
        with open(os.path.join(REPO, "clients/lua/ratelimit.lua"), "rb") as f:
            one = f.read()
        for copy in ("clients/python/redis_ratelimit/ratelimit.lua", "clients/node/lib/ratelimit.lua"):
            with open(os.path.join(REPO, copy), "rb") as f:
                self.assertEqual(f.read(), one, f"{copy} differs from clients/lua/ratelimit.lua: run scripts/lua-copy.sh")

    def test_auto_finds_the_module_or_its_absence(self):
        self.assertTrue(with_mode(self.p).uses_lua())
        self.assertFalse(with_mode(self.r).uses_lua())
        self.assertFalse(with_mode(self.r, "module").uses_lua())
        self.assertTrue(with_mode(self.r, "lua").uses_lua())
        with self.assertRaisesRegex(ValueError, "mode: must be 'auto', 'module' or 'lua'"):
            with_mode(self.r, "fast")
        # auto on the plain server runs the script, on the real clock (TIME): a new bucket gives one token
        res = limit(with_mode(self.p), "real", Token(10, 5, 1000))
        self.assertEqual((res.allowed, res.remaining, res.retry_after_ms, res.wait_ms), (True, 9, -1, 0))
        self.assertGreater(self.p.pttl("real"), 0)

    def test_noscript_loads_the_script_again(self):
        self.lua.test_now_ms = 1_000_000
        self.assertEqual(limit(self.lua, "k", Token(3, 1, 1000)).remaining, 2)
        self.p.script_flush()
        self.assertEqual(limit(self.lua, "k", Token(3, 1, 1000)).remaining, 1)
        self.assertEqual(self.p.script_exists(SHA), [True])

    def test_a_replica_holds_what_the_script_wrote(self):
        """The script reads the server's clock (TIME) and its writes reach a replica as effects (Redis 7
        replicates a script's effects, not the script): after a run on the real clock, every key and its
        value are the same on the replica."""
        replica = PlainServer(executable())
        try:
            r = redis.Redis(host="127.0.0.1", port=replica.port)
            r.replicaof("127.0.0.1", self.plain.port)
            for _ in range(500):  # a bound on the polling, not a timing being asserted
                if r.info("replication").get("master_link_status") == "up":
                    break
                time.sleep(0.02)
            self.assertEqual(r.info("replication").get("master_link_status"), "up")
            rng = random.Random(7)
            self.lua.test_now_ms = 1_000_000  # the test's times keep the keys an hour: none expires meanwhile
            for _ in range(300):
                key = rng.choice(sorted(SPECS))
                limit(self.lua, key, SPECS[key], cost=rng.choice((1, 1, 2, 3)))
                self.lua.test_now_ms += rng.choice(STEPS[:10])
            limit_all(self.lua, [("{u}:t", Token(3, 1, 1000)), ("{u}:l", SlidingLog(4, 1000))])
            self.lua.test_now_ms = None  # the server's clock (TIME), on limits that last an hour
            limit(self.lua, "real:window", Window(5, 3_600_000, fixed=True))
            limit(self.lua, "real:log", SlidingLog(5, 3_600_000))
            self.assertEqual(self.p.wait(1, 5000), 1)
            keys = sorted(self.p.keys("*"))
            self.assertGreater(len(keys), 5)
            self.assertEqual(sorted(r.keys("*")), keys)
            for key in keys:
                self.assertEqual(r.dump(key), self.p.dump(key), key)
            r.close()
        finally:
            replica.stop()

    def test_what_the_script_does_not_run_is_refused_by_name(self):
        self.lua.test_now_ms = 1_000_000
        cases = [
            (dict(spec=Token(10, 1, 1000, interval=True)), "INTERVAL: not supported by the Lua mode"),
            (dict(spec=Token(10, 1, 1000), force=True), "FORCE: not supported by the Lua mode"),
            (dict(spec=Window(10, 1000, subwindows=5)), "SUBWINDOWS: not supported by the Lua mode"),
            (dict(spec=Token(0, 1, 1000)), "capacity: must be an integer between 1 and 1000000000000"),
            (dict(spec=Token(10**12, 1, 10**12)), "capacity: capacity / refill_tokens \\* refill_ms must not exceed"),
            (dict(spec=Token(10**9, 10**9, 10**7)), "capacity: capacity \\* refill_ms must not exceed 2\\^51"),
            (dict(spec=Window(10**9, 10**7)), "limit: limit \\* window_ms must not exceed 2\\^51"),
            (dict(spec=SlidingLog(10, 1000), cost=10**5 + 1), "COST: must be an integer between 0 and 100000"),
        ]
        for kwargs, message in cases:
            with self.subTest(message=message):
                with self.assertRaisesRegex(ResponseError, message):
                    limit(self.lua, "k", kwargs.pop("spec"), **kwargs)
        with self.assertRaisesRegex(ResponseError, "LIMIT 2: 'BLOCK' is not|LIMIT 2: BLOCK: not supported"):
            self.p.execute_command("EVAL", SCRIPT, 2, "a", "b", "RL.ALL", 1_000_000,
                                   "LIMIT", "TOKEN", 1, 1, 1, "LIMIT", "LEAKY", 1, 1, 1, "BLOCK")
        with self.assertRaisesRegex(ValueError, "RL.SMOOTH: the Lua mode runs"):
            self.lua.execute_command("RL.SMOOTH", "k", 5)
        self.assertEqual(self.p.keys("*"), [])  # nothing written by any of them

    def test_asyncio_takes_the_same_words(self):
        import asyncio
        import redis.asyncio
        import redis_ratelimit.asyncio as aio

        async def body():
            ar = redis.asyncio.Redis(host="127.0.0.1", port=self.plain.port)
            try:
                self.assertTrue(await aio.with_mode(ar).uses_lua())
                lua = aio.with_mode(ar, "lua")
                lua.test_now_ms = 2_000_000
                await ar.script_flush()
                first = await aio.limit(lua, "a", Token(3, 1, 1000), cost=2)
                both = await aio.limit_all(lua, [("a", Token(3, 1, 1000)), ("b", Window(1, 1000))], cost=2)
                return first, both
            finally:
                await ar.aclose() if hasattr(ar, "aclose") else await ar.close()

        first, both = asyncio.run(body())
        self.set_clock(2_000_000)
        self.assertEqual(result_fields(first), result_fields(limit(self.r, "a", Token(3, 1, 1000), cost=2)))
        self.assertEqual(result_fields(both), result_fields(
            limit_all(self.r, [("a", Token(3, 1, 1000)), ("b", Window(1, 1000))], cost=2)))
        self.assertFalse(both.allowed)

    def run_trace(self, seed: int, calls: int) -> int:
        """One generated trace on both servers; returns the number of fields compared."""
        rng = random.Random(seed)
        keys = sorted(SPECS)
        now = 1_700_000_000_000 + rng.randrange(0, 10**6)
        compared = 0
        for step in range(calls):
            now += rng.choice(STEPS)
            self.set_clock(now)
            self.lua.test_now_ms = now
            dryrun = rng.random() < 0.1
            if rng.random() < 0.3:
                chosen = rng.sample(keys, rng.randint(1, 4))
                limits = [(k, SPECS[k]) for k in chosen]
                cost = rng.choice((0, 1, 1, 1, 2, 3, 6))
                want = limit_all(self.r, limits, cost=cost, dryrun=dryrun)
                got = limit_all(self.lua, limits, cost=cost, dryrun=dryrun)
                what = f"seed {seed} call {step} at {now}: RL.ALL {chosen} COST {cost} DRYRUN {dryrun}"
            else:
                key = rng.choice(keys)
                spec = SPECS[key]
                top = getattr(spec, "capacity", None) or spec.limit
                cost = rng.choice((0, 1, 1, 1, 1, 2, 3, top, top + 1, rng.randint(0, top)))
                want = limit(self.r, key, spec, cost=cost, dryrun=dryrun)
                got = limit(self.lua, key, spec, cost=cost, dryrun=dryrun)
                what = f"seed {seed} call {step} at {now}: {key} COST {cost} DRYRUN {dryrun}"
            self.assertEqual(result_fields(got), result_fields(want), what)
            compared += len(str(result_fields(want)).split(","))
        return compared

    def test_generated_traces_agree_field_for_field(self):
        compared = 0
        for seed in range(6):
            with self.subTest(seed=seed):
                self.r.flushall()
                self.p.flushall()
                compared += self.run_trace(seed, 500)
        self.assertGreater(compared, 10_000)

    def test_busy_traces_agree(self):
        """Small steps, so buckets and logs stay near their limits and denials carry retries."""
        global STEPS
        saved = STEPS
        STEPS = (0, 0, 0, 1, 1, 2, 3, 5, 10, 40)
        try:
            for seed in range(100, 104):
                with self.subTest(seed=seed):
                    self.r.flushall()
                    self.p.flushall()
                    self.run_trace(seed, 500)
        finally:
            STEPS = saved


if __name__ == "__main__":
    unittest.main()
