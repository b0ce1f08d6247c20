"""FastAPI/Starlette (uvicorn) and Django (a WSGI server) as real HTTP servers in their own processes
(example_asgi.py, example_django.py) on the shared test server, its clock frozen: the app-wide limit
(the ASGI middleware; the Django middleware from settings) with its exact headers and 429 body, the
allow-list and deny-list hooks, a route's own limit (FastAPI's dependency; Django's @ratelimit) inside the
app-wide one, and 503 when Redis cannot be reached."""

import json
import os
import subprocess
import sys
import unittest

from support import PORT, RedisCase, get

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def start(app: str, redis_port: int, *options: str) -> "tuple[subprocess.Popen[str], int]":
    proc = subprocess.Popen([sys.executable, os.path.join(PYTHON_DIR, app), "--redis-port", str(redis_port),
                             "--policy", "default=window:3:60000:fixed", *options],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("listening"):
        proc.kill()
        raise RuntimeError(f"{app} did not start: {line!r}")
    return proc, int(line.split()[1])


def stop(proc: "subprocess.Popen[str]") -> None:
    proc.terminate()
    proc.wait(timeout=10)
    if proc.stdout is not None:
        proc.stdout.close()


class Framework:
    """The same checks for each framework's example (a mixin: APP names it)."""
    APP = ""

    @classmethod
    def setUpClass(cls):
        if PORT:
            cls.proc, cls.port = start(cls.APP, PORT)

    @classmethod
    def tearDownClass(cls):
        if PORT:
            stop(cls.proc)

    def test_admits_then_429_with_exact_headers(self):
        got = [get(self.port, "/", "alice") for _ in range(4)]
        self.assertEqual([status for status, _, _ in got], [200, 200, 200, 429])
        first, denied = got[0][1], got[3][1]
        self.assertEqual(first["ratelimit-policy"], '"default";q=3;w=60')
        self.assertEqual(first["ratelimit"], '"default";r=2;t=45')
        self.assertNotIn("retry-after", first)
        self.assertEqual((denied["ratelimit"], denied["retry-after"]), ('"default";r=0;t=45', "45"))
        self.assertEqual(denied["content-type"], "application/problem+json")
        self.assertEqual(json.loads(got[3][2])["violated-policies"], ["default"])
        again = get(self.port, "/", "alice")  # the denial cache answers, with the same fields
        self.assertEqual((again[0], again[1]["ratelimit-policy"]), (429, '"default";q=3;w=60'))
        self.assertEqual(get(self.port, "/", "bob")[0], 200)  # another key

    def test_allow_and_deny_lists(self):
        for _ in range(5):
            status, headers, _ = get(self.port, "/health", "carol")
            self.assertEqual(status, 200)
            self.assertNotIn("ratelimit", headers)
        status, headers, body = get(self.port, "/", "blocked")
        self.assertEqual((status, json.loads(body)["status"]), (403, 403))
        self.assertEqual(self.r.keys("*"), [])  # neither list asked Redis

    def test_route_limit_inside_the_app_limit(self):
        got = [get(self.port, "/search", "dave") for _ in range(3)]
        self.assertEqual([status for status, _, _ in got], [200, 200, 429])
        policies = sorted(got[0][1]["ratelimit-policy"].split(", "))
        self.assertEqual(policies, ['"default";q=3;w=60', '"search";q=2;w=60'])
        self.assertIn('"search";r=0;t=45', got[2][1]["ratelimit"])
        self.assertEqual(json.loads(got[2][2])["violated-policies"], ["search"])
        self.assertEqual(json.loads(got[0][2]), {"source": "redis"})


class FastAPI(Framework, RedisCase):
    APP = "example_asgi.py"


class Django(Framework, RedisCase):
    APP = "example_django.py"


class RedisUnreachable(unittest.TestCase):
    def test_each_framework_answers_503(self):
        for app in ("example_asgi.py", "example_django.py"):
            proc, port = start(app, 1, "--on-failure", "deny")  # nothing listens on port 1
            try:
                self.assertEqual([get(port, "/", "erin")[0] for _ in range(2)], [503, 503], app)
                self.assertEqual(get(port, "/health", "erin")[0], 200, app)
            finally:
                stop(proc)
            proc, port = start(app, 1, "--on-failure", "allow")
            try:
                status, headers, _ = get(port, "/", "erin")
                self.assertEqual((status, "ratelimit" in headers), (200, False), app)
            finally:
                stop(proc)


if __name__ == "__main__":
    unittest.main()
