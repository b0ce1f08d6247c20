// limit() and limitAll() against a real redis-server with the module: each command's result, DRYRUN and
// the _RO forms consume nothing, RL.ALL is all-or-nothing and its REFUND gives back to every limit,
// replies are the documented values.
'use strict';

const { test, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const { token, leaky, window, slidingLog, limit, limitAll, commandArgs, allArgs } = require('..');
const { client, fresh } = require('./support');

let redis;
before(() => { redis = client(); });
after(async () => { await redis.call('RL.CLOCK', 'REAL'); redis.disconnect(); });
beforeEach(() => fresh(redis));

const result = (allowed, lim, remaining, retryAfterMs, resetAfterMs, waitMs) =>
  ({ allowed, limit: lim, remaining, retryAfterMs, resetAfterMs, waitMs });

test('argument lists', () => {
  assert.deepEqual(commandArgs('k', token(10, 5, 1000, { interval: true }), { cost: 3, dryrun: true }),
    ['RL.TOKEN', 'k', 10, 5, 1000, 'INTERVAL', 'COST', 3, 'DRYRUN']);
  assert.deepEqual(commandArgs('k', leaky(3, 3, 1000, { nodelay: true }), { readonly: true }),
    ['RL.LEAKY_RO', 'k', 3, 3, 1000, 'NODELAY']);
  assert.deepEqual(commandArgs('k', slidingLog(2, 1000, { mingapMs: 100 })), ['RL.SLIDINGLOG', 'k', 2, 1000, 'MINGAP', 100]);
  assert.deepEqual(allArgs([['a', token(10, 1, 1000)], ['b', window(3, 60000)]], { cost: 2 }),
    ['RL.ALL', 2, 'a', 'b', 'COST', 2, 'LIMIT', 'TOKEN', 10, 1, 1000, 'LIMIT', 'WINDOW', 3, 60000, 'SLIDING']);
  assert.deepEqual(allArgs([['a', token(10, 1, 1000)]], { refund: 3, readonly: true, dryrun: true }),
    ['RL.ALL_RO', 1, 'a', 'REFUND', 3, 'LIMIT', 'TOKEN', 10, 1, 1000]);
  assert.deepEqual(commandArgs('k', window(10, 60000), { refund: 2 }),
    ['RL.WINDOW', 'k', 10, 60000, 'SLIDING', 'REFUND', 2]);
  assert.throws(() => allArgs([['a', token(10, 1, 1000)]], { cost: 2, refund: 2 }));
  assert.deepEqual(commandArgs('k', token(10, 1, 1000), { cost: 30, force: true }),
    ['RL.TOKEN', 'k', 10, 1, 1000, 'COST', 30, 'FORCE']);
  assert.deepEqual(allArgs([['a', token(10, 1, 1000)]], { cost: 5, force: true, readonly: true }),
    ['RL.ALL_RO', 1, 'a', 'COST', 5, 'FORCE', 'LIMIT', 'TOKEN', 10, 1, 1000]);
  assert.throws(() => commandArgs('k', token(10, 1, 1000), { refund: 2, force: true }));
});

test('RL.TOKEN', async () => {
  assert.deepEqual(await limit(redis, 't', token(1, 3, 1000)), result(true, 1, 0, -1, 334, 0));
  await redis.call('RL.CLOCK', 'ADVANCE', 100);
  assert.deepEqual(await limit(redis, 't', token(1, 3, 1000)), result(false, 1, 0, 234, 234, 0));
});

test('RL.LEAKY shaping', async () => {
  const spec = leaky(3, 3, 1000);
  const waits = [];
  for (let i = 0; i < 3; i++) waits.push((await limit(redis, 'q', spec)).waitMs);
  assert.deepEqual(waits, [0, 334, 667]);
  assert.deepEqual(await limit(redis, 'q', spec), result(false, 3, 0, 334, 1000, 0));
});

test('RL.WINDOW FIXED and RL.SLIDINGLOG', async () => {
  const w = window(2, 60000, { fixed: true });
  await limit(redis, 'w', w);
  await limit(redis, 'w', w);
  assert.deepEqual(await limit(redis, 'w', w), result(false, 2, 0, 45000, 45000, 0));
  const l = slidingLog(1, 1000);
  assert.equal((await limit(redis, 'l', l)).allowed, true);
  assert.equal((await limit(redis, 'l', l)).allowed, false);
  // The denied attempt is logged too (in one weighted member with the first, same µs): a peek is denied
  // while the log holds more than the limit.
  assert.equal((await limit(redis, 'l', l, { cost: 0 })).allowed, false);
});

test('DRYRUN and _RO consume nothing', async () => {
  const spec = token(5, 1, 1000);
  assert.equal((await limit(redis, 'd', spec, { cost: 5, dryrun: true })).allowed, true);
  assert.equal((await limit(redis, 'd', spec, { cost: 5, readonly: true })).allowed, true);
  assert.equal(await redis.exists('d'), 0);
  assert.equal((await limit(redis, 'd', spec, { cost: 5 })).remaining, 0);
});

test('RL.ALL is all or nothing', async () => {
  const limits = [['{u}:s', token(10, 1, 1000)], ['{u}:h', window(3, 60000)]];
  const ok = await limitAll(redis, limits);
  assert.equal(ok.allowed, true);
  assert.deepEqual(ok.limits.map((r) => r.remaining), [9, 2]);
  const denied = await limitAll(redis, limits, { cost: 3 });
  assert.equal(denied.allowed, false);
  assert.deepEqual(denied.limits.map((r) => r.allowed), [true, false]);
  assert.deepEqual((await limitAll(redis, limits, { cost: 0, dryrun: true })).limits.map((r) => r.remaining), [9, 2]);
});

test('FORCE takes past every limit, and the plain request waits for the debt', async () => {
  const limits = [['{f}:s', token(10, 1, 1000)], ['{f}:h', window(3, 60000)]];
  const out = await limitAll(redis, limits, { cost: 5, force: true });
  assert.equal(out.allowed, true);
  assert.deepEqual(out.limits.map((r) => r.remaining), [5, 0]);
  const forced = await limit(redis, '{f}:s', token(10, 1, 1000), { cost: 12, force: true }); // 7 below empty
  assert.deepEqual([forced.allowed, forced.remaining, forced.retryAfterMs], [true, 0, -1]);
  const after = await limit(redis, '{f}:s', token(10, 1, 1000));
  assert.deepEqual([after.allowed, after.retryAfterMs], [false, 8000]); // the debt, then 1 token
});

test('RL.ALL REFUND gives back to every limit, RL.ALL_RO answers what DRYRUN answers', async () => {
  const limits = [['{u}:s', token(10, 1, 1000)], ['{u}:h', window(3, 60000)]];
  await limitAll(redis, limits, { cost: 2 });
  for (const cost of [1, 2, 3]) {
    assert.deepEqual(await limitAll(redis, limits, { cost, readonly: true }),
      await limitAll(redis, limits, { cost, dryrun: true }));
  }
  assert.deepEqual((await limitAll(redis, limits, { readonly: true })).limits.map((r) => r.remaining), [7, 0]);
  const back = await limitAll(redis, limits, { refund: 2 });
  assert.deepEqual([back.allowed, back.retryAfterMs, back.resetAfterMs], [true, -1, 0]);
  assert.deepEqual(back.limits.map((r) => r.remaining), [10, 3]);
  assert.equal(await redis.exists('{u}:s', '{u}:h'), 0); // both idle again: no key
  await limit(redis, 't', token(5, 1, 1000), { cost: 3 });
  assert.equal((await limit(redis, 't', token(5, 1, 1000), { refund: 1 })).remaining, 3);
});
