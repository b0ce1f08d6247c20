"""Flask middleware: limits every request by a client key (an API key header by default), answers 429
with RateLimit-Policy, RateLimit and Retry-After (and a problem+json body), and adds the RateLimit
headers to admitted responses too.

    app = Flask(__name__)
    RateLimit(app, redis.Redis(), [Policy("default", Window(100, 60_000, fixed=True))],
              on_failure="local", allow=lambda req: req.path == "/health")

The idea: the decision is made in `before_request` by a Limiter (limiter.py: one Redis round trip with
its timeout, the denial cache, the failure mode) and kept on `flask.g.ratelimit`, so the view and
`after_request` can read it. `deny(request)` true refuses with 403 before any limiter is asked;
`allow(request)` true lets the request through unlimited. If Redis fails, on_failure="deny" (the
default) answers 503, "allow" lets the request through without headers, "local" limits in-process."""

from typing import Any, Callable, Optional, Sequence

import flask
import redis

from .limiter import Limiter
from .policy import FORBIDDEN, Decision, Policy, Refusal, admitted_headers, refusal

RequestTest = Callable[[Any], bool]


def api_key_or_address(request: Any) -> Optional[str]:
    """The default client key: the X-API-Key header, else the client's address."""
    key = request.headers.get("X-API-Key") or request.remote_addr
    return None if key is None else str(key)


class RateLimit:
    """Registers the limiter on a Flask app. `key(request)` returns the client key, or None to leave
    the request unlimited. Every other keyword (timeout_ms, on_failure, retry_ms, deny_cache...) goes to
    the Limiter; `limiter=` gives a ready one instead. fail_open=True is on_failure="allow" (kept from
    before the Limiter)."""

    def __init__(self, app: flask.Flask, client: "Optional[redis.Redis[Any]]", policies: Sequence[Policy] = (),
                 key: Callable[[Any], Optional[str]] = api_key_or_address, prefix: str = "rl:",
                 fail_open: bool = False, *, limiter: Optional[Limiter] = None, allow: Optional[RequestTest] = None,
                 deny: Optional[RequestTest] = None, **options: Any):
        if limiter is None:
            if fail_open:
                options.setdefault("on_failure", "allow")
            limiter = Limiter(client, policies, prefix=prefix, **options)
        self.limiter, self.key, self.allow, self.deny = limiter, key, allow, deny
        app.before_request(self.before)
        app.after_request(self.after)

    def before(self) -> Optional[flask.Response]:
        request = flask.request
        if self.deny is not None and self.deny(request):
            return self.respond(FORBIDDEN)
        if self.allow is not None and self.allow(request):
            return None
        client_key = self.key(request)
        if client_key is None:
            return None
        decision = self.limiter.check(client_key)
        flask.g.ratelimit = decision
        answer = refusal(decision)
        return None if answer is None else self.respond(answer)

    @staticmethod
    def respond(answer: Refusal) -> flask.Response:
        return flask.Response(answer.body, status=answer.status, mimetype=answer.content_type,
                              headers=answer.headers)

    @staticmethod
    def too_many(decision: Decision) -> flask.Response:
        answer = refusal(decision)
        assert answer is not None
        return RateLimit.respond(answer)

    @staticmethod
    def after(response: flask.Response) -> flask.Response:
        response.headers.update(admitted_headers(flask.g.get("ratelimit")))
        return response
