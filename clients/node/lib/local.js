// In-process limiters with the module's semantics, for when Redis cannot be reached (limiter.js's
// onFailure: 'local'): the token bucket (RL.TOKEN, continuous and INTERVAL) and the fixed window
// (RL.WINDOW ... FIXED), answering the same fields (allowed, limit, remaining, retryAfterMs,
// resetAfterMs, waitMs), and RL.ALL's all-or-nothing over several of them.
//
// The idea: the same arithmetic as algorithms/token.c and algorithms/window.c, step for step, so a trace
// of calls gives the very replies the module gives (test/local.test.js replays random traces through
// both). Time comes from an injected clock in whole ms (the module's frozen test clock has ms too); the
// token bucket counts in "scaled tokens" (tokens * refill period in µs) against the instant it was empty,
// whose products pass 2^53, so it runs on BigInt; the fixed window's counts and times stay far below
// 2^53 and use plain numbers. The state of each key lives in a Map kept in least-recently-used order and
// bounded by maxKeys: forgetting a key makes it a new limiter (full), as the module's key expiry does
// once a limiter is idle, but an evicted busy key is forgotten early (more admitted, never fewer).
// Specs with no local form (every other kind, a sliding window, SUBWINDOWS, LOCKOUT, FORCE) are refused.
'use strict';

const MAX_COUNT = 1000000000000; // RL_MAX_COUNT: capacity, refill_tokens, limit, COST
const MAX_PERIOD_MS = 1000000000000; // RL_MAX_PERIOD_MS: refill_ms, window_ms
const MAX_IDLE_US = 1000000000000000n; // RL_MAX_IDLE_MS in µs: the longest refill of a whole bucket
const MAX_TIME_MS = 2 ** 46; // the module's clock stops there (year 4199)

// Why a spec cannot be run locally, or null when it can.
function localFormError(spec) {
  if (!spec || typeof spec !== 'object') return 'not a limiter spec';
  const kind = spec.kind === 'WINDOW' && !spec.fixed ? 'a sliding window' : spec.kind;
  if (spec.kind !== 'TOKEN' && !(spec.kind === 'WINDOW' && spec.fixed)) {
    return `${kind} has no local form (only token and fixed window do)`;
  }
  if (spec.subwindows !== undefined) return 'SUBWINDOWS has no local form';
  if (spec.lockout !== undefined) return 'LOCKOUT has no local form';
  if (spec.force) return 'FORCE has no local form';
  return null;
}

function checkInteger(name, value, min, max) {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new RangeError(`${name}: must be an integer between ${min} and ${max}, not ${value}`);
  }
}

// The module's checks of a spec's numbers (module/syntax.c's ranges and token.c's validate), so that a
// spec Redis would refuse is refused here too, naming the argument.
function validateLocal(spec) {
  const reason = localFormError(spec);
  if (reason) throw new TypeError(reason);
  if (spec.cost !== undefined) checkInteger('COST', spec.cost, 0, MAX_COUNT);
  if (spec.kind === 'WINDOW') {
    checkInteger('limit', spec.limit, 1, MAX_COUNT);
    checkInteger('window_ms', spec.windowMs, 1, MAX_PERIOD_MS);
    return;
  }
  checkInteger('capacity', spec.capacity, 1, MAX_COUNT);
  checkInteger('refill_tokens', spec.refillTokens, 1, MAX_COUNT);
  checkInteger('refill_ms', spec.refillMs, 1, MAX_PERIOD_MS);
  if (BigInt(spec.capacity) * BigInt(spec.refillMs) * 1000n > MAX_IDLE_US * BigInt(spec.refillTokens)) {
    throw new RangeError('capacity: capacity / refill_tokens * refill_ms must not exceed 1000000000000 ms');
  }
}

const ceilDiv = (a, b) => (a > 0n ? (a + b - 1n) / b : a / b); // b > 0; BigInt division truncates
const floorDiv = (a, b) => (a >= 0n ? a / b : -((-a + b - 1n) / b));
const usToMsCeil = (us) => (us <= 0n ? 0 : Number(ceilDiv(us, 1000n)));

// rl_reply_times: retry -1 when admitted or never; both in whole ms, rounded up.
function reply(allowed, limit, remaining, retryUs, idleUs) {
  return { allowed, limit, remaining, retryAfterMs: allowed || retryUs < 0n ? -1 : usToMsCeil(retryUs),
    resetAfterMs: usToMsCeil(idleUs < 0n ? 0n : idleUs), waitMs: 0 };
}

