"""Starlette (and FastAPI) ASGI middleware: limits every HTTP request by a client key, answers 429 with
RateLimit-Policy, RateLimit and Retry-After and a problem+json body, and adds the RateLimit headers to
admitted responses.

    app.add_middleware(RateLimitMiddleware, limiter=AsyncLimiter(redis.asyncio.Redis(), policies),
                       allow=lambda request: request.url.path == "/health")

The idea: a plain ASGI middleware (not BaseHTTPMiddleware, which runs the app in a task of its own): it
decides before calling the app, keeps the decision on `request.state.ratelimit`, and adds the headers as
the response starts. `deny(request)` true refuses with 403 before any limiter is asked; `allow(request)`
true lets the request through unlimited; `key(request)` None leaves it unlimited too. A failed Redis is
the limiter's on_failure: 503 ("deny"), through without headers ("allow"), or the local limiter."""

import inspect
from typing import Any, Awaitable, Callable, Dict, MutableMapping, Optional, Union

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import Response

from .limiter import AsyncLimiter
from .policy import FORBIDDEN, Decision, Refusal, admitted_headers, merged, refusal

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
RequestTest = Callable[[Request], Union[bool, Awaitable[bool]]]


def api_key_or_address(request: Request) -> Optional[str]:
    """The default client key: the X-API-Key header, else the client's address."""
    key = request.headers.get("x-api-key")
    if key:
        return key
    return request.client.host if request.client is not None else None


async def passes(test: Optional[RequestTest], request: Request) -> bool:
    """A hook's verdict; a hook may be a plain or an async function."""
    if test is None:
        return False
    verdict = test(request)
    return bool(await verdict) if inspect.isawaitable(verdict) else bool(verdict)


def response_of(answer: Refusal) -> Response:
    return Response(answer.body, status_code=answer.status, media_type=answer.content_type, headers=answer.headers)


async def decide(limiter: AsyncLimiter, request: Request, key: Callable[[Request], Optional[str]],
                 allow: Optional[RequestTest], deny: Optional[RequestTest],
                 cost: int = 1) -> Union[Refusal, Decision, None]:
    """The hooks, then the limiter: a refusal to answer, a decision that admits, or None (unlimited)."""
    if await passes(deny, request):
        return FORBIDDEN
    if await passes(allow, request):
        return None
    client_key = key(request)
    if client_key is None:
        return None
    decision = await limiter.check(client_key, cost)
    request.state.ratelimit = decision
    answer = refusal(decision)
    return decision if answer is None else answer


class RateLimitMiddleware:
    """The ASGI middleware; every HTTP request of the app goes through `limiter` (an AsyncLimiter)."""

    def __init__(self, app: ASGIApp, limiter: AsyncLimiter,
                 key: Callable[[Request], Optional[str]] = api_key_or_address,
                 allow: Optional[RequestTest] = None, deny: Optional[RequestTest] = None):
        self.app, self.limiter, self.key, self.allow, self.deny = app, limiter, key, allow, deny

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        outcome = await decide(self.limiter, Request(scope), self.key, self.allow, self.deny)
        if isinstance(outcome, Refusal):
            await response_of(outcome)(scope, receive, send)
            return
        headers: Dict[str, str] = admitted_headers(outcome)
        if not headers:
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                out = MutableHeaders(scope=message)
                for name, value in headers.items():
                    out[name] = merged(name, out.get(name), value)
            await send(message)

        await self.app(scope, receive, send_with_headers)
