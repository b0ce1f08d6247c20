"""Shared test support: the real redis-server that run-tests.sh started (RL_REDIS_PORT, module loaded
with test-clock), a frozen clock at a known instant, and a small concurrent HTTP client.

The idea: with the module's clock frozen, every reply field is exact, so tests compare header values
and admitted counts exactly and never depend on timing."""

import http.client
import os
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import redis  # noqa: E402

PORT = int(os.environ.get("RL_REDIS_PORT", "0"))
# A minute boundary: T0 + 15 s is 45 s before the window of 60 s ends.
T0 = (1_700_000_000_000 // 60_000 + 1) * 60_000


def client() -> redis.Redis:
    return redis.Redis(host="127.0.0.1", port=PORT)


class RedisCase(unittest.TestCase):
    """Each test starts on an empty database with the clock frozen at T0 + 15 s."""

    def setUp(self):
        if not PORT:
            self.skipTest("RL_REDIS_PORT is not set (run clients/python/run-tests.sh)")
        self.r = client()
        self.r.flushall()
        self.set_clock(T0 + 15_000)

    def tearDown(self):
        self.r.execute_command("RL.CLOCK", "REAL")
        self.r.close()

    def set_clock(self, ms: int) -> None:
        self.r.execute_command("RL.CLOCK", "SET", ms)

    def advance(self, ms: int) -> None:
        self.r.execute_command("RL.CLOCK", "ADVANCE", ms)

    def wait_blocked(self, count: int) -> bool:
        """Until `count` clients are blocked (a bound on the polling, not a timing being asserted)."""
        for _ in range(1000):
            if int(self.r.info("clients")["blocked_clients"]) == count:
                return True
            time.sleep(0.01)
        return False


def get(port: int, path: str = "/", api_key: str = "alice"):
    """One GET on a new connection: (status, headers as a dict with lower-case names, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path, headers={"X-API-Key": api_key} if api_key else {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def get_many(ports, per_port: int, threads_per_port: int = 4, api_key: str = "alice"):
    """per_port GETs at each port, from threads_per_port threads per port at once; all responses."""
    out, lock = [], threading.Lock()

    def worker(port, n):
        for _ in range(n):
            r = get(port, api_key=api_key)
            with lock:
                out.append((port,) + r)

    threads = []
    for port in ports:
        share = [per_port // threads_per_port + (i < per_port % threads_per_port) for i in range(threads_per_port)]
        threads += [threading.Thread(target=worker, args=(port, n)) for n in share]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out
