"""FastAPI per-route limits: a dependency, `Depends(RateLimit(limiter))`, that decides the request before
the route runs, answers 429 (RateLimit-Policy, RateLimit, Retry-After, problem+json), 403 for a
deny-listed request or 503 when Redis failed and the limiter fails closed, and adds the RateLimit headers
to the route's response.

    app = FastAPI()
    install(app)                                      # the handler that turns a refusal into its answer
    search = RateLimit(AsyncLimiter(redis.asyncio.Redis(), [Policy("search", Token(10, 1, 1000))]))

    @app.get("/search", dependencies=[Depends(search)])
    async def run_search(): ...

The idea: each route gets its own limiter (its own policies, prefix and failure mode), and the whole app
can still have the ASGI middleware (starlette.py). A dependency cannot answer by itself, so a refusal is
raised as RateLimited and answered by the handler install() registers; an admitted request's headers go
on the Response FastAPI hands the dependency, which it merges into the route's."""

from typing import Callable, Optional

from fastapi import FastAPI, Request, Response

from .limiter import AsyncLimiter
from .policy import Decision, Refusal
from .starlette import RequestTest, api_key_or_address, decide, response_of


class RateLimited(Exception):
    """A refused request: its answer (429, 403 or 503)."""

    def __init__(self, answer: Refusal):
        super().__init__(f"{answer.status}")
        self.answer = answer


async def rate_limited_handler(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RateLimited)
    return response_of(exc.answer)


def install(app: FastAPI) -> None:
    """Register the handler that answers RateLimited (once per app, before serving)."""
    app.add_exception_handler(RateLimited, rate_limited_handler)


class RateLimit:
    """A dependency that limits the routes it is given to; `cost` units per request. It returns the
    Decision (None for an unlimited request), so a route may take it as a parameter."""

    def __init__(self, limiter: AsyncLimiter, key: Callable[[Request], Optional[str]] = api_key_or_address,
                 cost: int = 1, allow: Optional[RequestTest] = None, deny: Optional[RequestTest] = None):
        self.limiter, self.key, self.cost, self.allow, self.deny = limiter, key, cost, allow, deny

    async def __call__(self, request: Request, response: Response) -> Optional[Decision]:
        outcome = await decide(self.limiter, request, self.key, self.allow, self.deny, self.cost)
        if isinstance(outcome, Refusal):
            raise RateLimited(outcome)
        if outcome is not None:
            response.headers.update(outcome.headers())
        return outcome
