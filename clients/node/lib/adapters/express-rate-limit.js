// express-rate-limit's Store on the module: `rateLimit({ store: new ExpressRateLimitStore({ redis }), limit,
// windowMs })` keeps the library (its options, headers, handler, skip*) and moves the counting into one
// atomic RL.WINDOW call per request (FIXED, or the sliding-window counter with `sliding: true`).
//
// The idea: the library asks a store for a count (`totalHits`) and decides `totalHits > limit` itself; the
// module decides in Redis and never counts a denied request. So the store reads the library's `limit` and
// `windowMs` in init(), lets RL.WINDOW decide, and reports its verdict as a count the library reads the same
// way: admitted, the units the window holds (limit - remaining); denied, one more than fits (limit -
// remaining + 1, which is limit + 1). A decrement (skipFailedRequests, skipSuccessfulRequests) is a REFUND 1,
// except for a denied request, which took nothing: the store remembers, per key, the denials whose decrement
// the library will send, and answers that decrement without giving anything back. get() is RL.WINDOW_RO
// with COST 0, resetKey() RL.RESET. Times the module gives relative (reset_after_ms, retry_after_ms) become
// dates on this process's clock as of the reply.
'use strict';

const { limit, reset, window } = require('../limits');

// The module's range for a window's limit and length (docs/commands.md, RL.WINDOW).
const LARGEST = 1e12;
// Remembered denials are swept of the expired ones once this many keys hold some.
const SWEEP_KEYS = 10000;

function wholeNumber(name, value) {
  if (!Number.isSafeInteger(value) || value < 1 || value > LARGEST) {
    throw new RangeError(`${name}: must be a whole number from 1 to 10^12 for RL.WINDOW, not ${String(value)}`);
  }
}

class ExpressRateLimitStore {
  // redis: an ioredis Redis or Cluster (the package's calls route each key); prefix: put before every key
  // the library gives; sliding: true for the sliding-window counter instead of the fixed window;
  // denialWasSuccessful: what your requestWasSuccessful says of a denied response (default: its status,
  // the library's statusCode, is below 400, as the library's default says).
  constructor({ redis, prefix = 'erl:', sliding = false, denialWasSuccessful } = {}) {
    if (!redis || typeof redis.call !== 'function') {
      throw new TypeError('redis: an ioredis Redis or Cluster is needed');
    }
    if (typeof prefix !== 'string') throw new TypeError(`prefix: must be a string, not ${typeof prefix}`);
    if (typeof sliding !== 'boolean') throw new TypeError(`sliding: must be true or false, not ${String(sliding)}`);
    if (denialWasSuccessful !== undefined && typeof denialWasSuccessful !== 'boolean') {
      throw new TypeError(`denialWasSuccessful: must be true or false, not ${String(denialWasSuccessful)}`);
    }
    this.redis = redis;
    this.prefix = prefix;
    this.sliding = sliding;
    this.denialWasSuccessful = denialWasSuccessful;
    // Keys live in Redis, shared by every process: the library's double-count check reads this.
    this.localKeys = false;
    this.spec = undefined;
    this.initError = new Error('init: not called yet (pass the store to rateLimit({ store }), which calls it)');
    // Whether the library will decrement a denied request, and per key the reset times of those denials.
    this.denialsDecremented = false;
    this.denials = new Map();
  }

  // The library's options, once, at rateLimit(): the limit and window of every key, and which requests it
  // will decrement. An error is kept and every later call rejects with it (the library only logs init's).
  init(options) {
    this.spec = undefined;
    try {
      if (typeof options.limit === 'function') {
        throw new TypeError('limit: a function of the request is not supported by this store (RL.WINDOW ' +
          'keeps one limit per key); give rateLimit a number');
      }
      wholeNumber('limit', options.limit);
      wholeNumber('windowMs', options.windowMs);
    } catch (err) {
      this.initError = err;
      throw err;
    }
    this.spec = window(options.limit, options.windowMs, { fixed: !this.sliding });
    const statusCode = options.statusCode === undefined ? 429 : options.statusCode;
    const deniedIsSuccess = this.denialWasSuccessful === undefined ? statusCode < 400 : this.denialWasSuccessful;
    this.denialsDecremented = Boolean((options.skipFailedRequests && !deniedIsSuccess)
      || (options.skipSuccessfulRequests && deniedIsSuccess));
  }

  // The spec init() made, or init's error.
  windowSpec() {
    if (this.spec === undefined) throw this.initError;
    return this.spec;
  }

  // One request (RL.WINDOW): the count the library compares with its limit, and when the client may come back.
  async increment(key) {
    const spec = this.windowSpec();
    const res = await limit(this.redis, this.prefix + key, spec);
    const now = Date.now();
    if (res.allowed) {
      return { totalHits: spec.limit - res.remaining, resetTime: new Date(now + res.resetAfterMs) };
    }
    // Denied: nothing was counted. retry_after_ms is when this request would be admitted (for FIXED, the
    // window's end, its reset_after_ms too); the library's Retry-After and RateLimit-Reset read it.
    const resetTime = new Date(now + res.retryAfterMs);
    if (this.denialsDecremented) this.rememberDenial(key, resetTime.getTime());
    return { totalHits: spec.limit - res.remaining + 1, resetTime };
  }

  // A request the library decided not to count: REFUND 1, unless it is a denial, which took nothing.
  async decrement(key) {
    const spec = this.windowSpec();
    if (this.forgetDenial(key)) return;
    await limit(this.redis, this.prefix + key, spec, { refund: 1 });
  }

  // The key as it stands (RL.WINDOW_RO, COST 0: nothing is counted), or undefined when its window is idle.
  async get(key) {
    const spec = this.windowSpec();
    const res = await limit(this.redis, this.prefix + key, spec, { readonly: true, cost: 0 });
    if (res.resetAfterMs === 0) return undefined;
    return { totalHits: spec.limit - res.remaining, resetTime: new Date(Date.now() + res.resetAfterMs) };
  }

  // Forget the key's count (RL.RESET), and the denials remembered for it.
  async resetKey(key) {
    this.denials.delete(key);
    await reset(this.redis, this.prefix + key);
  }

  // A denial whose decrement the library will send before `until` (after it, the library sends none).
  rememberDenial(key, until) {
    if (this.denials.size >= SWEEP_KEYS) this.sweepDenials();
    const times = this.denials.get(key);
    if (times) times.push(until);
    else this.denials.set(key, [until]);
  }

  // True if a denial of `key` is still owed a decrement (and it is now taken as paid).
  forgetDenial(key) {
    const times = this.denials.get(key);
    if (!times) return false;
    const now = Date.now();
    const owed = times.filter((until) => until > now);
    const found = owed.length > 0;
    if (found) owed.shift();
    if (owed.length > 0) this.denials.set(key, owed);
    else this.denials.delete(key);
    return found;
  }

  sweepDenials() {
    const now = Date.now();
    for (const [key, times] of this.denials) {
      const owed = times.filter((until) => until > now);
      if (owed.length > 0) this.denials.set(key, owed);
      else this.denials.delete(key);
    }
  }
}

module.exports = { ExpressRateLimitStore };
