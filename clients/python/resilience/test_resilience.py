"""The limiters when Redis fails: each test starts its own redis-server with the module (not the shared
test server), then stops it (SHUTDOWN NOSAVE, or a kill), pauses it (DEBUG SLEEP, CLIENT PAUSE) and
starts it again on the same port. For each on_failure mode, sync and async: what calls answer during the
outage and after the return, the log line and the counters each way, and a deny answered 503 by a real
HTTP server (example_app.py). Outcomes only: no timing is asserted."""

import asyncio
import http.client
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from typing import Any, Callable, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))

import redis  # noqa: E402
import redis.asyncio  # noqa: E402

from redis_ratelimit import Policy, Token, Window  # noqa: E402
from redis_ratelimit.limiter import AsyncLimiter, Limiter  # noqa: E402

MODULE = os.path.abspath(os.path.join(ROOT, "..", os.environ.get("RL_MODULE", "build/ratelimit.so")))
REDIS_SERVER = os.environ.get("REDIS_SERVER", "redis-server")
APP = os.path.join(os.path.dirname(HERE), "example_app.py")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class OwnServer:
    """A redis-server with the module on 127.0.0.1, started and stopped (and started again on the same
    port) by the test; nothing persisted, its directory removed at the end."""

    def __init__(self) -> None:
        self.port = free_port()
        self.dir = tempfile.TemporaryDirectory(prefix="rl-resilience-")
        self.proc: Optional[subprocess.Popen[bytes]] = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", self.dir.name, "--loadmodule", MODULE, "--enable-debug-command", "local"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        probe = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1)
        for _ in range(500):  # a bound on the wait for the port, not a timing under test
            try:
                probe.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.01)
        raise RuntimeError(f"redis-server on {self.port} did not start")

    def stop(self) -> None:
        """SHUTDOWN NOSAVE, then wait for the process."""
        if self.proc is None:
            return
        try:
            redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2).shutdown(nosave=True)
        except redis.ConnectionError:
            pass
        self.proc.wait(timeout=10)
        self.proc = None

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)
            self.proc = None

    def cli(self) -> "redis.Redis[bytes]":
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=10)

    def close(self) -> None:
        self.kill()
        self.dir.cleanup()


