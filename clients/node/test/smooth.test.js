// The smooth spec (RL.SMOOTH, RL.SMOOTH_RO, a SMOOTH clause in RL.ALL) against a real redis-server with
// the module: the reservations of docs/commands.md's examples (bursty, a large COST paid by the next
// caller, MAXWAIT's denial, the warm-up slope), decimals sent as plain digits, DRYRUN and the _RO form
// reserving nothing, and bad input as the server's error naming the argument. The clock is frozen, so
// every wait is exact.
'use strict';

const { test, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const { smooth, token, lockout, limit, limitAll, lockinfo, commandArgs, allArgs, decimalArg, rateLimit } = require('..');
const { client, fresh } = require('./support');

let redis;
before(() => { redis = client(); });
after(async () => { await redis.call('RL.CLOCK', 'REAL'); redis.disconnect(); });
beforeEach(() => fresh(redis));

const result = (allowed, lim, remaining, retryAfterMs, resetAfterMs, waitMs) =>
  ({ allowed, limit: lim, remaining, retryAfterMs, resetAfterMs, waitMs });

test('argument lists, decimals as plain digits', () => {
  assert.deepEqual(commandArgs('k', smooth(5)), ['RL.SMOOTH', 'k', '5']);
  assert.deepEqual(commandArgs('k', smooth(2.5, { warmupMs: 4000, coldfactor: 4, maxwaitMs: 100 }),
    { cost: 3, readonly: true }),
  ['RL.SMOOTH_RO', 'k', '2.5', 'WARMUP', 4000, 'COLDFACTOR', '4', 'MAXWAIT', 100, 'COST', 3]);
  assert.deepEqual(commandArgs('k', smooth('7.25', { maxburstMs: 0, lockout: lockout(50) }), { dryrun: true }),
    ['RL.SMOOTH', 'k', '7.25', 'MAXBURST', 0, 'LOCKOUT', 50, 'DRYRUN']);
  assert.deepEqual(allArgs([['a', smooth(1, { cost: 2 })], ['b', token(10, 1, 1000)]]),
    ['RL.ALL', 2, 'a', 'b', 'LIMIT', 'SMOOTH', '1', 'COST', 2, 'LIMIT', 'TOKEN', 10, 1, 1000]);
  // JavaScript writes these with an exponent; the module reads digits and a point only.
  assert.equal(decimalArg(0.0000001), '0.0000001'); // not rounded: the module refuses it
  assert.equal(decimalArg(1.5e-7), '0.00000015');
  assert.equal(decimalArg(1e21), '1000000000000000000000');
  assert.equal(decimalArg(0.000001), '0.000001');
  assert.throws(() => decimalArg(true), TypeError);
  assert.throws(() => rateLimit({ redis, policies: [{ name: 'api', spec: smooth(5) }] }), /smooth reserves/);
});

test('bursty reservations and MAXWAIT', async () => {
  const spec = smooth(5);
  assert.deepEqual(await limit(redis, 'api', spec), result(true, 5, 4, -1, 200, 0)); // rested: 5 stored
  assert.deepEqual(await limit(redis, 'api', spec, { cost: 10 }), result(true, 5, 0, -1, 2200, 0)); // 6 charged
  assert.deepEqual(await limit(redis, 'api', spec), result(true, 5, 0, -1, 2400, 1200)); // waits for that
  // tryAcquire(1, 1 s): the ticket is 1.4 s away, so nothing is reserved.
  assert.deepEqual(await limit(redis, 'api', smooth(5, { maxwaitMs: 1000 })), result(false, 5, 0, 400, 2400, 0));
  assert.deepEqual(await limit(redis, 'api', smooth(5, { maxwaitMs: 1400 })), result(true, 5, 0, -1, 2600, 1400));
});

test('the warm-up slope, decimal rates and cold factors', async () => {
  const spec = smooth(2, { warmupMs: 4000 });
  assert.deepEqual(await limit(redis, 'db', spec), result(true, 8, 7, -1, 1875, 0));
  const waits = [];
  for (let i = 0; i < 5; i++) waits.push((await limit(redis, 'db', spec)).waitMs);
  assert.deepEqual(waits, [1375, 2500, 3375, 4000, 4500]); // Guava's documented shape
  const bursty = [];
  for (let i = 0; i < 4; i++) bursty.push((await limit(redis, 'd', smooth(2.5))).waitMs);
  assert.deepEqual(bursty, [0, 0, 0, 200]); // 2.5 stored, a permit every 400 ms
  // Stable 2 s, cold 4 s: a threshold of 0.5 * 10 / 2 = 2.5 permits, a most of 2.5 + 2 * 10 / 6.
  const cold = await limit(redis, 'c', smooth('0.5', { warmupMs: 10000, coldfactor: 2 }));
  assert.deepEqual([cold.allowed, cold.limit, cold.remaining, cold.waitMs], [true, 5, 4, 0]);
});

test('DRYRUN and _RO reserve nothing; a lockout on a MAXWAIT denial', async () => {
  const spec = smooth(5);
  assert.deepEqual(await limit(redis, 's', spec, { cost: 5, dryrun: true }), result(true, 5, 0, -1, 1000, 0));
  assert.deepEqual(await limit(redis, 's', spec, { cost: 5, readonly: true }), result(true, 5, 0, -1, 1000, 0));
  assert.equal(await redis.exists('s'), 0);
  await limit(redis, 's', spec, { cost: 5 });
  assert.deepEqual(await limit(redis, 's', spec, { readonly: true }), result(true, 5, 0, -1, 1200, 0));
  const locking = smooth(1, { maxburstMs: 0, maxwaitMs: 0, lockout: lockout(5000) });
  assert.equal((await limit(redis, 'l', locking)).allowed, true);
  assert.equal((await limit(redis, 'l', locking)).allowed, false); // the ticket is 1 s away: locked
  assert.equal((await lockinfo(redis, 'l')).lockMs, 5000);
});

test('bad input is the server\'s error, naming the argument', async () => {
  const cases = [[smooth(0), {}, 'permits_per_second'], [smooth(1e-7), {}, 'permits_per_second'],
    [smooth('1e3'), {}, 'permits_per_second'], [smooth(NaN), {}, 'permits_per_second'],
    [smooth(5, { coldfactor: 2 }), {}, 'COLDFACTOR'], [smooth(5, { warmupMs: 10, maxburstMs: 10 }), {}, 'MAXBURST'],
    [smooth(5), { cost: 0 }, 'COST'], [smooth(5), { refund: 1 }, 'REFUND'], [smooth(5), { force: true }, 'FORCE'],
    [smooth(5), { cost: 2, atmost: true }, 'ATMOST']];
  for (const [spec, opts, name] of cases) {
    await assert.rejects(limit(redis, 'bad', spec, opts), new RegExp(`^ReplyError: ERR '?${name}'?: `),
      `${spec.params} ${JSON.stringify(opts)}`);
  }
  assert.equal(await redis.exists('bad'), 0);
});

test('a SMOOTH clause in RL.ALL is all or nothing', async () => {
  const limits = [['{u}:g', smooth(5, { maxwaitMs: 0 })], ['{u}:s', token(3, 1, 1000)]];
  let out = await limitAll(redis, limits, { cost: 3 });
  assert.deepEqual([out.allowed, out.resetAfterMs], [true, 3000]);
  assert.deepEqual(out.limits, [result(true, 5, 2, -1, 600, 0), result(true, 3, 0, -1, 3000, 0)]);
  out = await limitAll(redis, limits); // the bucket is empty: the smooth limiter keeps its 2 stored
  assert.deepEqual([out.allowed, out.retryAfterMs], [false, 1000]);
  assert.deepEqual(out.limits, [result(true, 5, 2, -1, 600, 0), result(false, 3, 0, 1000, 3000, 0)]);
  assert.equal((await limit(redis, '{u}:g', smooth(5), { readonly: true })).remaining, 1);
  await assert.rejects(limitAll(redis, limits, { refund: 1 }), /ERR LIMIT 1: REFUND: /);
});
