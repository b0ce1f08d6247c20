"""Django: a middleware configured from settings, and a view decorator for per-view limits. Both answer
429 with RateLimit-Policy, RateLimit and Retry-After and a problem+json body, 403 for a deny-listed
request, 503 when Redis failed and the limiter fails closed, and add the RateLimit headers to admitted
responses.

    # settings.py
    MIDDLEWARE = [..., "redis_ratelimit.django.RateLimitMiddleware"]
    RATELIMIT = {
        "REDIS_URL": "redis://127.0.0.1:6379/0",
        "POLICIES": [Policy("default", Window(100, 60_000, fixed=True))],
        "KEY": "myapp.limits.client_key",           # a function of the request, or its dotted path
        "ALLOW": "myapp.limits.is_internal",        # optional: true lets the request through unlimited
        "DENY": "myapp.limits.is_banned",           # optional: true refuses it with 403
        "OPTIONS": {"on_failure": "local", "timeout_ms": 50},   # the Limiter's keywords
    }

    @ratelimit([Policy("search", Token(10, 1, 1000))], prefix="rl:search:")
    def search(request): ...

The idea: one Limiter (limiter.py) per middleware and per decorated view, made once from settings (the
decorator's at its first request, when settings are ready). The decision is kept on
`request.ratelimit`. A key function returning None leaves the request unlimited; the default key is the
X-API-Key header, else REMOTE_ADDR."""

import functools
import threading
from typing import Any, Callable, Dict, Optional, Sequence, Union

import redis
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.module_loading import import_string

from .limiter import Limiter
from .policy import FORBIDDEN, Policy, Refusal, admitted_headers, merged, refusal

View = Callable[..., HttpResponse]
RequestFunction = Callable[[HttpRequest], Any]


def api_key_or_address(request: HttpRequest) -> Optional[str]:
    """The default client key: the X-API-Key header, else the client's address."""
    key = request.headers.get("X-API-Key") or request.META.get("REMOTE_ADDR")
    return None if key is None else str(key)


def config() -> Dict[str, Any]:
    value = getattr(settings, "RATELIMIT", None)
    return dict(value) if value else {}


def function(value: Union[None, str, RequestFunction]) -> Optional[RequestFunction]:
    """A hook given as a function or as its dotted path."""
    return import_string(value) if isinstance(value, str) else value


def settings_client() -> "redis.Redis[Any]":
    """The client RATELIMIT names: REDIS_URL, else REDIS (redis.Redis keywords), else 127.0.0.1:6379."""
    conf = config()
    if "REDIS_URL" in conf:
        return redis.Redis.from_url(conf["REDIS_URL"])
    return redis.Redis(**conf.get("REDIS", {"host": "127.0.0.1", "port": 6379}))


def response_of(answer: Refusal) -> HttpResponse:
    response = HttpResponse(answer.body, status=answer.status, content_type=answer.content_type)
    for name, value in answer.headers.items():
        response[name] = value
    return response


class Gate:
    """The hooks and the limiter of one middleware or view: the answer for one request."""

    def __init__(self, limiter: Limiter, key: RequestFunction, allow: Optional[RequestFunction],
                 deny: Optional[RequestFunction]):
        self.limiter, self.key, self.allow, self.deny = limiter, key, allow, deny

    def handle(self, request: HttpRequest, view: Callable[[], HttpResponse]) -> HttpResponse:
        if self.deny is not None and self.deny(request):
            return response_of(FORBIDDEN)
        if self.allow is not None and self.allow(request):
            return view()
        client_key = self.key(request)
        if client_key is None:
            return view()
        decision = self.limiter.check(str(client_key))
        setattr(request, "ratelimit", decision)
        answer = refusal(decision)
        if answer is not None:
            return response_of(answer)
        response = view()
        for name, value in admitted_headers(decision).items():
            response[name] = merged(name, response.get(name), value)
        return response


class RateLimitMiddleware:
    """Every request through settings.RATELIMIT's POLICIES (a Django "new-style" middleware)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        conf = config()
        if not conf.get("POLICIES"):
            raise ValueError("settings.RATELIMIT['POLICIES']: at least one Policy")
        limiter = Limiter(settings_client(), conf["POLICIES"], **conf.get("OPTIONS", {}))
        key = function(conf.get("KEY")) or api_key_or_address
        self.gate = Gate(limiter, key, function(conf.get("ALLOW")), function(conf.get("DENY")))
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.gate.handle(request, lambda: self.get_response(request))


def ratelimit(policies: Sequence[Policy], *, client: "Optional[redis.Redis[Any]]" = None,
              key: Union[None, str, RequestFunction] = None, allow: Union[None, str, RequestFunction] = None,
              deny: Union[None, str, RequestFunction] = None, **options: Any) -> Callable[[View], View]:
    """A view's own limits: `policies`, on `client` (default: the one settings.RATELIMIT names), with the
    Limiter's keywords (prefix, on_failure, timeout_ms...); give each view its own prefix so that two views'
    policies of the same name do not share a key."""
    made: Dict[str, Gate] = {}
    making = threading.Lock()

    def gate() -> Gate:
        with making:  # one limiter, however many threads serve the first requests
            if "gate" in made:
                return made["gate"]
            limiter = Limiter(client if client is not None else settings_client(), policies, **options)
            made["gate"] = Gate(limiter, function(key) or api_key_or_address, function(allow), function(deny))
            return made["gate"]

    def decorate(view: View) -> View:
        @functools.wraps(view)
        def limited(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            return gate().handle(request, lambda: view(request, *args, **kwargs))
        return limited

    return decorate
