// The RL.* commands as Node.js calls: a limiter spec (token, leaky, window, slidingLog, smooth, quota,
// concurrency) names the algorithm and its parameters, limit() runs one command for one key and
// limitAll() runs RL.ALL for several; both resolve to plain result objects with the module's six reply
// fields (and `granted` with ATMOST). A spec may carry a lockout (LOCKOUT and its options, made by
// lockout()): a denial then locks the key; and its own `cost` (a clause's COST in RL.ALL and in a stored
// policy) or `force`. The concurrency leases have their own calls: acquire(), release(), renew() and
// leases(); the locks too: block(), unblock() and lockinfo(); and reset() (RL.RESET) and throttle()
// (CL.THROTTLE).
//
// The idea: a spec is a plain value (Redis stores no parameters, every call brings its own), so one
// spec serves the command, its read-only form and the HTTP headers (headers.js). `redis` is an ioredis
// client or Cluster (lib/client.js routes each call to its key's node), or anything with call(command,
// ...args) returning a promise of the RESP2 reply. A lease id comes back as ioredis gives a bulk string (a
// string); a Buffer id is passed on as its bytes.
'use strict';

const { send } = require('./client');

const FIELDS = ['allowed', 'limit', 'remaining', 'retryAfterMs', 'resetAfterMs', 'waitMs'];

// LOCKOUT ms [BACKOFF factor] [MAXLOCK ms] [FORGIVE ms], for a spec's `lockout` option: a denied request
// (cost 1 or more) locks the key, and every request is denied while the lock holds. The n-th lock in a
// row lasts ms * backoff^(n-1), at most maxlockMs; the strikes are forgiven forgiveMs after the last lock
// ended. An option left out is the module's default; the module checks the values.
function lockout(ms, { backoff, maxlockMs, forgiveMs } = {}) {
  const args = ['LOCKOUT', ms];
  if (backoff !== undefined) args.push('BACKOFF', backoff);
  if (maxlockMs !== undefined) args.push('MAXLOCK', maxlockMs);
  if (forgiveMs !== undefined) args.push('FORGIVE', forgiveMs);
  return { kind: 'LOCKOUT', ms, backoff, maxlockMs, forgiveMs, args };
}

// A spec's lockout options: none without one. Anything not made by lockout() is refused here, since
// the module could only see its pieces.
function lockoutArgs(lock) {
  if (lock === undefined) return [];
  if (!lock || lock.kind !== 'LOCKOUT') {
    throw new TypeError(`lockout: must be lockout(ms, { backoff, maxlockMs, forgiveMs }), not ${JSON.stringify(lock)}`);
  }
  return lock.args;
}

// A spec's own COST (that limit's cost, whatever the call's: a clause's COST in RL.ALL, a limit's in a
// stored policy) and FORCE. In a single command they add to the call's own: a COST given both ways is the
// server's `COST: given more than once`.
function clauseArgs(cost, force = false) {
  return [...(cost === undefined ? [] : ['COST', cost]), ...(force ? ['FORCE'] : [])];
}

