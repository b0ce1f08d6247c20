// rate-limiter-flexible on the module: RateLimiterModule has the API of the library's RateLimiterRedis
// (consume, penalty, reward, block, get, set, delete; the options points, duration, blockDuration and
// keyPrefix) and answers its RateLimiterRes (remainingPoints, msBeforeNext, consumedPoints,
// isFirstInDuration), so that an application changes the line that makes its limiter and nothing else.
//
// The idea: the library's limiter is a counter per key that lives `duration` seconds, which is a fixed
// window; the module has that window as one atomic command, RL.WINDOW FIXED, so each method is one module
// call and every field of the result comes from the module's reply:
//   consume  RL.WINDOW key points duration_ms FIXED COST n [LOCKOUT blockDuration_ms FORGIVE 1]
//   penalty  the same with FORCE (counted even past the limit: a debt)
//   reward   the same with REFUND n (given back, never below 0)
//   get      RL.WINDOW_RO ... COST 0 (looks, writes nothing)
//   block    RL.BLOCK key ms (the key's count is kept through the block)
//   set      RL.RESET then RL.WINDOW ... COST n FORCE, in one script (atomic): n counted in the current window
//   delete   RL.RESET key
// remainingPoints is the reply's `remaining`, consumedPoints is points - remainingPoints (what the window
// holds as used, as far as the reply says: points while blocked or in debt), msBeforeNext is
// `reset_after_ms` when admitted and `retry_after_ms` when denied. The windows are the module's: aligned
// to the Unix epoch, and a denied request is not counted. Every difference from RateLimiterRedis is listed,
// with numbers, in docs/migrating.md ("rate-limiter-flexible").
'use strict';

const { send } = require('../client');

// The module's largest count and period (a window's limit, a cost, a window or a lock in ms).
const LARGEST = 1e12;
// block(key, 0) blocks "forever" in the library; the module's longest lock is 10^12 ms (31.7 years).
const FOREVER_MS = LARGEST;
const DEFAULT_KEY_PREFIX = 'rlflxm';

// The library's RateLimiterRes when the application has rate-limiter-flexible installed (so that code
// testing `instanceof RateLimiterRes` with the library's class keeps working), else a class with the same
// four fields and the same JSON.
class ModuleRateLimiterRes {
  constructor(remainingPoints = 0, msBeforeNext = 0, consumedPoints = 0, isFirstInDuration = false) {
    this.remainingPoints = remainingPoints;
    this.msBeforeNext = msBeforeNext;
    this.consumedPoints = consumedPoints;
    this.isFirstInDuration = Boolean(isFirstInDuration);
  }

  toJSON() {
    return { remainingPoints: this.remainingPoints, msBeforeNext: this.msBeforeNext,
      consumedPoints: this.consumedPoints, isFirstInDuration: this.isFirstInDuration };
  }

  toString() {
    return JSON.stringify(this.toJSON());
  }
}

function libraryResClass() {
  try {
    return require('rate-limiter-flexible').RateLimiterRes;
  } catch (err) {
    if (err && err.code === 'MODULE_NOT_FOUND') return ModuleRateLimiterRes;
    throw err;
  }
}

const RateLimiterRes = libraryResClass();

// The library's options this class does not have: refused by name rather than ignored, since ignoring
// one would change what the application limits without a word.
const UNSUPPORTED_OPTIONS = {
  execEvenly: 'spreads admissions by delaying them in this process; the module shapes server-side with RL.LEAKY',
  execEvenlyMinDelayMs: 'belongs to execEvenly, which RateLimiterModule does not have',
  blockOnConsumed: 'blocks at another count than points; RateLimiterModule blocks on the first rejection',
  inMemoryBlockOnConsumed: 'keeps blocks in this process; the module keeps them in Redis, for every process',
  inMemoryBlockDuration: 'keeps blocks in this process; the module keeps them in Redis, for every process',
  insuranceLimiter: 'has no counterpart here; the package\'s createLimiter has onFailure: \'local\'',
  customIncrTtlLuaScript: 'replaces the library\'s script; RateLimiterModule runs module commands',
  rejectIfRedisNotReady: 'checks the connection first; give ioredis enableOfflineQueue: false instead',
};
const KNOWN_OPTIONS = new Set(['storeClient', 'points', 'duration', 'blockDuration', 'keyPrefix', 'storeType',
  'useRedisPackage', 'useRedis3AndLowerPackage']);

