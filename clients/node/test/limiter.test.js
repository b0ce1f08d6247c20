// createLimiter (lib/limiter.js) on the shared test server: where each decision comes from, the cache of
// denials (what it answers, for how long, for which costs, its bound, and the Redis calls it saves,
// counted by the server's INFO commandstats), and its options refused by name. The limiter's own clock is
// injected and moved with the module's frozen one, so the cache's times are exact too. (Failures, the
// timeout and the local limiter taking over are in test-resilience/, against a server those tests stop.)
'use strict';

const { test, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const { token, window, slidingLog, smooth, concurrency, createLimiter } = require('..');
const { T0, client, fresh } = require('./support');

let redis;
let clockMs;
before(() => { redis = client(); });
after(async () => { await redis.call('RL.CLOCK', 'REAL'); redis.disconnect(); });
beforeEach(async () => {
  await fresh(redis);
  await redis.config('RESETSTAT');
  clockMs = T0 + 15000;
});

async function advance(ms) {
  clockMs += ms;
  await redis.call('RL.CLOCK', 'ADVANCE', ms);
}

// How many times the server ran `command` since the last RESETSTAT.
async function calls(command) {
  const m = new RegExp(`^cmdstat_${command.toLowerCase()}:calls=(\\d+)`, 'm').exec(await redis.info('commandstats'));
  return m ? Number(m[1]) : 0;
}

const limiterOf = (policies, opts = {}) => createLimiter({ redis, policies, now: () => clockMs, ...opts });

test('decisions from Redis, then from the cache of denials until the retry has passed', async () => {
  const limiter = limiterOf([{ name: 'burst', spec: token(2, 1, 1000) }]);
  assert.equal((await limiter.check('alice')).source, 'redis');
  assert.equal((await limiter.check('alice')).allowed, true);
  const denied = await limiter.check('alice');
  assert.deepEqual([denied.allowed, denied.source, denied.retryAfterMs], [false, 'redis', 1000]);
  assert.equal(await calls('rl.token'), 3);
  const cached = await limiter.check('alice');
  assert.deepEqual([cached.allowed, cached.source, cached.retryAfterMs], [false, 'cache', 1000]);
  assert.deepEqual(cached.items, denied.items);
  await advance(400); // counted down: the retry and each limit's times
  const later = await limiter.check('alice');
  assert.deepEqual([later.source, later.retryAfterMs], ['cache', 600]);
  const [[name, spec, res]] = later.items;
  assert.deepEqual([name, spec, res.retryAfterMs, res.resetAfterMs, res.remaining],
    ['burst', limiter.policies[0].spec, 600, denied.items[0][2].resetAfterMs - 400, 0]);
  assert.equal(await calls('rl.token'), 3); // no round trip for the cached denials
  assert.equal((await limiter.check('bob')).source, 'redis'); // another client key: its own
  await advance(600);
  const again = await limiter.check('alice');
  assert.deepEqual([again.allowed, again.source], [true, 'redis']);
  assert.deepEqual(limiter.stats, { calls: 7, redis: 5, local: 0, cacheHits: 2, failures: 0, timeouts: 0,
    toLocal: 0, toRedis: 0 });
});

test('a denial of cost c covers costs >= c only; a dry run is answered and cached like any call', async () => {
  const limiter = limiterOf([{ name: 'w', spec: window(5, 60000, { fixed: true }) }]);
  assert.equal((await limiter.check('carol', { cost: 3 })).allowed, true);
  const big = await limiter.check('carol', { cost: 4 });
  assert.deepEqual([big.allowed, big.source, big.retryAfterMs], [false, 'redis', 45000]);
  assert.equal((await limiter.check('carol', { cost: 9 })).source, 'cache');
  const small = await limiter.check('carol', { cost: 2 }); // fits: Redis admits it
  assert.deepEqual([small.allowed, small.source], [true, 'redis']);
  const look = await limiter.check('dave', { cost: 6, dryrun: true }); // above the limit: never (-1), not cached
  assert.deepEqual([look.allowed, look.retryAfterMs, look.source], [false, -1, 'redis']);
  assert.equal((await limiter.check('dave', { cost: 6, dryrun: true })).source, 'redis');
  await limiter.check('erin', { cost: 5 });
  const dry = await limiter.check('erin', { dryrun: true }); // a look that denies: the same truth as a call
  assert.deepEqual([dry.allowed, dry.source], [false, 'redis']);
  assert.equal((await limiter.check('erin')).source, 'cache');
  assert.equal(await calls('rl.window'), 7);
});

test('a slidingLog policy is never answered from the cache: the module logs denied attempts too', async () => {
  const limiter = limiterOf([{ name: 'log', spec: slidingLog(1, 1000) }]);
  assert.equal((await limiter.check('frank')).allowed, true);
  for (let i = 0; i < 3; i++) {
    const denied = await limiter.check('frank');
    assert.deepEqual([denied.allowed, denied.source], [false, 'redis']);
  }
  assert.equal(await calls('rl.slidinglog'), 4);
  assert.equal(limiter.stats.cacheHits, 0);
});

test('several policies: RL.ALL\'s retry is cached, the items keep their names', async () => {
  const limiter = limiterOf([{ name: 'burst', spec: token(5, 1, 1000) }, { name: 'minute', spec: window(2, 60000, { fixed: true }) }]);
  await limiter.check('frank');
  await limiter.check('frank');
  const denied = await limiter.check('frank');
  assert.deepEqual([denied.allowed, denied.retryAfterMs, denied.items.map(([n]) => n)], [false, 45000, ['burst', 'minute']]);
  const cached = await limiter.check('frank');
  assert.deepEqual([cached.source, cached.items.map(([, , r]) => r.allowed)], ['cache', [true, false]]);
  assert.equal(await calls('rl.all'), 3);
});

test('denyCache: off, a short retry, and the bound on entries', async () => {
  const off = limiterOf([{ name: 'b', spec: token(1, 1, 1000) }], { denyCache: false });
  await off.check('gina');
  assert.equal((await off.check('gina')).source, 'redis');
  assert.equal((await off.check('gina')).source, 'redis');
  const quick = limiterOf([{ name: 'q', spec: token(1, 1, 99) }]); // retry 99 ms < minMs 100: not cached
  await quick.check('hal');
  assert.equal((await quick.check('hal')).allowed, false);
  assert.equal((await quick.check('hal')).source, 'redis');
  const small = limiterOf([{ name: 's', spec: token(1, 1, 1000) }], { denyCache: { maxEntries: 2 } });
  for (const who of ['k1', 'k2', 'k3']) {
    await small.check(who);
    assert.equal((await small.check(who)).source, 'redis');
  }
  assert.equal((await small.check('k3')).source, 'cache');
  assert.equal((await small.check('k2')).source, 'cache');
  assert.equal((await small.check('k1')).source, 'redis'); // the least recently used was forgotten
});

test('bad options and policies are refused by name', () => {
  const ok = [{ name: 'p', spec: token(1, 1, 1000) }];
  assert.throws(() => createLimiter({ policies: ok }), /^TypeError: redis: /);
  assert.throws(() => createLimiter({ redis, policies: [] }), /^TypeError: policies: at least one/);
  assert.throws(() => createLimiter({ redis, policies: ok, onFailure: 'open' }), /^RangeError: onFailure: must be 'deny', 'allow' or 'local', not open$/);
  assert.throws(() => createLimiter({ redis, policies: ok, timeoutMs: 0 }), /^RangeError: timeoutMs: /);
  assert.throws(() => createLimiter({ redis, policies: ok, retryMs: -1 }), /^RangeError: retryMs: /);
  assert.throws(() => createLimiter({ redis, policies: ok, denyCache: { minMs: -5 } }), /^RangeError: denyCache.minMs: /);
  assert.throws(() => createLimiter({ redis, policies: ok, denyCache: true }), /^TypeError: denyCache: /);
  assert.throws(() => createLimiter({ redis, policies: ok, logger: {} }), /^TypeError: logger: /);
  assert.throws(() => createLimiter({ redis, policies: [{ name: 'c', spec: concurrency(3, 1000) }] }), /^TypeError: policy c: concurrency/);
  assert.throws(() => createLimiter({ redis, policies: [{ name: 's', spec: smooth(5) }] }), /^TypeError: policy s: smooth reserves/);
  assert.throws(() => createLimiter({ redis, onFailure: 'local', policies: [...ok, { name: 'log', spec: slidingLog(5, 1000) }] }),
    /^TypeError: policy log: onFailure 'local': SLIDINGLOG has no local form \(only token and fixed window do\)$/);
  assert.throws(() => createLimiter({ redis, onFailure: 'local', policies: [{ name: 'w', spec: window(5, 1000) }] }),
    /^TypeError: policy w: onFailure 'local': a sliding window has no local form/);
  assert.throws(() => createLimiter({ redis, onFailure: 'local', policies: [{ name: 't', spec: token(0, 1, 1000) }] }),
    /^RangeError: capacity: /);
  assert.equal(createLimiter({ redis, onFailure: 'local', policies: [{ name: 'w', spec: window(5, 1000, { fixed: true }) }] }).mode, 'redis');
});
