"""A tiny Flask API behind the redis_ratelimit middleware, served by werkzeug's threaded HTTP/1.1
server: the application the tests and `make demo` run as real HTTP servers.

    python3 example_app.py --redis-port 6379 --port 8000 --policy default=window:100:1000:fixed

Prints "listening PORT" once it accepts connections (--port 0 picks a free one). With --log FILE it
appends one line per limited request, "unix_ms status reset_after_ms check_us" (the first policy's
reply and the Redis round trip), which the demo's report reads. SIGTERM stops it cleanly.

--on-failure deny|allow|local, --timeout-ms, --retry-ms and --no-deny-cache go to the Limiter (limiter.py). /health is on
the allow-list (never limited); the API key "blocked" is on the deny-list (403, Redis not asked).

--policy NAME=KIND:ARGS (repeatable): token:capacity:refill_tokens:refill_ms[:interval],
leaky:capacity:leak_tokens:leak_ms[:nodelay], window:limit:window_ms[:fixed|:sliding],
slidinglog:limit:window_ms[:mingap_ms]."""

import argparse
import logging
import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import flask  # noqa: E402
import redis  # noqa: E402
from werkzeug.serving import WSGIRequestHandler, make_server  # noqa: E402

from redis_ratelimit import Leaky, Policy, SlidingLog, Token, Window  # noqa: E402
from redis_ratelimit.flask import RateLimit  # noqa: E402


def parse_policy(text: str) -> Policy:
    name, _, rest = text.partition("=")
    kind, *fields = rest.split(":")
    nums = [int(f) for f in fields if f.isdigit()]
    words = {f for f in fields if not f.isdigit()}
    if kind == "token":
        return Policy(name, Token(*nums[:3], interval="interval" in words))
    if kind == "leaky":
        return Policy(name, Leaky(*nums[:3], nodelay="nodelay" in words))
    if kind == "window":
        return Policy(name, Window(*nums[:2], fixed="fixed" in words))
    if kind == "slidinglog":
        return Policy(name, SlidingLog(*nums[:2], mingap_ms=nums[2] if len(nums) > 2 else None))
    raise ValueError(f"--policy {text}: unknown kind {kind!r}")


class RequestLog:
    """One line per limited request, written under a lock (the server is threaded)."""

    def __init__(self, path):
        self.file = open(path, "a", buffering=1 << 16) if path else None
        self.lock = threading.Lock()

    def write(self, status: int, decision) -> None:
        if self.file is None or decision is None:
            return
        res = decision.items[0][2]
        line = f"{time.time_ns() // 1_000_000} {status} {res.reset_after_ms} {decision.elapsed_ns // 1000}\n"
        with self.lock:
            self.file.write(line)

    def close(self) -> None:
        if self.file:
            with self.lock:
                self.file.close()


def create_app(client, policies, log: RequestLog, **options) -> flask.Flask:
    app = flask.Flask("example_app")

    def client_key(request):
        return request.headers.get("X-API-Key") or "anonymous"

    RateLimit(app, client, policies, key=client_key, allow=lambda request: request.path == "/health",
              deny=lambda request: request.headers.get("X-API-Key") == "blocked", **options)

    @app.route("/")
    def index():
        return "ok\n"

    @app.route("/health")
    def health():
        return "healthy\n"

    @app.after_request
    def record(response):
        log.write(response.status_code, flask.g.get("ratelimit"))
        return response

    return app


def example_arguments(description: str) -> argparse.ArgumentParser:
    """The command line every example app takes (example_asgi.py and example_django.py too): the Redis
    port, the app's port (0: any free one, printed), the policies, and the limiter's options."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--redis-host", default="127.0.0.1")
    ap.add_argument("--redis-port", type=int, required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--policy", action="append", required=True)
    ap.add_argument("--on-failure", default="deny", choices=["deny", "allow", "local"])
    # 1 s, not the package's 50 ms: the tests and the demo count exact admissions under load on small
    # machines, where a slow round trip must not turn into a 503.
    ap.add_argument("--timeout-ms", type=int, default=1000)
    ap.add_argument("--retry-ms", type=int, default=1000)
    ap.add_argument("--no-deny-cache", action="store_true",
                    help="ask Redis on every request (a test that moves the module's clock needs it)")
    return ap


def main() -> None:
    ap = example_arguments(__doc__.split("\n")[0])
    ap.add_argument("--log")
    args = ap.parse_args()

    client = redis.Redis(host=args.redis_host, port=args.redis_port, max_connections=64)
    log = RequestLog(args.log)
    app = create_app(client, [parse_policy(p) for p in args.policy], log, on_failure=args.on_failure,
                     timeout_ms=args.timeout_ms, retry_ms=args.retry_ms,
                     deny_cache=not args.no_deny_cache)
    WSGIRequestHandler.protocol_version = "HTTP/1.1"  # keep-alive, as a load generator expects
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request on stderr
    server = make_server("127.0.0.1", args.port, app, threaded=True)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print(f"listening {server.server_port}", flush=True)
    try:
        server.serve_forever()
    finally:
        log.close()


if __name__ == "__main__":
    main()
