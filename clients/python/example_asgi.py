"""A tiny FastAPI (Starlette) API behind redis_ratelimit, served by uvicorn: the application the tests run
as a real HTTP server.

    python3 example_asgi.py --redis-port 6379 --port 8000 --policy default=window:100:1000:fixed

Every request goes through the ASGI middleware (starlette.py) with the --policy limits; /search also has
its own per-route limit, a FastAPI dependency (fastapi.py) of 2 per minute. /health is on the allow-list;
the API key "blocked" on the deny-list (403). --on-failure, --timeout-ms, --retry-ms and --no-deny-cache
go to both limiters. Prints "listening PORT" once it accepts connections (--port 0 picks a free one);
SIGTERM stops it."""

import os
import socket
import sys
from typing import Any, Dict, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import redis.asyncio  # noqa: E402
import uvicorn  # noqa: E402
from fastapi import Depends, FastAPI, Request  # noqa: E402

from example_app import example_arguments, parse_policy  # noqa: E402
from redis_ratelimit import Decision, Policy, Window  # noqa: E402
from redis_ratelimit.fastapi import RateLimit, install  # noqa: E402
from redis_ratelimit.limiter import AsyncLimiter  # noqa: E402
from redis_ratelimit.starlette import RateLimitMiddleware  # noqa: E402


def is_health(request: Request) -> bool:
    return request.url.path == "/health"


def is_blocked(request: Request) -> bool:
    return request.headers.get("x-api-key") == "blocked"


def create_app(client: Any, policies: Any, **options: Any) -> FastAPI:
    app = FastAPI()
    install(app)
    app.add_middleware(RateLimitMiddleware, limiter=AsyncLimiter(client, policies, **options),
                       allow=is_health, deny=is_blocked)
    search_limit = RateLimit(AsyncLimiter(client, [Policy("search", Window(2, 60_000, fixed=True))],
                                          prefix="rl:route:", **options))

    @app.get("/")
    async def index() -> Dict[str, str]:
        return {"ok": "yes"}

    @app.get("/health")
    async def health() -> Dict[str, str]:
        return {"healthy": "yes"}

    @app.get("/search")
    async def search(decision: Optional[Decision] = Depends(search_limit)) -> Dict[str, Any]:
        return {"source": decision.source if decision else None}

    return app


def main() -> None:
    ap = example_arguments((__doc__ or "").split("\n")[0])
    args = ap.parse_args()
    client = redis.asyncio.Redis(host=args.redis_host, port=args.redis_port)
    app = create_app(client, [parse_policy(p) for p in args.policy], on_failure=args.on_failure,
                     timeout_ms=args.timeout_ms, retry_ms=args.retry_ms, deny_cache=not args.no_deny_cache)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
    print(f"listening {sock.getsockname()[1]}", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    server.run(sockets=[sock])


if __name__ == "__main__":
    main()
