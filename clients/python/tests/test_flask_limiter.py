"""Flask-Limiter 3.3 (Debian's python3-flask-limiter) on the module through redis+ratelimit://: an app
written as Flask-Limiter documents it (default_limits, @limiter.limit, @limiter.exempt, the
moving-window strategy, headers_enabled), served by werkzeug on 127.0.0.1 and called over real HTTP,
against the real redis-server of run-tests.sh. With the module's clock frozen the moving window's
X-RateLimit-* headers are exact; one test runs on the real clock for Retry-After.

The idea: nothing of the app knows of the module but the storage URI (and the import that registers
its scheme), so what passes here is what an existing Flask-Limiter app gets by changing that line."""

import logging
import threading
import time
import unittest

from support import PORT, RedisCase, get

import flask
from flask_limiter import Limiter
from werkzeug.serving import make_server

import redis_ratelimit.adapters.limits_storage  # noqa: F401  registers redis+ratelimit://

logging.getLogger("werkzeug").setLevel(logging.ERROR)   # no access log line per request in the test output


def create_app(strategy: str) -> flask.Flask:
    """The documented shape of a Flask-Limiter app; the client is named by its X-API-Key header."""
    app = flask.Flask(__name__)
    limiter = Limiter(lambda: flask.request.headers.get("X-API-Key", "anonymous"), app=app,
                      default_limits=["3/minute"], strategy=strategy, headers_enabled=True,
                      storage_uri=f"redis+ratelimit://127.0.0.1:{PORT}")

    @app.route("/")
    def index() -> str:
        return "index"

    @app.route("/two")
    @limiter.limit("2/minute")
    def two() -> str:
        return "two"

    @app.route("/free")
    @limiter.exempt
    def free() -> str:
        return "free"

    return app


class Served(RedisCase):
    strategy = "moving-window"

    def setUp(self):
        super().setUp()
        self.server = make_server("127.0.0.1", 0, create_app(self.strategy), threaded=True)
        self.port = self.server.server_port
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def tearDown(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()
        super().tearDown()

    def statuses(self, path: str, count: int, api_key: str = "alice"):
        return [get(self.port, path, api_key)[0] for _ in range(count)]


class MovingWindow(Served):
    def test_route_limit_headers(self):
        now_s = (self.clock_ms()) // 1000
        first = get(self.port, "/two")
        self.assertEqual(first[0], 200)
        self.assertEqual((first[1]["x-ratelimit-limit"], first[1]["x-ratelimit-remaining"],
                          first[1]["x-ratelimit-reset"]), ("2", "1", str(now_s + 61)))  # Flask-Limiter adds 1 s
        self.advance(20_000)
        second = get(self.port, "/two")
        self.assertEqual((second[0], second[1]["x-ratelimit-remaining"], second[1]["x-ratelimit-reset"]),
                         (200, "0", str(now_s + 81)))            # the newest entry's second + 60 (+ 1)
        denied = get(self.port, "/two")
        self.assertEqual((denied[0], denied[1]["x-ratelimit-remaining"]), (429, "0"))
        self.advance(40_000)                                     # the first entry leaves: one slot
        self.assertEqual(self.statuses("/two", 2), [200, 429])
        self.advance(20_000)                                     # and the second's
        self.assertEqual(self.statuses("/two", 1), [200])

    def test_default_limits_per_client(self):
        self.assertEqual(self.statuses("/", 4), [200, 200, 200, 429])
        self.assertEqual(self.statuses("/", 4, api_key="bob"), [200, 200, 200, 429])
        # The route's own limit replaces the default one: /two has its own 2.
        self.assertEqual(self.statuses("/two", 3), [200, 200, 429])

    def test_exempt(self):
        self.assertEqual(self.statuses("/free", 6), [200] * 6)
        status, headers, _ = get(self.port, "/free")
        self.assertNotIn("x-ratelimit-limit", headers)
        self.assertEqual(self.r.dbsize(), 0)                     # nothing asked, nothing written

    def test_state_is_the_modules_log(self):
        self.statuses("/two", 3)
        [key] = self.r.keys("LIMITER*")
        self.assertEqual(self.r.type(key), b"zset")
        # RL.SLIDINGLOG_RO on the same key: 2 taken, the refused third not logged (a third unit would
        # make the peek COST 0 deny: it admits while the log holds no more than the limit)
        self.assertEqual(self.r.execute_command("RL.SLIDINGLOG_RO", key, 2, 60_000, "COST", 0)[:3], [1, 2, 0])
        self.advance(60_000)
        self.assertEqual(self.r.execute_command("RL.SLIDINGLOG_RO", key, 2, 60_000, "COST", 0)[:3], [1, 2, 2])

    def clock_ms(self) -> int:
        return int(self.r.execute_command("RL.CLOCK", "GET"))


class RealClock(Served):
    def setUp(self):
        super().setUp()
        self.r.execute_command("RL.CLOCK", "REAL")

    def test_retry_after(self):
        before = int(time.time())
        self.assertEqual(self.statuses("/two", 2), [200, 200])
        status, headers, _ = get(self.port, "/two")
        self.assertEqual(status, 429)
        self.assertTrue(0 <= int(headers["retry-after"]) <= 60, headers["retry-after"])
        self.assertTrue(before + 61 <= int(headers["x-ratelimit-reset"]) <= int(time.time()) + 61)


class FixedWindow(Served):
    strategy = "fixed-window"

    def test_route_and_default(self):
        self.assertEqual(self.statuses("/two", 3), [200, 200, 429])
        self.assertEqual(self.statuses("/", 4), [200, 200, 200, 429])
        keys = sorted(self.r.keys("LIMITER*"))
        self.assertEqual([self.r.type(k) for k in keys], [b"string", b"string"])
        self.assertEqual(sorted(int(self.r.get(k)) for k in keys), [3, 4])   # refused hits count, as in limits
        status, headers, _ = get(self.port, "/two")
        self.assertEqual((status, headers["x-ratelimit-limit"], headers["x-ratelimit-remaining"]), (429, "2", "0"))


if __name__ == "__main__":
    unittest.main()
