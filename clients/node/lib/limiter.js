// The request core of the middlewares (express.js, fastify.js): createLimiter() decides one request of a
// client key against a set of policies, and says where the decision came from.
//
//   const limiter = createLimiter({ redis, policies: [{ name: 'default', spec: window(100, 60000, { fixed: true }) }],
//     timeoutMs: 50, onFailure: 'local' });
//   const d = await limiter.check('user:42', { cost: 1 });   // { allowed, retryAfterMs, items, source, ... }
//
// The idea: Redis decides (one RL.* command for one policy, one atomic RL.ALL for several, each client key
// with one Redis key per policy under one hash tag), within a per-call timeout. Around that call:
//   - a cache of denials: a client key denied with retryAfterMs r (>= denyCache.minMs) is denied in this
//     process until r has passed, with no round trip: a client hammering a denied key costs Redis nothing.
//     The module's retry is the earliest the same request could be admitted (other clients only push it
//     later), so the cache denies nothing Redis would admit, unless someone gives budget back (a refund,
//     RL.RESET) meanwhile. A denial of cost c says nothing of a smaller cost: only calls of cost >= c hit.
//     Not with a slidingLog policy: the module logs denied attempts too, which a cached denial would not.
//   - on a failure (an error, or no reply within timeoutMs), onFailure says what the decision is: 'deny'
//     (source 'failure', not allowed: the middlewares answer 503), 'allow' (source 'failure', allowed: let
//     through without headers), or 'local': the in-process limiters of local.js, with the same specs, take
//     over until Redis answers again (tried at most every retryMs), one log line and one counter each way.
'use strict';

const { limit, limitAll } = require('./limits');
const { createLocalLimiter, localFormError, validateLocal } = require('./local');

const FAILURE_MODES = ['deny', 'allow', 'local'];
const DENY_CACHE_DEFAULTS = { minMs: 100, maxEntries: 10000 };

function redisKey(prefix, clientKey, policy) {
  return `${prefix}{${clientKey}}:${policy.name}`;
}

// One request as the RL.* replies' shape { allowed, retryAfterMs, results }: one policy is one RL.* command,
// several one RL.ALL; from Redis (a promise) or from the local limiter (at once), the same steps.
const pairs = (policies, keys) => policies.map((p, i) => [keys[i], p.spec]);
const single = (res) => ({ allowed: res.allowed, retryAfterMs: res.retryAfterMs, results: [res] });
const several = (out) => ({ allowed: out.allowed, retryAfterMs: out.retryAfterMs, results: out.limits });

async function decideRedis(redis, policies, keys, opts) {
  if (policies.length === 1) return single(await limit(redis, keys[0], policies[0].spec, opts));
  return several(await limitAll(redis, pairs(policies, keys), opts));
}

function decideLocal(local, policies, keys, opts) {
  if (policies.length === 1) return single(local.limit(keys[0], policies[0].spec, opts));
  return several(local.limitAll(pairs(policies, keys), opts));
}

function decision(policies, out, source, startNs) {
  return { allowed: out.allowed, retryAfterMs: out.retryAfterMs, source,
    items: policies.map((p, i) => [p.name, p.spec, out.results[i]]), elapsedNs: process.hrtime.bigint() - startNs };
}

// One request's decision from Redis: { allowed, retryAfterMs, items: [[name, spec, result]], elapsedNs,
// source: 'redis' }. The framework-free call, without timeout, cache or failure mode (createLimiter has
// them); a Redis error rejects.
async function checkRequest(redis, policies, clientKey, { prefix = 'rl:', cost = 1, dryrun = false } = {}) {
  const start = process.hrtime.bigint();
  const keys = policies.map((p) => redisKey(prefix, clientKey, p));
  return decision(policies, await decideRedis(redis, policies, keys, { cost, dryrun }), 'redis', start);
}