function checkOptions(opts) {
  for (const [name, value] of Object.entries(opts)) {
    if (name in UNSUPPORTED_OPTIONS) {
      if (value === undefined || value === false || value === null || value === 0) continue;
      throw new TypeError(`${name}: not supported by RateLimiterModule (${UNSUPPORTED_OPTIONS[name]})`);
    }
    if (!KNOWN_OPTIONS.has(name)) throw new TypeError(`${name}: not an option of RateLimiterModule`);
  }
}

// A whole number of units from 0 (or 1) to 10^12, given as a number or a string of digits (as the
// library takes them).
function units(name, value, least) {
  const number = typeof value === 'string' && /^[0-9]+$/.test(value) ? Number(value) : value;
  if (!Number.isInteger(number) || number < least || number > LARGEST) {
    throw new TypeError(`${name}: must be an integer between ${least} and ${LARGEST}, not ${JSON.stringify(value)}`);
  }
  return number;
}

// Seconds, as the library takes them, to whole milliseconds from 1 to 10^12.
function secondsToMs(name, seconds) {
  const ms = typeof seconds === 'number' ? Math.round(seconds * 1000) : NaN;
  if (!Number.isFinite(seconds) || Math.abs(ms - seconds * 1000) > 1e-6 || ms < 1 || ms > LARGEST) {
    throw new TypeError(`${name}: must be a number of seconds, a whole number of ms from 1 to ${LARGEST}, `
      + `not ${JSON.stringify(seconds)}`);
  }
  return ms;
}

// The per-call options the library takes: customDuration changes a key's window, which the module's
// epoch-aligned windows cannot do for one call.
function checkCallOptions(options) {
  if (options === undefined || options === null) return;
  if (typeof options !== 'object') throw new TypeError(`options: must be an object, not ${JSON.stringify(options)}`);
  if (options.customDuration !== undefined) {
    throw new TypeError('customDuration: not supported by RateLimiterModule (every call of a key uses duration)');
  }
}

// The reply's six fields as numbers.
function fields(reply) {
  const [allowed, limit, remaining, retryAfterMs, resetAfterMs] = reply.map(Number);
  return { allowed: allowed === 1, limit, remaining, retryAfterMs, resetAfterMs };
}

// One call's RateLimiterRes: `counted` is the points this call counted (0 for a look, a reward or a set,
// which the library never calls first either), so isFirstInDuration says the window holds exactly them.
function resultOf(reply, counted) {
  const { allowed, limit, remaining, retryAfterMs, resetAfterMs } = fields(reply);
  const consumed = limit - remaining;
  return new RateLimiterRes(remaining, allowed ? resetAfterMs : retryAfterMs, consumed,
    allowed && counted > 0 && consumed === counted);
}

// set's one atomic step: forget the key (its count and any block), then count what is given in the
// current window.
const SET_SCRIPT = "redis.call('RL.RESET', KEYS[1]) return redis.call('RL.WINDOW', KEYS[1], unpack(ARGV))";

class RateLimiterModule {
  constructor(opts = {}) {
    if (!opts || typeof opts !== 'object') throw new TypeError('options: must be an object');
    checkOptions(opts);
    const client = opts.storeClient;
    if (!client || typeof client.call !== 'function') {
      throw new TypeError('storeClient: must be an ioredis Redis or Cluster (a client with call())');
    }
    this.client = client;
    this.points = units('points', opts.points, 1);
    this.duration = opts.duration;
    this.msDuration = secondsToMs('duration', opts.duration);
    this.blockDuration = opts.blockDuration === undefined ? 0 : opts.blockDuration;
    this.msBlockDuration = this.blockDuration === 0 ? 0 : secondsToMs('blockDuration', this.blockDuration);
    const prefix = opts.keyPrefix === undefined ? DEFAULT_KEY_PREFIX : opts.keyPrefix;
    if (typeof prefix !== 'string') throw new TypeError(`keyPrefix: must be a string, not ${JSON.stringify(prefix)}`);
    this.keyPrefix = prefix;
  }

