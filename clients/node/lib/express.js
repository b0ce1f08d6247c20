// Express middleware: limits each request by a client key (the X-API-Key header by default), answers
// 429 with RateLimit-Policy, RateLimit, Retry-After and a problem+json body, and adds the RateLimit
// headers to admitted responses too.
//
//   app.use(rateLimit({ redis, policies: [{ name: 'default', spec: window(100, 60000, { fixed: true }) }] }));
//
// The idea: one policy is one RL.* command, several are one atomic RL.ALL (admitted by all, or nothing
// consumed); each client key has one Redis key per policy, all under one hash tag (Redis Cluster). The
// decision is left on res.locals.ratelimit. If Redis fails the request gets 503 (failOpen lets it pass).
// (These policies live in the application; lib/policies.js has the ones kept in Redis, RL.POLICY.)
'use strict';

const { limit, limitAll } = require('./limits');
const { rateLimitHeaders, problem } = require('./headers');

const apiKeyOrAddress = (req) => req.get('X-API-Key') || req.ip;

function redisKey(prefix, clientKey, policy) {
  return `${prefix}{${clientKey}}:${policy.name}`;
}

// One request's decision: { allowed, retryAfterMs, items: [[name, spec, result]], elapsedNs }.
async function checkRequest(redis, policies, clientKey, { prefix = 'rl:', cost = 1 } = {}) {
  const start = process.hrtime.bigint();
  let allowed;
  let retryAfterMs;
  let results;
  if (policies.length === 1) {
    const res = await limit(redis, redisKey(prefix, clientKey, policies[0]), policies[0].spec, { cost });
    [allowed, retryAfterMs, results] = [res.allowed, res.retryAfterMs, [res]];
  } else {
    const out = await limitAll(redis, policies.map((p) => [redisKey(prefix, clientKey, p), p.spec]), { cost });
    [allowed, retryAfterMs, results] = [out.allowed, out.retryAfterMs, out.limits];
  }
  const elapsedNs = process.hrtime.bigint() - start;
  return { allowed, retryAfterMs, items: policies.map((p, i) => [p.name, p.spec, results[i]]), elapsedNs };
}

function rateLimit({ redis, policies, key = apiKeyOrAddress, prefix = 'rl:', failOpen = false }) {
  if (!policies || policies.length === 0) throw new Error('rateLimit: at least one policy');
  // A lease must be released when the request ends, which a rate-limit check does not do: each request
  // would hold its units until the lease expired. Leases are for acquire() and release().
  const leased = policies.find((p) => p.spec.kind === 'CONCURRENCY');
  if (leased) {
    throw new Error(`rateLimit: policy ${leased.name}: concurrency is not a rate limit (use acquire/release)`);
  }
  // A smooth limiter reserves: its waitMs is how long to hold the request, which the middleware never does
  // (and the headers have no mapping for a reservation: docs/headers.md). Call limit() and wait instead.
  const reserving = policies.find((p) => p.spec.kind === 'SMOOTH');
  if (reserving) {
    throw new Error(`rateLimit: policy ${reserving.name}: smooth reserves, its waitMs is for the caller to wait (use limit())`);
  }
  return async function rateLimitMiddleware(req, res, next) {
    const clientKey = key(req);
    if (clientKey === null || clientKey === undefined) return next();
    let decision;
    try {
      decision = await checkRequest(redis, policies, clientKey, { prefix });
    } catch (err) {
      if (failOpen) return next();
      return res.status(503).type('text/plain').send('rate limiter unavailable\n');
    }
    res.locals.ratelimit = decision;
    res.set(rateLimitHeaders(decision.items, decision.allowed, decision.retryAfterMs));
    if (decision.allowed) return next();
    const violated = decision.items.filter(([, , r]) => !r.allowed).map(([name]) => name);
    return res.status(429).type('application/problem+json').send(`${JSON.stringify(problem(violated))}\n`);
  };
}

module.exports = { rateLimit, checkRequest, redisKey };