class TimeoutError extends Error {
  constructor(ms) {
    super(`no reply from Redis within ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

// The call, or a TimeoutError after ms. ioredis queues commands while it reconnects, so a call may never
// settle in time: the race answers at the deadline, and the late reply or error is caught and dropped
// (no unhandled rejection).
function withTimeout(promise, ms) {
  let timer;
  promise.catch(() => {});
  const deadline = new Promise((resolve, reject) => { timer = setTimeout(() => reject(new TimeoutError(ms)), ms); });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

// The policies a limiter can check: named, each a rate limit. A lease must be released when the request
// ends, which a check does not do; a smooth limiter reserves, its waitMs is for the caller to wait, which
// the middlewares never do (and the headers have no mapping for a reservation: docs/headers.md).
function checkPolicies(policies, onFailure) {
  if (!Array.isArray(policies) || policies.length === 0) throw new TypeError('policies: at least one { name, spec }');
  for (const p of policies) {
    if (!p || typeof p.name !== 'string' || !p.spec || !p.spec.kind) {
      throw new TypeError(`policies: each is { name, spec }, not ${JSON.stringify(p)}`);
    }
    if (p.spec.kind === 'CONCURRENCY') {
      throw new TypeError(`policy ${p.name}: concurrency is not a rate limit (use acquire/release)`);
    }
    if (p.spec.kind === 'SMOOTH') {
      throw new TypeError(`policy ${p.name}: smooth reserves, its waitMs is for the caller to wait (use limit())`);
    }
    if (onFailure === 'local') {
      const reason = localFormError(p.spec);
      if (reason) throw new TypeError(`policy ${p.name}: onFailure 'local': ${reason}`);
      validateLocal(p.spec);
    }
  }
}

function checkOptions({ redis, timeoutMs, onFailure, retryMs, denyCache, logger }) {
  if (!redis || typeof redis.call !== 'function') throw new TypeError('redis: an ioredis client (or anything with call())');
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1) throw new RangeError(`timeoutMs: must be an integer >= 1, not ${timeoutMs}`);
  if (!FAILURE_MODES.includes(onFailure)) throw new RangeError(`onFailure: must be 'deny', 'allow' or 'local', not ${onFailure}`);
  if (!Number.isSafeInteger(retryMs) || retryMs < 0) throw new RangeError(`retryMs: must be an integer >= 0, not ${retryMs}`);
  if (denyCache !== false) {
    if (!denyCache || typeof denyCache !== 'object') throw new TypeError('denyCache: must be { minMs, maxEntries } or false');
    const { minMs, maxEntries } = denyCache;
    if (!Number.isSafeInteger(minMs) || minMs < 0) throw new RangeError(`denyCache.minMs: must be an integer >= 0, not ${minMs}`);
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
      throw new RangeError(`denyCache.maxEntries: must be an integer >= 1, not ${maxEntries}`);
    }
  }
  if (logger !== null && (!logger || typeof logger.warn !== 'function')) throw new TypeError('logger: must have warn(message), or be null');
}

// The denials: clientKey -> { untilMs, cost, atMs, out }, least recently used first, at most maxEntries.
function createDenyCache({ minMs, maxEntries }) {
  const entries = new Map();
  return {
    get size() { return entries.size; },
    remember(clientKey, cost, out, nowMs) {
      if (out.allowed || out.retryAfterMs < minMs) return;
      entries.delete(clientKey);
      entries.set(clientKey, { untilMs: nowMs + out.retryAfterMs, cost, atMs: nowMs, out });
      while (entries.size > maxEntries) entries.delete(entries.keys().next().value);
    },
    // The cached denial that covers a call of `cost` now, or null; its times counted down to now.
    lookup(clientKey, cost, nowMs) {
      const e = entries.get(clientKey);
      if (!e) return null;
      if (nowMs >= e.untilMs || nowMs < e.atMs) { // passed (or the clock went back): ask Redis again
        entries.delete(clientKey);
        return null;
      }
      if (cost < e.cost) return null;
      entries.delete(clientKey);
      entries.set(clientKey, e);
      const gone = nowMs - e.atMs;
      const countDown = (r) => ({ ...r, retryAfterMs: r.retryAfterMs < 0 ? r.retryAfterMs : Math.max(r.retryAfterMs - gone, 1),
        resetAfterMs: Math.max(r.resetAfterMs - gone, 0) });
      return { allowed: false, retryAfterMs: e.untilMs - nowMs, results: e.out.results.map(countDown) };
    },
    clear: () => entries.clear(),
  };
}

function createLimiter({ redis, policies, prefix = 'rl:', timeoutMs = 50, onFailure = 'deny', retryMs = 1000,
  denyCache = DENY_CACHE_DEFAULTS, logger = console, now = Date.now } = {}) {
  if (denyCache && typeof denyCache === 'object') denyCache = { ...DENY_CACHE_DEFAULTS, ...denyCache };
  checkOptions({ redis, timeoutMs, onFailure, retryMs, denyCache, logger });
  checkPolicies(policies, onFailure);
  policies = policies.map((p) => ({ name: p.name, spec: p.spec }));
  // A sliding log records denied attempts too (a denial pushes the next admission later): a denial
  // answered here would not be recorded, so such policies always ask Redis.
  const logsDenials = policies.some((p) => p.spec.kind === 'SLIDINGLOG');
  const denials = denyCache === false || logsDenials ? null : createDenyCache(denyCache);
  const local = onFailure === 'local' ? createLocalLimiter({ maxKeys: 10000, now }) : null;
  const stats = { calls: 0, redis: 0, local: 0, cacheHits: 0, failures: 0, timeouts: 0, toLocal: 0, toRedis: 0 };
  let usingLocal = false; // onFailure 'local', while Redis is unreachable
  let nextTryMs = 0; // while local: when Redis may be tried again
  let trying = false; // while local: one call is trying Redis
  const warn = (message) => { if (logger) logger.warn(message); };

  async function fromRedis(keys, opts) {
    stats.redis += 1;
    return withTimeout(decideRedis(redis, policies, keys, opts), timeoutMs);
  }

  function fromLocal(keys, opts, startNs) {
    stats.local += 1;
    return decision(policies, decideLocal(local, policies, keys, opts), 'local', startNs);
  }

  function failed(err, keys, opts, startNs) {
    stats.failures += 1;
    if (err instanceof TimeoutError) stats.timeouts += 1;
    if (onFailure !== 'local') {
      return { allowed: onFailure === 'allow', retryAfterMs: -1, source: 'failure', error: err, items: [],
        elapsedNs: process.hrtime.bigint() - startNs };
    }
    if (!usingLocal) {
      usingLocal = true;
      stats.toLocal += 1;
      warn(`ratelimit: Redis failed (${err.message}): the local limiter takes over, Redis is tried again every ${retryMs} ms`);
    }
    nextTryMs = now() + retryMs;
    return fromLocal(keys, opts, startNs);
  }

  function handBack() {
    usingLocal = false;
    stats.toRedis += 1;
    local.clear(); // the next outage starts from full limiters, not from counts long past
    warn('ratelimit: Redis answers again: it decides from now on, the local limiter stands by');
  }

  async function check(clientKey, { cost = 1, dryrun = false } = {}) {
    if (clientKey === null || clientKey === undefined) throw new TypeError('clientKey: a string, not ' + clientKey);
    const startNs = process.hrtime.bigint();
    stats.calls += 1;
    const keys = policies.map((p) => redisKey(prefix, clientKey, p));
    const opts = { cost, dryrun };
    const cached = denials && denials.lookup(clientKey, cost, now());
    if (cached) {
      stats.cacheHits += 1;
      return decision(policies, cached, 'cache', startNs);
    }
    const trial = usingLocal;
    if (trial) {
      if (trying || now() < nextTryMs) return fromLocal(keys, opts, startNs);
      trying = true;
    }
    let out;
    try {
      out = await fromRedis(keys, opts);
    } catch (err) {
      return failed(err, keys, opts, startNs);
    } finally {
      if (trial) trying = false;
    }
    if (usingLocal) handBack();
    if (denials) denials.remember(clientKey, cost, out, now());
    return decision(policies, out, 'redis', startNs);
  }

  return { check, stats, policies, get mode() { return usingLocal ? 'local' : 'redis'; } };
}

module.exports = { createLimiter, checkRequest, redisKey, TimeoutError };