class Outages(unittest.TestCase):
    """Shared by the sync and async cases: `check(limiter, key)` is the one thing that differs."""
    asynchronous = False

    def setUp(self) -> None:
        self.server = OwnServer()
        self.server.start()
        self.loop = asyncio.new_event_loop() if self.asynchronous else None
        self.limiters: List[Any] = []

    def tearDown(self) -> None:
        for limiter in self.limiters:
            closed = limiter.close()
            if self.loop is not None:
                self.loop.run_until_complete(closed)
        if self.loop is not None:
            self.loop.close()
        self.server.close()

    def limiter(self, policies: List[Policy], **options: Any) -> Any:
        if self.asynchronous:
            client: Any = redis.asyncio.Redis(host="127.0.0.1", port=self.server.port)
            limiter: Any = AsyncLimiter(client, policies, **options)
        else:
            limiter = Limiter(redis.Redis(host="127.0.0.1", port=self.server.port), policies, **options)
        self.limiters.append(limiter)
        return limiter

    def check(self, limiter: Any, key: str, cost: int = 1) -> Any:
        if self.asynchronous:
            assert self.loop is not None
            return self.loop.run_until_complete(limiter.check(key, cost))
        return limiter.check(key, cost)

    def outage_then_return(self, mode: str, during: Callable[[Any], None], after: Callable[[Any], None],
                           stop: Callable[[], None]) -> Any:
        """Up, then down (log line and to_fallback once, however many calls), then up again (log line and
        to_redis once). retry_ms=0: every call tries Redis, so the return is seen at the next call."""
        limiter = self.limiter([Policy("w", Window(3, 60_000, fixed=True))], on_failure=mode, retry_ms=0,
                               timeout_ms=200)
        first = self.check(limiter, "alice")
        self.assertEqual((first.allowed, first.source), (True, "redis"))
        stop()
        with self.assertLogs("redis_ratelimit", "WARNING") as down:
            during(limiter)
        self.assertEqual(len(down.records), 1)
        self.assertIn("Redis failed (", down.output[0])
        self.assertEqual((limiter.stats.to_fallback, limiter.stats.to_redis), (1, 0))
        self.server.start()
        with self.assertLogs("redis_ratelimit", "WARNING") as up:
            after(limiter)
        self.assertEqual(len(up.records), 1)
        self.assertIn("answers again", up.output[0])
        self.assertEqual((limiter.stats.to_fallback, limiter.stats.to_redis), (1, 1))
        return limiter

    def test_deny_fails_closed_then_recovers(self) -> None:
        def during(limiter: Any) -> None:
            for _ in range(3):
                d = self.check(limiter, "alice")
                self.assertEqual((d.allowed, d.failed, d.source, d.items), (False, True, "failure", []))

        def after(limiter: Any) -> None:
            d = self.check(limiter, "alice")  # a fresh server: a fresh window
            self.assertEqual((d.allowed, d.source, d.items[0][2].remaining), (True, "redis", 2))

        limiter = self.outage_then_return("deny", during, after, self.server.stop)
        self.assertEqual((limiter.stats.failures, limiter.stats.failed_calls), (3, 3))

    def test_allow_fails_open_then_recovers(self) -> None:
        def during(limiter: Any) -> None:
            for _ in range(5):  # more than the limit: nothing limits while Redis is away
                d = self.check(limiter, "alice")
                self.assertEqual((d.allowed, d.source, d.headers()), (True, "failure", {}))

        def after(limiter: Any) -> None:
            self.assertEqual(self.check(limiter, "alice").source, "redis")

        self.outage_then_return("allow", during, after, self.server.kill)

    def test_local_takes_over_enforces_and_hands_back(self) -> None:
        def during(limiter: Any) -> None:
            got = [self.check(limiter, "alice") for _ in range(4)]
            self.assertEqual([(d.allowed, d.source) for d in got], [(True, "local")] * 3 + [(False, "local")])
            self.assertEqual(got[3].items[0][2].remaining, 0)
            self.assertGreater(got[3].retry_after_ms, 0)
            self.assertEqual(got[3].headers()["RateLimit-Policy"], '"w";q=3;w=60')
            self.assertEqual(self.check(limiter, "bob").source, "local")  # its own budget

        def after(limiter: Any) -> None:
            d = self.check(limiter, "alice")
            self.assertEqual((d.allowed, d.source, d.items[0][2].remaining), (True, "redis", 2))

        limiter = self.outage_then_return("local", during, after, self.server.stop)
        self.assertEqual(limiter.stats.local_calls, 5)
        self.assertEqual(len(limiter.local), 0)  # the local state is dropped when Redis takes back

    def test_local_with_two_policies_is_all_or_nothing(self) -> None:
        limiter = self.limiter([Policy("burst", Token(2, 1, 60_000)), Policy("w", Window(5, 60_000, fixed=True))],
                               on_failure="local", retry_ms=0, timeout_ms=200)
        self.server.kill()
        with self.assertLogs("redis_ratelimit", "WARNING"):
            got = [self.check(limiter, "carol") for _ in range(3)]
        self.assertEqual([d.allowed for d in got], [True, True, False])
        self.assertEqual(got[2].violated(), ["burst"])
        self.assertEqual(got[2].items[1][2].remaining, 3)  # the window gave nothing to the denial

    def test_while_local_redis_is_tried_every_retry_ms(self) -> None:
        now = [1_000_000]
        limiter = self.limiter([Policy("w", Window(100, 60_000, fixed=True))], on_failure="local",
                               retry_ms=1000, timeout_ms=200, clock=lambda: now[0])
        self.server.stop()
        with self.assertLogs("redis_ratelimit", "WARNING"):
            self.check(limiter, "a")
        tried = limiter.stats.redis_calls
        for _ in range(20):
            self.assertEqual(self.check(limiter, "a").source, "local")
        self.assertEqual(limiter.stats.redis_calls, tried)  # no call paid the timeout
        self.server.start()
        now[0] += 999
        self.assertEqual(self.check(limiter, "a").source, "local")  # not due yet, though Redis is back
        now[0] += 1
        with self.assertLogs("redis_ratelimit", "WARNING"):
            self.assertEqual(self.check(limiter, "a").source, "redis")
        self.assertEqual(limiter.stats.redis_calls, tried + 1)

    def test_debug_sleep_times_out(self) -> None:
        limiter = self.limiter([Policy("w", Window(3, 60_000, fixed=True))], on_failure="local", retry_ms=0,
                               timeout_ms=50)
        self.assertEqual(self.check(limiter, "a").source, "redis")
        sleeper = threading.Thread(target=lambda: self.server.cli().execute_command("DEBUG", "SLEEP", "2"))
        sleeper.start()
        self.wait_asleep()
        with self.assertLogs("redis_ratelimit", "WARNING") as logs:
            d = self.check(limiter, "a")
            sleeper.join()
            back = self.check(limiter, "a")
        self.assertEqual(d.source, "local")
        self.assertIn("TimeoutError", logs.output[0])
        # The call that gave up had reached the server, which ran it when it woke: a timeout says nothing
        # of whether the request was counted (README, "Failure modes"). 3 - 3 calls: 0 left.
        self.assertEqual((back.source, back.items[0][2].remaining), ("redis", 0))

    def wait_asleep(self) -> None:
        """Until a PING goes unanswered: the server is inside DEBUG SLEEP (a bound, not a timing)."""
        probe = redis.Redis(host="127.0.0.1", port=self.server.port, socket_timeout=0.05)
        for _ in range(200):
            try:
                probe.ping()
            except redis.TimeoutError:
                return
            time.sleep(0.01)
        self.fail("the server never went to sleep")

    def test_client_pause_times_out(self) -> None:
        limiter = self.limiter([Policy("w", Window(3, 60_000, fixed=True))], on_failure="deny", retry_ms=0,
                               timeout_ms=50)
        admin = self.server.cli()
        admin.execute_command("CLIENT", "PAUSE", "60000", "WRITE")
        with self.assertLogs("redis_ratelimit", "WARNING"):
            d = self.check(limiter, "a")
            self.assertTrue(d.failed)
            admin.execute_command("CLIENT", "UNPAUSE")
            back = self.check(limiter, "a")
        self.assertEqual((back.allowed, back.source), (True, "redis"))


class AsyncOutages(Outages):
    asynchronous = True


class MiddlewareAnswers503(unittest.TestCase):
    """A real HTTP server (example_app.py, Flask) in front of a Redis that goes away."""

    def test_deny_is_503_and_back(self) -> None:
        server = OwnServer()
        server.start()
        app = subprocess.Popen([sys.executable, APP, "--redis-port", str(server.port), "--policy",
                                "default=window:5:60000:fixed", "--on-failure", "deny", "--retry-ms", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            assert app.stdout is not None
            port = int(app.stdout.readline().split()[1])
            self.assertEqual(get(port), 200)
            server.stop()
            self.assertEqual([get(port) for _ in range(2)], [503, 503])
            server.start()
            self.assertEqual(get(port), 200)
        finally:
            app.terminate()
            app.wait(timeout=10)
            server.close()


def get(port: int) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", "/", headers={"X-API-Key": "alice"})
        resp = conn.getresponse()
        resp.read()
        return resp.status
    finally:
        conn.close()


logging.getLogger("redis_ratelimit").propagate = True

if __name__ == "__main__":
    unittest.main()
