"""Flask middleware: limits every request by a client key (an API key header by default), answers 429
with RateLimit-Policy, RateLimit and Retry-After (and a problem+json body), and adds the RateLimit
headers to admitted responses too.

    app = Flask(__name__)
    RateLimit(app, redis.Redis(), [Policy("default", Window(100, 60_000, fixed=True))])

The idea: the decision is made in `before_request` (one Redis round trip, policy.check_request) and kept on
`flask.g.ratelimit`, so the view and `after_request` can read it. If Redis fails, the request is
refused with 503 (fail_open=True lets it through without headers)."""

import json
from typing import Callable, Optional, Sequence

import flask
import redis

from .policy import Decision, Policy, check_request


def api_key_or_address(request) -> Optional[str]:
    """The default client key: the X-API-Key header, else the client's address."""
    return request.headers.get("X-API-Key") or request.remote_addr


class RateLimit:
    """Registers the limiter on a Flask app. `key(request)` returns the client key, or None to leave
    the request unlimited."""

    def __init__(self, app: flask.Flask, client: redis.Redis, policies: Sequence[Policy],
                 key: Callable = api_key_or_address, prefix: str = "rl:", fail_open: bool = False):
        if not policies:
            raise ValueError("at least one policy")
        self.client, self.policies, self.key = client, list(policies), key
        self.prefix, self.fail_open = prefix, fail_open
        app.before_request(self.before)
        app.after_request(self.after)

    def before(self):
        client_key = self.key(flask.request)
        if client_key is None:
            return None
        try:
            decision = check_request(self.client, self.policies, client_key, self.prefix)
        except redis.RedisError:
            if self.fail_open:
                return None
            return flask.Response("rate limiter unavailable\n", status=503, mimetype="text/plain")
        flask.g.ratelimit = decision
        return None if decision.allowed else self.too_many(decision)

    @staticmethod
    def too_many(decision: Decision) -> flask.Response:
        return flask.Response(json.dumps(decision.problem()) + "\n", status=429,
                              mimetype="application/problem+json", headers=decision.headers())

    @staticmethod
    def after(response: flask.Response) -> flask.Response:
        decision = flask.g.get("ratelimit")
        if decision is not None and decision.allowed:
            response.headers.update(decision.headers())
        return response
