// The in-process limiters (lib/local.js) against the module: the same random traces of calls (specs,
// costs, dry runs, clock steps) go through both, the module's clock frozen and moved by RL.CLOCK and the
// local limiter's by its injected clock, and every field of every result must be the same. Then what the
// local limiter adds: its bound on keys, and the specs it refuses by name.
'use strict';

const { test, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const { token, window, slidingLog, lockout, limit, limitAll } = require('..');
const { createLocalLimiter, localFormError } = require('../lib/local');
const { T0, client, fresh } = require('./support');

let redis;
before(() => { redis = client(); });
after(async () => { await redis.call('RL.CLOCK', 'REAL'); redis.disconnect(); });
beforeEach(() => fresh(redis));

// A small seeded generator (mulberry32), so that a failing trace can be replayed from its seed.
function random(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = (xs) => xs[int(0, xs.length - 1)];
  return { next, int, pick };
}

// A spec with numbers that exercise the arithmetic: small buckets, odd rates, and huge ones whose
// products pass 2^53 (still within the module's bounds: capacity * refill_ms <= 10^12 * refill_tokens).
function randomSpec(rnd) {
  const kind = rnd.pick(['token', 'interval', 'fixed']);
  if (kind === 'fixed') return window(rnd.int(1, 20), rnd.pick([1, 7, 100, 1000, 60000, rnd.int(1, 5000)]), { fixed: true });
  const huge = rnd.next() < 0.25;
  const refillTokens = huge ? rnd.int(1, 1e9) * 1000 : rnd.int(1, 7);
  const refillMs = huge ? rnd.int(1, 1e6) : rnd.pick([1, 3, 250, 1000, rnd.int(1, 3000)]);
  const most = Math.floor((1e12 * refillTokens) / refillMs);
  const capacity = Math.max(1, Math.min(huge ? rnd.int(1, 1e12) : rnd.int(1, 20), most));
  return token(capacity, refillTokens, refillMs, { interval: kind === 'interval' });
}

const capacityOf = (spec) => (spec.kind === 'TOKEN' ? spec.capacity : spec.limit);

function randomCost(rnd, spec) {
  const c = capacityOf(spec);
  const r = rnd.next();
  if (r < 0.1) return 0;
  if (r < 0.6) return 1;
  if (r < 0.9) return rnd.int(1, Math.min(c, 1e6));
  return c + rnd.int(0, 2); // at and past the capacity: never admitted
}

function randomStep(rnd, spec) {
  const unit = spec.kind === 'TOKEN' ? spec.refillMs : spec.windowMs;
  const r = rnd.next();
  if (r < 0.3) return 0;
  if (r < 0.7) return rnd.int(1, 50);
  if (r < 0.95) return rnd.int(0, Math.min(unit * 3, 1e7));
  return rnd.int(0, 1e9); // far ahead: full again, a new window
}

// A trace of n calls on a few keys, each call on both sides; `mixed` switches a bucket between INTERVAL
// and continuous refill on the same key (the module keeps its whole tokens).
async function replay(seed, n) {
  const rnd = random(seed);
  let clockMs = T0 + 15000;
  await redis.call('RL.CLOCK', 'SET', clockMs);
  const local = createLocalLimiter({ now: () => clockMs });
  const specs = [randomSpec(rnd), randomSpec(rnd)];
  const mixed = specs[0].kind === 'TOKEN' && rnd.next() < 0.3;
  for (let i = 0; i < n; i++) {
    const step = randomStep(rnd, specs[0]);
    if (step > 0) await redis.call('RL.CLOCK', 'ADVANCE', step);
    clockMs += step;
    const which = rnd.int(0, 1);
    let spec = specs[which];
    if (mixed && which === 0 && rnd.next() < 0.3) {
      spec = token(spec.capacity, spec.refillTokens, spec.refillMs, { interval: !spec.interval });
    }
    const opts = { cost: randomCost(rnd, spec), dryrun: rnd.next() < 0.1 };
    const key = `t${seed}:${which}`;
    const remote = await limit(redis, key, spec, opts);
    const here = local.limit(key, spec, opts);
    assert.deepEqual(here, remote, `seed ${seed}, call ${i}: ${key} ${JSON.stringify(spec.params.concat(spec.flags))} ${JSON.stringify(opts)}`);
  }
}

// RL_LOCAL_SEEDS=n replays more traces (by hand, to search further).
const SEEDS = Number(process.env.RL_LOCAL_SEEDS || 60);

test('random traces: every field of every result is the module\'s', async () => {
  for (let seed = 1; seed <= SEEDS; seed++) await replay(seed, 40);
});

test('random traces of RL.ALL: all or nothing, each limit described as the module describes it', async () => {
  for (let seed = 100000; seed < 100000 + SEEDS / 2; seed++) {
    const rnd = random(seed);
    let clockMs = T0 + 15000;
    await redis.call('RL.CLOCK', 'SET', clockMs);
    const local = createLocalLimiter({ now: () => clockMs });
    const limits = [[`{a${seed}}:1`, randomSpec(rnd)], [`{a${seed}}:2`, randomSpec(rnd)]];
    for (let i = 0; i < 30; i++) {
      const step = randomStep(rnd, limits[0][1]);
      if (step > 0) await redis.call('RL.CLOCK', 'ADVANCE', step);
      clockMs += step;
      const opts = { cost: randomCost(rnd, limits[rnd.int(0, 1)][1]), dryrun: rnd.next() < 0.1 };
      const remote = await limitAll(redis, limits, opts);
      assert.deepEqual(local.limitAll(limits, opts), remote, `seed ${seed}, call ${i}: ${JSON.stringify(opts)}`);
    }
  }
});

test('a spec\'s own cost, as the module takes it', async () => {
  let clockMs = T0 + 15000;
  const local = createLocalLimiter({ now: () => clockMs });
  const spec = token(10, 1, 1000, { cost: 4 });
  for (let i = 0; i < 4; i++) {
    assert.deepEqual(local.limit('own', spec), await limit(redis, 'own', spec));
    clockMs += 700;
    await redis.call('RL.CLOCK', 'ADVANCE', 700);
  }
  assert.throws(() => local.limit('own', spec, { cost: 2 }), /^Error: COST: given more than once$/);
});

test('bounded: the least recently used key is forgotten (a new, full limiter)', () => {
  const clockMs = T0;
  const local = createLocalLimiter({ maxKeys: 2, now: () => clockMs });
  const spec = window(1, 60000, { fixed: true });
  assert.equal(local.limit('a', spec).allowed, true);
  assert.equal(local.limit('b', spec).allowed, true);
  assert.equal(local.limit('a', spec).allowed, false); // a is now the most recent
  assert.equal(local.limit('c', spec).allowed, true); // evicts b
  assert.equal(local.size, 2);
  assert.equal(local.limit('a', spec).allowed, false);
  assert.equal(local.limit('b', spec).allowed, true); // forgotten, new again
});

test('specs without a local form, and bad numbers, are refused by name', () => {
  assert.equal(localFormError(token(1, 1, 1)), null);
  assert.equal(localFormError(window(1, 1, { fixed: true })), null);
  assert.match(localFormError(window(1, 1)), /a sliding window has no local form/);
  assert.match(localFormError(slidingLog(1, 1)), /SLIDINGLOG has no local form/);
  assert.match(localFormError(token(1, 1, 1, { lockout: lockout(1000) })), /LOCKOUT/);
  assert.match(localFormError(token(1, 1, 1, { force: true })), /FORCE/);
  const local = createLocalLimiter({ now: () => T0 });
  assert.throws(() => local.limit('k', token(0, 1, 1)), /^RangeError: capacity: must be an integer between 1 and/);
  assert.throws(() => local.limit('k', token(1, 1, 1.5)), /^RangeError: refill_ms: /);
  assert.throws(() => local.limit('k', window(5, 0, { fixed: true })), /^RangeError: window_ms: /);
  assert.throws(() => local.limit('k', token(1e12, 1, 1e12)), /^RangeError: capacity: capacity \/ refill_tokens/);
  assert.throws(() => local.limit('k', token(5, 1, 1), { cost: -1 }), /^RangeError: COST: /);
  assert.throws(() => createLocalLimiter({ now: () => 1.5 }).limit('k', token(5, 1, 1)), /^TypeError: now: /);
  assert.equal(local.size, 0); // nothing was recorded by the refused calls
});