  // The Redis key of a client key, as the library makes it.
  getKey(key) {
    return this.keyPrefix.length > 0 ? `${this.keyPrefix}:${key}` : key;
  }

  parseKey(rlKey) {
    return this.keyPrefix.length > 0 ? rlKey.substring(this.keyPrefix.length + 1) : rlKey;
  }

  // RL.WINDOW's words for this limiter on a key, then the call's own.
  windowArgs(rlKey, more) {
    return [rlKey, this.points, this.msDuration, 'FIXED', ...more];
  }

  async window(command, key, more) {
    const rlKey = this.getKey(key);
    return send(this.client, rlKey, command, this.windowArgs(rlKey, more));
  }

  // Counts `points` if they fit: resolves with the result, rejects with it when they do not (or while the
  // key is blocked). With blockDuration, a rejection blocks the key for blockDuration.
  async consume(key, points = 1, options = {}) {
    const cost = units('points', points, 0);
    checkCallOptions(options);
    const lock = this.msBlockDuration > 0 ? ['LOCKOUT', this.msBlockDuration, 'FORGIVE', 1] : [];
    const reply = await this.window('RL.WINDOW', key, ['COST', cost, ...lock]);
    const res = resultOf(reply, cost);
    if (!fields(reply).allowed) throw res;
    return res;
  }

  // Counts `points` whatever the count: past points the window is in debt (remainingPoints 0) until it ends.
  async penalty(key, points = 1, options = {}) {
    const cost = units('points', points, 0);
    checkCallOptions(options);
    return resultOf(await this.window('RL.WINDOW', key, ['COST', cost, 'FORCE']), cost);
  }

  // Gives back up to `points` of the current window's count, never below 0.
  async reward(key, points = 1, options = {}) {
    const refund = units('points', points, 0);
    checkCallOptions(options);
    return resultOf(await this.window('RL.WINDOW', key, ['REFUND', refund]), 0);
  }

  // The key's state, or null when the window counts nothing and the key is not blocked.
  async get(key, options = {}) {
    checkCallOptions(options);
    const reply = await this.window('RL.WINDOW_RO', key, ['COST', 0]);
    const { allowed, limit, remaining } = fields(reply);
    if (allowed && remaining === limit) return null;
    return resultOf(reply, 0);
  }

  // Blocks the key for secDuration seconds (0: for the module's longest lock, 10^12 ms), keeping its count.
  async block(key, secDuration, options = {}) {
    checkCallOptions(options);
    const ms = secDuration === 0 ? FOREVER_MS : secondsToMs('secDuration', secDuration);
    const rlKey = this.getKey(key);
    await send(this.client, rlKey, 'RL.BLOCK', [rlKey, ms]);
    return new RateLimiterRes(0, secDuration === 0 ? -1 : ms, this.points, false);
  }

  // Makes the key's count `points` in the current window (its block, if any, is forgotten). The count
  // lasts until the window ends, so secDuration may only be left out, negative (the library's "duration")
  // or equal to duration.
  async set(key, points, secDuration, options = {}) {
    const count = units('points', points, 0);
    checkCallOptions(options);
    if (secDuration !== undefined && !(secDuration < 0) && secDuration !== this.duration) {
      throw new TypeError(`secDuration: RateLimiterModule sets a count until the current window ends: leave it out `
        + `or give duration (${this.duration}), not ${JSON.stringify(secDuration)}`);
    }
    const rlKey = this.getKey(key);
    const reply = await this.client.eval(SET_SCRIPT, 1, rlKey, this.points, this.msDuration, 'FIXED',
      'COST', count, 'FORCE');
    return resultOf(reply, 0);
  }

  // Forgets the key (its count and any block): true if it held something.
  async delete(key, options = {}) {
    checkCallOptions(options);
    const rlKey = this.getKey(key);
    return Number(await send(this.client, rlKey, 'RL.RESET', [rlKey])) > 0;
  }
}

module.exports = { RateLimiterModule, RateLimiterRes };
