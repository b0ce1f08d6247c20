"""A tiny Django site behind redis_ratelimit, served by a real WSGI server (wsgiref, one thread per
request): the application the tests run as a real HTTP server.

    python3 example_django.py --redis-port 6379 --port 8000 --policy default=window:100:1000:fixed

Every request goes through the middleware (settings.RATELIMIT, with the --policy limits); the view
/search also has its own limit, @ratelimit of 2 per minute. /health is on the allow-list; the API key
"blocked" on the deny-list (403). --on-failure, --timeout-ms, --retry-ms and --no-deny-cache go to both
limiters. Prints "listening PORT" once it accepts connections (--port 0 picks a free one); SIGTERM stops
it."""

import json
import os
import signal
import sys
import threading
from socketserver import ThreadingMixIn
from typing import Any, List
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import django  # noqa: E402
from django.conf import settings  # noqa: E402
from django.http import HttpRequest, HttpResponse  # noqa: E402
from django.urls import path  # noqa: E402

from redis_ratelimit import Policy, Window  # noqa: E402
from redis_ratelimit.django import ratelimit  # noqa: E402


def is_health(request: HttpRequest) -> bool:
    return request.path == "/health"


def is_blocked(request: HttpRequest) -> bool:
    return request.headers.get("X-API-Key") == "blocked"


def index(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok\n", content_type="text/plain")


def health(request: HttpRequest) -> HttpResponse:
    return HttpResponse("healthy\n", content_type="text/plain")


def search(request: HttpRequest) -> HttpResponse:
    decision = getattr(request, "ratelimit", None)
    return HttpResponse(json.dumps({"source": decision.source if decision else None}),
                        content_type="application/json")


urlpatterns: List[Any] = []


def configure(redis_host: str, redis_port: int, policies: List[Policy], options: Any) -> None:
    settings.configure(
        DEBUG=False, ALLOWED_HOSTS=["127.0.0.1", "localhost"], ROOT_URLCONF=__name__, SECRET_KEY="example",
        MIDDLEWARE=["redis_ratelimit.django.RateLimitMiddleware"],
        RATELIMIT={"REDIS": {"host": redis_host, "port": redis_port}, "POLICIES": policies,
                   "ALLOW": "example_django.is_health", "DENY": "example_django.is_blocked", "OPTIONS": options})
    django.setup()
    limited_search = ratelimit([Policy("search", Window(2, 60_000, fixed=True))], prefix="rl:view:", **options)(search)
    urlpatterns[:] = [path("", index), path("health", health), path("search", limited_search)]


class ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args: Any) -> None:  # no line per request on stderr
        pass


def main() -> None:
    from example_app import example_arguments, parse_policy  # the same command line as the Flask example
    ap = example_arguments((__doc__ or "").split("\n")[0])
    args = ap.parse_args()
    configure(args.redis_host, args.redis_port, [parse_policy(p) for p in args.policy],
              {"on_failure": args.on_failure, "timeout_ms": args.timeout_ms, "retry_ms": args.retry_ms,
               "deny_cache": not args.no_deny_cache})
    from django.core.wsgi import get_wsgi_application
    server = make_server("127.0.0.1", args.port, get_wsgi_application(), server_class=ThreadingServer,
                         handler_class=QuietHandler)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print(f"listening {server.server_port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.modules.setdefault("example_django", sys.modules[__name__])  # the dotted paths in settings
    main()