// Plain digits for a number JavaScript would write with an exponent (1e-7, 1e+21).
function expandExponent(text) {
  const match = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/i.exec(text);
  if (!match) return text;
  const [, sign, whole, fraction = '', exp] = match;
  const digits = whole + fraction;
  const point = whole.length + Number(exp);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return sign + digits + '0'.repeat(point - digits.length);
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

// RL.SMOOTH's decimals (permits_per_second, COLDFACTOR) as the plain digits the module reads, never an
// exponent. Nothing is rounded: a value with more than 6 decimals, or out of range, goes as it is and the
// module refuses it, naming the argument. A string is sent as given.
function decimalArg(value) {
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint') return String(value);
  if (typeof value !== 'number') throw new TypeError(`a decimal number (number or string) is needed, not ${value}`);
  return expandExponent(String(value));
}

function token(capacity, refillTokens, refillMs, { interval = false, lockout: lock, cost, force = false } = {}) {
  return { kind: 'TOKEN', capacity, refillTokens, refillMs, interval, lockout: lock, cost, force,
    params: [capacity, refillTokens, refillMs],
    flags: [...(interval ? ['INTERVAL'] : []), ...lockoutArgs(lock), ...clauseArgs(cost, force)] };
}

function leaky(capacity, leakTokens, leakMs, { nodelay = false, lockout: lock, cost, force = false } = {}) {
  return { kind: 'LEAKY', capacity, leakTokens, leakMs, nodelay, lockout: lock, cost, force,
    params: [capacity, leakTokens, leakMs],
    flags: [...(nodelay ? ['NODELAY'] : []), ...lockoutArgs(lock), ...clauseArgs(cost, force)] };
}

// RL.WINDOW: the sliding-window counter by default, a fixed window with fixed, a window of `subwindows`
// epoch-aligned cells (SUBWINDOWS n, 2 to 60; windowMs a multiple of n). Given with fixed both go, and
// the module refuses the pair by name.
function window(limit, windowMs, { fixed = false, subwindows, lockout: lock, cost, force = false } = {}) {
  const mode = fixed ? ['FIXED'] : (subwindows === undefined ? ['SLIDING'] : []);
  const cells = subwindows === undefined ? [] : ['SUBWINDOWS', subwindows];
  return { kind: 'WINDOW', limit, windowMs, fixed, subwindows, lockout: lock, cost, force,
    params: [limit, windowMs], flags: [...mode, ...cells, ...lockoutArgs(lock), ...clauseArgs(cost, force)] };
}

function slidingLog(limit, windowMs, { mingapMs, lockout: lock, cost, force = false } = {}) {
  return { kind: 'SLIDINGLOG', limit, windowMs, mingapMs, lockout: lock, cost, force, params: [limit, windowMs],
    flags: [...(mingapMs === undefined ? [] : ['MINGAP', mingapMs]), ...lockoutArgs(lock), ...clauseArgs(cost, force)] };
}

// RL.SMOOTH: Guava's RateLimiter shared in Redis. permitsPerSecond is a decimal (a number or a string; up
// to 6 decimals). Bursty by default, storing up to maxburstMs worth of permits (the module's default:
// 1000); warming up with warmupMs (and coldfactor, default 3). It reserves: a request is granted and its
// result's waitMs says how long to wait before the work, unless maxwaitMs (Guava's tryAcquire timeout)
// denies it. No REFUND, ATMOST or FORCE (a reservation is granted whole).
function smooth(permitsPerSecond, { warmupMs, maxburstMs, coldfactor, maxwaitMs, lockout: lock, cost } = {}) {
  const flags = [];
  if (warmupMs !== undefined) flags.push('WARMUP', warmupMs);
  if (maxburstMs !== undefined) flags.push('MAXBURST', maxburstMs);
  if (coldfactor !== undefined) flags.push('COLDFACTOR', decimalArg(coldfactor));
  if (maxwaitMs !== undefined) flags.push('MAXWAIT', maxwaitMs);
  return { kind: 'SMOOTH', permitsPerSecond, warmupMs, maxburstMs, coldfactor, maxwaitMs, lockout: lock, cost,
    params: [decimalArg(permitsPerSecond)], flags: [...flags, ...lockoutArgs(lock), ...clauseArgs(cost)] };
}

// RL.QUOTA: at most `limit` per calendar period, 'DAY', 'WEEK' (from Monday) or 'MONTH', in UTC shifted
// by offsetMinutes east (a fixed time zone: 60 is UTC+1). Counted as a fixed window.
function quota(limit, period, { offsetMinutes, lockout: lock, cost, force = false } = {}) {
  return { kind: 'QUOTA', limit, period, offsetMinutes, lockout: lock, cost, force, params: [limit, period],
    flags: [...(offsetMinutes === undefined ? [] : ['OFFSET', offsetMinutes]), ...lockoutArgs(lock),
      ...clauseArgs(cost, force)] };
}

// RL.ACQUIRE as a spec (a CONCURRENCY clause in RL.ALL): at most `limit` units held at once by leases
// that expire leaseMs after they are taken (or renewed) unless released first. leaseId names the lease
// to take, or to renew if it is still held; without it the module makes one.
function concurrency(limit, leaseMs, { leaseId, cost } = {}) {
  return { kind: 'CONCURRENCY', command: 'RL.ACQUIRE', limit, leaseMs, leaseId, cost,
    params: [limit, leaseMs], flags: [...(leaseId === undefined ? [] : ['ID', leaseId]), ...clauseArgs(cost)] };
}

// A six-field reply (RESP2 array) as { allowed, limit, remaining, retryAfterMs, resetAfterMs, waitMs },
// or a seventh: RL.ACQUIRE's `lease` (a bulk string: the id, or null when denied or only reported), or
// ATMOST's `granted` (an integer: the units taken, 0 when denied).
function parseResult(reply) {
  if (!Array.isArray(reply) || (reply.length !== 6 && reply.length !== 7)) {
    throw new Error(`expected 6 or 7 fields, got ${reply}`);
  }
  const out = {};
  FIELDS.forEach((name, i) => { out[name] = Number(reply[i]); });
  out.allowed = out.allowed === 1;
  if (reply.length === 7 && typeof reply[6] === 'number') out.granted = reply[6];
  else if (reply.length === 7) out.lease = reply[6] === null ? null : String(reply[6]);
  return out;
}

// RL.ALL's reply (and RL.CHECK's): allowed, retry, reset, then one six-field reply per limit.
function parseAll(reply) {
  return { allowed: Number(reply[0]) === 1, retryAfterMs: Number(reply[1]), resetAfterMs: Number(reply[2]),
    limits: reply.slice(3).map(parseResult) };
}

// COST n (left out for the default 1), or REFUND n in its place; FORCE after COST (the units are taken even
// past the limit: a debt, for usage that already happened).
function weight(cost, refund, force) {
  if (refund === undefined) return [...(cost === 1 ? [] : ['COST', cost]), ...(force ? ['FORCE'] : [])];
  if (cost !== 1) throw new Error('cost and refund exclude each other: a call takes or gives back');
  if (force) throw new Error('force and refund exclude each other: a forced call takes, a refund gives back');
  return ['REFUND', refund];
}

// WAIT timeout_ms, passed on as given (a read-only form refuses it by name rather than the helper
// dropping it).
const waitArgs = (waitMs) => (waitMs === undefined ? [] : ['WAIT', waitMs]);

// block: true (RL.LEAKY without NODELAY, RL.SMOOTH) has the server hold the reply of an admitted request
// for its wait_ms, so the promise resolves when the work may start; the module refuses it elsewhere, naming
// BLOCK. A read-only form refuses it too, rather than the helper dropping it.
function commandArgs(key, spec, { cost = 1, dryrun = false, readonly = false, refund, force = false, atmost = false,
  waitMs, block: hold = false } = {}) {
  const command = spec.command || `RL.${spec.kind}`;
  const args = [`${command}${readonly ? '_RO' : ''}`, key, ...spec.params, ...spec.flags,
    ...weight(cost, refund, force), ...(atmost ? ['ATMOST'] : []), ...waitArgs(waitMs), ...(hold ? ['BLOCK'] : [])];
  if (dryrun && !readonly) args.push('DRYRUN');
  return args;
}

// A spec as RL.ALL's (and a stored policy's) `LIMIT kind params options` clause.
function clause(spec) {
  if (!spec || !spec.kind || !Array.isArray(spec.params) || !Array.isArray(spec.flags)) {
    throw new TypeError(`not a limiter spec (token(), window(), ...): ${JSON.stringify(spec)}`);
  }
  return ['LIMIT', spec.kind, ...spec.params, ...spec.flags];
}

// RL.ALL (RL.ALL_RO with readonly) for [key, spec] pairs.
function allArgs(limits, { cost = 1, dryrun = false, readonly = false, refund, force = false, waitMs } = {}) {
  const args = [readonly ? 'RL.ALL_RO' : 'RL.ALL', limits.length, ...limits.map(([key]) => key),
    ...weight(cost, refund, force), ...waitArgs(waitMs)];
  if (dryrun && !readonly) args.push('DRYRUN');
  for (const [, spec] of limits) args.push(...clause(spec));
  return args;
}

// One limiter for `key`. dryrun looks without consuming; readonly uses the _RO command (the same
// answer; runs on replicas and for read-only users); refund: n gives back n units a failed request took;
// force: true takes cost even past the limit (a debt: token, leaky with nodelay, window, slidingLog,
// quota); atmost: true (token, window) takes what is there, 1 to cost, and the result has `granted`;
// waitMs (token, window) waits server-side, first in first out, up to that long for the budget; block: true
// (leaky without nodelay, smooth) has the server hold an admitted reply for its waitMs, so the promise
// resolves when the work may start (in Node the wait holds no thread: only this call's promise). A
// concurrency spec runs RL.ACQUIRE (the result has `lease`; acquire() also has WAIT).
async function limit(redis, key, spec, opts = {}) {
  const [command, ...args] = commandArgs(key, spec, opts);
  return parseResult(await send(redis, key, command, args));
}

// Several [key, spec] limits in one atomic RL.ALL: admitted by all, or by none and nothing consumed.
// readonly uses RL.ALL_RO (the DRYRUN answer); refund: n gives n back to every limit in one atomic write,
// for a request RL.ALL admitted that failed downstream; force: true charges cost to every limit even past
// it; waitMs waits server-side until every limit admits (at most that long). A spec's own cost is its
// limit's cost instead of the call's. A concurrency limit's result carries its `lease`.
async function limitAll(redis, limits, opts = {}) {
  const [command, ...args] = allArgs(limits, opts);
  return parseAll(await send(redis, limits.length > 0 ? limits[0][0] : undefined, command, args));
}

// RL.ACQUIRE (RL.ACQUIRE_RO with readonly). waitMs is passed on as given, so that RL.ACQUIRE_RO refuses
// WAIT by name rather than the helper dropping it.
function acquireArgs(key, limit, leaseMs, { cost = 1, leaseId, waitMs, dryrun = false, readonly = false } = {}) {
  return commandArgs(key, concurrency(limit, leaseMs, { leaseId }), { cost, waitMs, dryrun, readonly });
}

// Take a lease of `cost` units on `key` if the unexpired leases leave room within `limit`; it ends
// leaseMs from now unless released or renewed first. leaseId names the lease (one still held is renewed,
// taking no more units); waitMs waits server-side, first in first out, for a release or an expiry to
// make room. dryrun and readonly (RL.ACQUIRE_RO) only report: the answer's lease is null.
async function acquire(redis, key, limit, leaseMs, opts = {}) {
  const [command, ...args] = acquireArgs(key, limit, leaseMs, opts);
  return parseResult(await send(redis, key, command, args));
}

// Give a lease back (RL.RELEASE): true if it was held, false if unknown, released or expired.
async function release(redis, key, leaseId) {
  return Number(await send(redis, key, 'RL.RELEASE', [key, leaseId])) === 1;
}

// Make a held lease end leaseMs from now (RL.RENEW): true if it was held, false if not.
async function renew(redis, key, leaseId, leaseMs) {
  return Number(await send(redis, key, 'RL.RENEW', [key, leaseId, leaseMs])) === 1;
}

// The unexpired leases on `key` (RL.LEASES), oldest first: [{ leaseId, units, ttlMs }].
async function leases(redis, key) {
  const reply = await send(redis, key, 'RL.LEASES', [key]);
  return reply.map(([leaseId, units, ttlMs]) =>
    ({ leaseId: String(leaseId), units: Number(units), ttlMs: Number(ttlMs) }));
}

// Lock `key` for `ms` from now (RL.BLOCK), replacing the end of any lock it has: every limiter command
// is denied on it until then. No strike is counted, and the limiter's state is kept.
async function block(redis, key, ms) {
  await send(redis, key, 'RL.BLOCK', [key, ms]);
}

// End the key's lock and forgive its strikes (RL.UNBLOCK): true if a lock held, else false (the strikes
// are forgiven either way).
async function unblock(redis, key) {
  return Number(await send(redis, key, 'RL.UNBLOCK', [key])) === 1;
}

// RL.LOCKINFO's reply [lock_ms, strikes] as { lockMs, strikes, locked }.
function parseLockinfo(reply) {
  const [lockMs, strikes] = reply.map(Number);
  return { lockMs, strikes, locked: lockMs > 0 };
}

// The key's lock as it stands (RL.LOCKINFO): the ms left on it (0: none holds) and the strikes that count
// now (0 once forgiven); a missing key has none.
async function lockinfo(redis, key) {
  return parseLockinfo(await send(redis, key, 'RL.LOCKINFO', [key]));
}

// Delete limiter keys (RL.RESET), as if each limiter had long been idle (locks included), and resolve to how
// many held a limiter. All or nothing: a key holding anything else is WRONGTYPE and no key is deleted.
// Clients waiting on a deleted key are served at once.
async function reset(redis, ...keys) {
  return Number(await send(redis, keys[0], 'RL.RESET', keys));
}

// CL.THROTTLE's arguments (quantity left out for redis-cell's default, 1).
function throttleArgs(key, maxBurst, countPerPeriod, period, quantity) {
  return ['CL.THROTTLE', key, maxBurst, countPerPeriod, period, ...(quantity === undefined ? [] : [quantity])];
}

// CL.THROTTLE, redis-cell's command on redis-cell's keys: maxBurst + 1 units regained at countPerPeriod per
// `period` seconds (GCRA); quantity 0 looks without writing. Resolves to redis-cell's five fields, { limited,
// limit, remaining, retryAfterS, resetAfterS } (whole seconds; retry -1 when allowed or never), and
// `allowed`. For code moving from redis-cell: new code had better use leaky(..., { nodelay: true }).
async function throttle(redis, key, maxBurst, countPerPeriod, period, quantity) {
  const [command, ...args] = throttleArgs(key, maxBurst, countPerPeriod, period, quantity);
  const [limited, lim, remaining, retryAfterS, resetAfterS] = (await send(redis, key, command, args)).map(Number);
  return { limited: limited === 1, allowed: limited !== 1, limit: lim, remaining, retryAfterS, resetAfterS };
}

module.exports = { token, leaky, window, slidingLog, smooth, quota, concurrency, lockout, limit, limitAll, acquire,
  release, renew, leases, block, unblock, lockinfo, reset, throttle, commandArgs, allArgs, acquireArgs, clause,
  throttleArgs, decimalArg, parseResult, parseAll, parseLockinfo };
