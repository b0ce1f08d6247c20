// Express middleware: limits each request by a client key (the X-API-Key header by default), answers
// 429 with RateLimit-Policy, RateLimit, Retry-After and a problem+json body, and adds the RateLimit
// headers to admitted responses too.
//
//   app.use(rateLimit({ redis, policies: [{ name: 'default', spec: window(100, 60000, { fixed: true }) }] }));
//
// The idea: the decision is createLimiter's (limiter.js: Redis within a timeout, the cache of denials,
// the failure mode), and the middleware turns it into HTTP; it is left on res.locals.ratelimit. Two hooks
// of the request come first, neither calling Redis: allow(req) true skips the limiter (no headers), deny(req)
// true answers 403. When Redis fails the failure mode decides: 'deny' answers 503, 'allow' lets the request
// through without headers, 'local' limits in this process (limiter.js). (These policies live in the
// application; lib/policies.js has the ones kept in Redis, RL.POLICY.)
'use strict';

const { createLimiter, checkRequest, redisKey } = require('./limiter');
const { rateLimitHeaders, problem } = require('./headers');

const apiKeyOrAddress = (req) => req.get('X-API-Key') || req.ip;

// A deny-list hook's answer: refused, whatever the limits say (RFC 9457 problem details).
const FORBIDDEN = { type: 'about:blank', title: 'Forbidden', status: 403 };

// What a request costs: a number for all, or a function of the request.
const costOf = (cost, req) => (typeof cost === 'function' ? cost(req) : cost);

function rateLimit({ redis, policies, key = apiKeyOrAddress, prefix = 'rl:', failOpen = false, onFailure,
  timeoutMs, retryMs, denyCache, logger, now, allow, deny, cost = 1 } = {}) {
  const limiter = createLimiter({ redis, policies, prefix, timeoutMs, retryMs, denyCache, logger, now,
    onFailure: onFailure === undefined ? (failOpen ? 'allow' : 'deny') : onFailure });
  const middleware = async function rateLimitMiddleware(req, res, next) {
    try {
      if (allow && await allow(req)) return next();
      if (deny && await deny(req)) {
        return res.status(403).type('application/problem+json').send(`${JSON.stringify(FORBIDDEN)}\n`);
      }
      const clientKey = key(req);
      if (clientKey === null || clientKey === undefined) return next();
      const decision = await limiter.check(clientKey, { cost: costOf(cost, req) });
      res.locals.ratelimit = decision;
      if (decision.source === 'failure') {
        return decision.allowed ? next() : res.status(503).type('text/plain').send('rate limiter unavailable\n');
      }
      res.set(rateLimitHeaders(decision.items, decision.allowed, decision.retryAfterMs));
      if (decision.allowed) return next();
      const violated = decision.items.filter(([, , r]) => !r.allowed).map(([name]) => name);
      return res.status(429).type('application/problem+json').send(`${JSON.stringify(problem(violated))}\n`);
    } catch (err) {
      return next(err); // a hook or the key function threw: Express's error handling
    }
  };
  middleware.limiter = limiter;
  return middleware;
}

module.exports = { rateLimit, checkRequest, redisKey };
