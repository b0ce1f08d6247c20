"""Checks for the nginx gateways, run by run-tests.sh in three phases against real nginx processes and a
real redis-server with the module. Each phase prints "gateway-PHASE: N passed, N failed".

  exact PORT1 PORT2 DEAD_PORT   limit 50 per 60 s window, the module's clock frozen 45 s before the
                                window ends: across both gateways exactly 50 admitted per window, each
                                with its own `r`, exact headers on 200 and 429, 401 without a key, 503
                                when Redis is unreachable (DEAD_PORT: a gateway pointed at a closed port)
  load PORT1 PORT2 OUT          real clock, limit 20 per 1 s: load at both at once for a bounded time and
                                count; every answer is a 200 or a 429 with consistent headers; the
                                client's counts go to OUT
  logs LOG1 LOG2 OUT            after the gateways stopped (logs flushed): in no window did the two
                                together admit more than 20, and the logs agree with the client's counts
  agree SELFTEST_PORT           the header mapping of all three implementations (the gateway's Lua, run
                                by a selftest nginx; the Python and Node helpers) gives the same three
                                header values on a few hundred replies of every algorithm

Uses Debian's python3 (plus examples/demo/report.py and, for `agree`, clients/python and node)."""

import http.client
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "demo"))

import report  # noqa: E402

LOAD_LIMIT, LOAD_WINDOW_MS = 20, 1000


