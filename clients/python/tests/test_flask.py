"""The Flask middleware: through Flask's test client (429 body and headers, unlimited paths, several
policies in one RL.ALL, Redis down), then as two real HTTP servers (example_app.py in two processes)
sharing one Redis: across both, exactly `limit` requests are admitted per window, each admitted request
sees a distinct `r`, and every 429 carries the same exact headers."""

import json
import os
import subprocess
import sys
import unittest
from collections import Counter

from support import PORT, RedisCase, get_many

import redis
from example_app import RequestLog, create_app, parse_policy

APP = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "example_app.py")


class TestClient(RedisCase):
    def app(self, *policies, client=None):
        return create_app(client or self.r, [parse_policy(p) for p in policies], RequestLog(None)).test_client()

    def test_admits_then_429(self):
        c = self.app("default=window:2:60000:fixed")
        first = c.get("/", headers={"X-API-Key": "alice"})
        self.assertEqual(first.status_code, 200)
        self.assertEqual(first.headers["RateLimit-Policy"], '"default";q=2;w=60')
        self.assertEqual(first.headers["RateLimit"], '"default";r=1;t=45')
        self.assertNotIn("Retry-After", first.headers)
        c.get("/", headers={"X-API-Key": "alice"})
        denied = c.get("/", headers={"X-API-Key": "alice"})
        self.assertEqual(denied.status_code, 429)
        self.assertEqual(denied.headers["Retry-After"], "45")
        self.assertEqual(denied.headers["RateLimit"], '"default";r=0;t=45')
        self.assertEqual(denied.headers["Content-Type"], "application/problem+json")
        self.assertEqual(json.loads(denied.data)["violated-policies"], ["default"])
        self.assertEqual(c.get("/", headers={"X-API-Key": "bob"}).status_code, 200)  # another key

    def test_unlimited_path(self):
        c = self.app("default=window:1:60000:fixed")
        for _ in range(3):
            resp = c.get("/health")
            self.assertEqual(resp.status_code, 200)
            self.assertNotIn("RateLimit", resp.headers)

    def test_two_policies_all_or_nothing(self):
        c = self.app("burst=token:5:1:1000", "minute=window:2:60000:fixed")
        ok = c.get("/", headers={"X-API-Key": "carol"})
        self.assertEqual(ok.headers["RateLimit-Policy"], '"burst";q=5;w=5, "minute";q=2;w=60')
        self.assertEqual(ok.headers["RateLimit"], '"burst";r=4;t=1, "minute";r=1;t=45')
        c.get("/", headers={"X-API-Key": "carol"})
        denied = c.get("/", headers={"X-API-Key": "carol"})
        self.assertEqual(denied.status_code, 429)
        self.assertEqual(json.loads(denied.data)["violated-policies"], ["minute"])
        # The bucket gave nothing to the denied request: still 3 of 5.
        self.assertEqual(denied.headers["RateLimit"], '"burst";r=3;t=1, "minute";r=0;t=45')

    def test_deny_and_allow_lists(self):
        c = self.app("default=window:1:60000:fixed")
        self.assertEqual(c.get("/", headers={"X-API-Key": "blocked"}).status_code, 403)
        self.assertEqual(self.r.keys("*"), [])  # refused before any limiter was asked
        self.assertEqual(c.get("/", headers={"X-API-Key": "dave"}).status_code, 200)
        self.assertEqual(c.get("/", headers={"X-API-Key": "dave"}).status_code, 429)
        self.assertEqual(c.get("/health", headers={"X-API-Key": "dave"}).status_code, 200)  # allow-listed

    def test_redis_down_is_503(self):
        dead = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=1)
        resp = self.app("default=window:2:60000", client=dead).get("/", headers={"X-API-Key": "a"})
        self.assertEqual(resp.status_code, 503)


class TwoServers(RedisCase):
    """Two example_app.py processes on real sockets, one Redis, one budget."""

    def setUp(self):
        super().setUp()
        self.procs, self.ports = [], []
        for _ in range(2):
            p = subprocess.Popen([sys.executable, APP, "--redis-port", str(PORT),
                                  "--policy", "default=window:50:60000:fixed",
                                  # the test moves the module's clock, which a cached denial cannot see
                                  "--no-deny-cache"], stdout=subprocess.PIPE, text=True)
            self.procs.append(p)
            self.ports.append(int(p.stdout.readline().split()[1]))

    def tearDown(self):
        for p in self.procs:
            p.terminate()
            p.wait(timeout=10)
        super().tearDown()

    def check_window(self, responses):
        codes = Counter(status for _, status, _, _ in responses)
        self.assertEqual(codes, Counter({200: 50, 429: len(responses) - 50}))
        admitted_r = sorted(int(h["ratelimit"].split(";r=")[1].split(";")[0])
                            for _, status, h, _ in responses if status == 200)
        self.assertEqual(admitted_r, list(range(50)))  # each admitted request saw its own remaining
        for _, status, h, _ in responses:
            self.assertEqual(h["ratelimit-policy"], '"default";q=50;w=60')
            if status == 429:
                self.assertEqual((h["ratelimit"], h["retry-after"]), ('"default";r=0;t=45', "45"))
        self.assertGreater(len({port for port, status, _, _ in responses if status == 200}), 0)

    def test_exactly_the_limit_per_window(self):
        self.check_window(get_many(self.ports, 40))
        self.advance(60_000)  # the next window: the same budget again, shared
        self.check_window(get_many(self.ports, 40))


if __name__ == "__main__":
    unittest.main()