// --- the token bucket, continuous refill (token.c's continuous_*) -----------------------------------
// State: E, the instant the bucket was empty in units of 1/R µs; scaled(t) = t*R - E, capped at C*P.

function continuousDecide(spec, state, nowUs, cost) {
  const C = BigInt(spec.capacity);
  const R = BigInt(spec.refillTokens);
  const P = BigInt(spec.refillMs) * 1000n;
  const full = C * P;
  let scaled = state ? nowUs * R - state.e : full;
  if (scaled > full) scaled = full;
  const need = BigInt(cost) * P;
  const allowed = BigInt(cost) <= C && scaled >= need;
  if (allowed) scaled -= need;
  const remaining = scaled > 0n ? Number(floorDiv(scaled, P)) : 0;
  const retryUs = !allowed && BigInt(cost) <= C ? ceilDiv(need - scaled, R) : -1n;
  const idleUs = ceilDiv(full - scaled, R);
  return { result: reply(allowed, spec.capacity, remaining, retryUs, idleUs),
    state: { mode: 'continuous', e: nowUs * R - scaled } };
}

// --- the token bucket, INTERVAL refill (token.c's interval_*) ---------------------------------------
// State: the anchor (µs) and the whole tokens; R tokens arrive at each full P since the anchor.

function intervalRefill(C, R, P, s, nowUs) {
  if (s.tokens >= C) return { anchor: s.anchor, tokens: C };
  if (nowUs <= s.anchor) return s;
  const periods = (nowUs - s.anchor) / P;
  const missing = C - s.tokens;
  if (periods >= (missing + R - 1n) / R) return { anchor: s.anchor, tokens: C };
  return { anchor: s.anchor + periods * P, tokens: s.tokens + periods * R };
}

function intervalTimeTo(R, P, s, want, nowUs) {
  if (s.tokens >= want) return 0n;
  const chunks = (want - s.tokens + R - 1n) / R;
  return s.anchor + chunks * P - nowUs;
}

function intervalDecide(spec, state, nowUs, cost) {
  const C = BigInt(spec.capacity);
  const R = BigInt(spec.refillTokens);
  const P = BigInt(spec.refillMs) * 1000n;
  const want = BigInt(cost);
  let s = intervalRefill(C, R, P, state ? { anchor: state.anchor, tokens: state.tokens } : { anchor: nowUs, tokens: C }, nowUs);
  const allowed = want <= s.tokens;
  if (allowed && want > 0n) s = { anchor: s.tokens === C ? nowUs : s.anchor, tokens: s.tokens - want };
  const retryUs = !allowed && want <= C ? intervalTimeTo(R, P, s, want, nowUs) : -1n;
  const idleUs = intervalTimeTo(R, P, s, C, nowUs);
  return { result: reply(allowed, spec.capacity, Number(s.tokens), retryUs, idleUs),
    state: { mode: 'interval', anchor: s.anchor, tokens: s.tokens } };
}

// A key switching modes keeps the whole tokens it holds (token.c's token_decide).
function tokenDecide(spec, state, nowUs, cost) {
  const mode = spec.interval ? 'interval' : 'continuous';
  if (state && state.mode !== mode) {
    const C = BigInt(spec.capacity);
    const R = BigInt(spec.refillTokens);
    const P = BigInt(spec.refillMs) * 1000n;
    let tokens;
    if (state.mode === 'interval') {
      tokens = intervalRefill(C, R, P, state, nowUs).tokens;
    } else {
      let scaled = nowUs * R - state.e;
      if (scaled > C * P) scaled = C * P;
      tokens = scaled > 0n ? scaled / P : 0n;
    }
    state = mode === 'interval' ? { mode, anchor: nowUs, tokens } : { mode, e: nowUs * R - tokens * P };
  }
  return (spec.interval ? intervalDecide : continuousDecide)(spec, state, nowUs, cost);
}

// --- the fixed window (window.c's window_view_at and fixed_decide) ----------------------------------
// State: the window's start (ms, a multiple of window_ms) and its count; a later window starts at 0.