class Checks:
    def __init__(self, phase):
        self.phase, self.passed, self.failed = phase, 0, 0

    def check(self, what, ok, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL gateway-{self.phase}: {what} {detail}")

    def equal(self, what, want, got):
        self.check(what, want == got, f"(want {want!r}, got {got!r})")

    def finish(self):
        print(f"gateway-{self.phase}: {self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0


def get(conn_or_port, api_key="alice"):
    """GET / : (status, lower-case headers, body). Takes a port (new connection) or a connection."""
    conn = conn_or_port if isinstance(conn_or_port, http.client.HTTPConnection) else \
        http.client.HTTPConnection("127.0.0.1", conn_or_port, timeout=10)
    conn.request("GET", "/", headers={"X-API-Key": api_key} if api_key else {})
    resp = conn.getresponse()
    out = resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    if conn is not conn_or_port:
        conn.close()
    return out


def burst(ports, per_port, threads_per_port=4):
    """per_port requests at each port from threads_per_port threads at once."""
    out, lock = [], threading.Lock()

    def worker(port, n):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        for _ in range(n):
            r = get(conn)
            with lock:
                out.append(r)
        conn.close()

    threads = [threading.Thread(target=worker, args=(p, per_port // threads_per_port))
               for p in ports for _ in range(threads_per_port)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def remaining(headers):
    return int(headers["ratelimit"].split(";r=")[1].split(";")[0])


def check_window(c, responses, label):
    codes = Counter(status for status, _, _ in responses)
    c.equal(f"{label}: 50 admitted across both gateways, the rest 429", Counter({200: 50, 429: len(responses) - 50}), codes)
    c.equal(f"{label}: each admitted request saw its own r (49..0)", list(range(50)),
            sorted(remaining(h) for s, h, _ in responses if s == 200))
    c.equal(f"{label}: every response has the policy", {'"default";q=50;w=60'},
            {h.get("ratelimit-policy") for _, h, _ in responses})
    c.equal(f"{label}: 200s carry the upstream's body", {b"ok\n"}, {b for s, _, b in responses if s == 200})
    denied = [(h.get("ratelimit"), h.get("retry-after"), h.get("content-type")) for s, h, _ in responses if s == 429]
    c.equal(f"{label}: every 429 says r=0;t=45, Retry-After 45, problem+json",
            {('"default";r=0;t=45', "45", "application/problem+json")}, set(denied))
    bodies = {json.loads(b)["violated-policies"][0] for s, _, b in responses if s == 429}
    c.equal(f"{label}: 429 body names the policy", {"default"}, bodies)


def phase_exact(port1, port2, dead_port):
    c = Checks("exact")
    ports = [int(port1), int(port2)]
    check_window(c, burst(ports, 40), "window 1")
    status, h, _ = get(ports[1], api_key="bob")
    c.equal("another API key has its own budget", (200, '"default";r=49;t=45'), (status, h.get("ratelimit")))
    c.equal("no API key: 401", 401, get(ports[0], api_key=None)[0])
    c.equal("Redis unreachable: 503", 503, get(int(dead_port))[0])
    subprocess.run(["redis-cli", "-p", os.environ["RL_REDIS_PORT"], "RL.CLOCK", "ADVANCE", "60000"],
                   check=True, stdout=subprocess.DEVNULL)
    check_window(c, burst(ports, 40), "window 2")
    return c.finish()


def phase_load(port1, port2, out_path, seconds=2.0, max_per_thread=1500):
    c = Checks("load")
    ports = [int(port1), int(port2)]
    counts = {str(p): Counter() for p in ports}
    bad, lock = [], threading.Lock()
    deadline = time.monotonic() + seconds

    def worker(port):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        for _ in range(max_per_thread):
            if time.monotonic() > deadline:
                break
            status, h, _ = get(conn)
            ok = status in (200, 429) and h.get("ratelimit-policy") == '"default";q=20;w=1' and \
                (status == 200 or (h.get("retry-after") == "1" and h.get("ratelimit") == '"default";r=0;t=1'))
            with lock:
                counts[str(port)][status] += 1
                if not ok:
                    bad.append((status, h))
        conn.close()

    threads = [threading.Thread(target=worker, args=(p,)) for p in ports for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    c.equal("every answer is a 200 or a 429 with consistent headers", [], bad[:3])
    c.check("both gateways answered", all(sum(counts[str(p)].values()) > 0 for p in ports), str(counts))
    c.check("requests were admitted and denied", sum(counts[str(p)][200] for p in ports) > 0 and
            sum(counts[str(p)][429] for p in ports) > 0, str(counts))
    with open(out_path, "w") as f:
        json.dump({p: dict(v) for p, v in counts.items()}, f)
    return c.finish()


def phase_logs(log1, log2, counts_path):
    c = Checks("logs")
    with open(counts_path) as f:
        counts = list(json.load(f).values())
    stats = [report.read_log(log, LOAD_WINDOW_MS) for log in (log1, log2)]
    for i, (s, client) in enumerate(zip(stats, counts), 1):
        c.equal(f"gateway {i}: the log's 200s and 429s are the client's", (client.get("200", 0), client.get("429", 0)),
                (s.status[200], s.status[429]))
    result = report.report("gateway load test", ["gw1", "gw2"], stats, LOAD_LIMIT, LOAD_WINDOW_MS)
    c.equal("no window admitted more than the limit across both gateways", [], result["over"])
    c.equal("every admitted request's window is unambiguous", 0, result["total"].ambiguous)
    return c.finish()


# Specs as "KIND P1 P2 P3 FLAG" (P3 0 and FLAG "-" where the kind has none).
AGREE_SPECS = ["TOKEN 10 1 2000 -", "TOKEN 10 3 1000 interval", "TOKEN 100 7 300 -", "LEAKY 2 1 1500 nodelay",
               "LEAKY 50 3 1000 -", "WINDOW 3 60000 0 fixed", "WINDOW 10 1000 0 sliding", "WINDOW 10 100 0 fixed",
               "SLIDINGLOG 2 10000 0 -", "SLIDINGLOG 500 3600000 0 -"]

NODE_HEADERS = r"""
const { token, leaky, window, slidingLog } = require(process.argv[1] + '/lib/limits');
const { rateLimitHeaders } = require(process.argv[1] + '/lib/headers');
const lines = require('fs').readFileSync(0, 'utf8').split('\n').filter(Boolean);
for (const line of lines) {
  const [kind, a, b, c, flag, ...r] = line.split(' ');
  const [p1, p2, p3] = [a, b, c].map(Number);
  const spec = { TOKEN: () => token(p1, p2, p3, { interval: flag === 'interval' }),
    LEAKY: () => leaky(p1, p2, p3, { nodelay: flag === 'nodelay' }),
    WINDOW: () => window(p1, p2, { fixed: flag === 'fixed' }), SLIDINGLOG: () => slidingLog(p1, p2) }[kind]();
  const [allowed, limit, remaining, retryAfterMs, resetAfterMs, waitMs] = r.map(Number);
  const res = { allowed: allowed === 1, limit, remaining, retryAfterMs, resetAfterMs, waitMs };
  const h = rateLimitHeaders([['default', spec, res]], res.allowed, retryAfterMs);
  console.log([h['RateLimit-Policy'], h.RateLimit, h['Retry-After'] || '-'].join('\t'));
}
"""


def agree_vectors(count=300):
    """Plausible replies for every spec: admitted, denied, full, never admittable."""
    import random
    rng = random.Random(18)
    out = []
    for i in range(count):
        spec = AGREE_SPECS[i % len(AGREE_SPECS)]
        lim = int(spec.split()[1])
        remaining = rng.choice([0, lim, rng.randint(0, lim)])
        allowed = rng.random() < 0.5
        retry = -1 if allowed else rng.choice([-1, rng.randint(1, 120000)])
        reset = 0 if remaining == lim and rng.random() < 0.5 else rng.randint(1, 3_600_000)
        out.append(f"{spec} {int(allowed)} {lim} {remaining} {retry} {reset} 0")
    return out


def python_headers(vectors):
    sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))
    from redis_ratelimit import Leaky, Result, SlidingLog, Token, Window, rate_limit_headers
    out = []
    for line in vectors:
        kind, a, b, c, flag, *r = line.split()
        p1, p2, p3 = int(a), int(b), int(c)
        spec = {"TOKEN": lambda: Token(p1, p2, p3, interval=flag == "interval"),
                "LEAKY": lambda: Leaky(p1, p2, p3, nodelay=flag == "nodelay"),
                "WINDOW": lambda: Window(p1, p2, fixed=flag == "fixed"),
                "SLIDINGLOG": lambda: SlidingLog(p1, p2)}[kind]()
        allowed, lim, remaining, retry, reset, wait = (int(x) for x in r)
        h = rate_limit_headers([("default", spec, Result(allowed == 1, lim, remaining, retry, reset, wait))],
                               allowed == 1, retry)
        out.append("\t".join([h["RateLimit-Policy"], h["RateLimit"], h.get("Retry-After", "-")]))
    return out


def phase_agree(selftest_port):
    c = Checks("agree")
    vectors = agree_vectors()
    body = "\n".join(vectors) + "\n"
    conn = http.client.HTTPConnection("127.0.0.1", int(selftest_port), timeout=10)
    conn.request("POST", "/headers", body=body.encode())
    lua = conn.getresponse().read().decode().splitlines()
    node_dir = os.path.join(HERE, "..", "..", "clients", "node")
    node = subprocess.run(["node", "-e", NODE_HEADERS, node_dir], input=body, capture_output=True, text=True)
    node_out = node.stdout.splitlines()
    py = python_headers(vectors)
    c.equal("Lua answered every vector", len(vectors), len(lua))
    c.equal("Node answered every vector", (len(vectors), ""), (len(node_out), node.stderr[-300:]))
    for name, got in (("Lua", lua), ("Node", node_out)):
        diff = [(v, p, g) for v, p, g in zip(vectors, py, got) if p != g]
        c.equal(f"{name} gives Python's headers on every vector", [], diff[:2])
    return c.finish()


if __name__ == "__main__":
    phases = {"exact": phase_exact, "load": phase_load, "logs": phase_logs, "agree": phase_agree}
    sys.exit(phases[sys.argv[1]](*sys.argv[2:]))