function fixedDecide(spec, state, nowUs, cost) {
  const W = spec.windowMs;
  const tMs = Number(nowUs / 1000n);
  let start = tMs - (tMs % W);
  let curr = 0;
  if (state && state.mode === 'fixed') {
    const storedStart = state.start - (state.start % W);
    if (storedStart > start) start = storedStart; // clock behind the state: decided at its window
    if (start === storedStart) curr = state.count;
  }
  const allowed = curr + cost <= spec.limit;
  if (allowed) curr += cost;
  const remaining = curr < spec.limit ? spec.limit - curr : 0;
  const endUs = BigInt(start + W) * 1000n;
  const retryUs = !allowed && cost <= spec.limit ? endUs - nowUs : -1n;
  const idleUs = curr > 0 ? endUs - nowUs : 0n;
  return { result: reply(allowed, spec.limit, remaining, retryUs, idleUs), state: { mode: 'fixed', start, count: curr } };
}

function decide(spec, state, nowUs, cost) {
  return spec.kind === 'TOKEN' ? tokenDecide(spec, state, nowUs, cost) : fixedDecide(spec, state, nowUs, cost);
}

// --- the limiter --------------------------------------------------------------------------------------

function createLocalLimiter({ maxKeys = 10000, now = Date.now } = {}) {
  checkInteger('maxKeys', maxKeys, 1, Number.MAX_SAFE_INTEGER);
  if (typeof now !== 'function') throw new TypeError('now: must be a function returning the time in integer ms');
  const states = new Map(); // key -> state, least recently used first

  function nowUs() {
    const ms = now();
    if (!Number.isSafeInteger(ms)) throw new TypeError(`now: must return an integer number of ms, not ${ms}`);
    return BigInt(Math.min(Math.max(ms, 0), MAX_TIME_MS - 1)) * 1000n;
  }

  function read(key) {
    const state = states.get(key);
    if (state !== undefined) { // most recently used goes last
      states.delete(key);
      states.set(key, state);
    }
    return state;
  }

  function write(key, state) {
    states.delete(key);
    states.set(key, state);
    while (states.size > maxKeys) states.delete(states.keys().next().value);
  }

  // One limiter for `key`, as RL.TOKEN / RL.WINDOW FIXED would answer. A spec's own cost is the cost
  // (with a call cost too, the module's "COST: given more than once").
  function limit(key, spec, { cost = 1, dryrun = false } = {}) {
    validateLocal(spec);
    if (spec.cost !== undefined && cost !== 1) throw new Error('COST: given more than once');
    const units = spec.cost === undefined ? cost : spec.cost;
    checkInteger('COST', units, 0, MAX_COUNT);
    const out = decide(spec, read(key), nowUs(), units);
    if (!dryrun) write(key, out.state);
    return out.result;
  }

  // RL.ALL over [key, spec] pairs: every limit decided at one instant; admitted by all and each written,
  // or by none and nothing written, each limit then described as it stands (its cost-0 look when it alone
  // would admit; its own denial otherwise) and the retry the largest of the denials' (-1 if one never can).
  function limitAll(limits, { cost = 1, dryrun = false } = {}) {
    if (!Array.isArray(limits) || limits.length === 0) throw new TypeError('limits: at least one [key, spec]');
    limits.forEach(([, spec]) => validateLocal(spec));
    checkInteger('COST', cost, 0, MAX_COUNT);
    const t = nowUs();
    const costOf = (spec) => (spec.cost === undefined ? cost : spec.cost);
    const looked = limits.map(([key, spec]) => decide(spec, states.get(key), t, costOf(spec)));
    const allowed = looked.every((o) => o.result.allowed);
    let results = looked.map((o) => o.result);
    if (allowed && !dryrun) limits.forEach(([key], i) => write(key, looked[i].state));
    else limits.forEach(([key]) => read(key)); // (touched: recently used)
    if (!allowed) {
      results = limits.map(([key, spec], i) => (looked[i].result.allowed
        ? { ...decide(spec, states.get(key), t, 0).result, allowed: true, retryAfterMs: -1 } : looked[i].result));
    }
    let retryAfterMs = -1;
    if (!allowed) {
      const denied = results.filter((r) => !r.allowed);
      retryAfterMs = denied.some((r) => r.retryAfterMs < 0) ? -1 : Math.max(...denied.map((r) => r.retryAfterMs));
    }
    const resetAfterMs = Math.max(0, ...results.map((r) => r.resetAfterMs));
    return { allowed, retryAfterMs, resetAfterMs, limits: results };
  }

  return { limit, limitAll, get size() { return states.size; }, clear: () => states.clear() };
}

module.exports = { createLocalLimiter, localFormError, validateLocal };
