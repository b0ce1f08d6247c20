// Policies kept in Redis through the helper, against a real redis-server with the module: policySet,
// policyGet (read back into the same specs), policyList, policyDel and policyFlush; check() (RL.CHECK,
// RL.CHECK_RO) answering exactly what RL.ALL answers on separate keys, all or nothing, its DRYRUN, COST, a
// limit's own COST and WAIT; SHADOW; a policy replaced under a live key (kept state, capped, fresh limits);
// and every bad input as the server's error naming the argument, changing nothing.
'use strict';

const { test, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const { token, leaky, window, slidingLog, smooth, quota, concurrency, lockout, limitAll, leases, release, renew,
  policySet, policyGet, policyDel, policyList, policyFlush, check, policySetArgs, checkArgs,
  parsePolicy } = require('..');
const { client, fresh, waitBlocked } = require('./support');

let redis;
before(() => { redis = client(); });
after(async () => { await policyFlush(redis); await redis.call('RL.CLOCK', 'REAL'); redis.disconnect(); });
// FLUSHALL leaves the policies; RL.POLICY FLUSH does not leave them.
beforeEach(async () => { await fresh(redis); await policyFlush(redis); });

const BURST = token(3, 1, 1000);
const HOUR = window(5, 60000, { fixed: true });
const result = (allowed, lim, remaining, retryAfterMs, resetAfterMs, waitMs) =>
  ({ allowed, limit: lim, remaining, retryAfterMs, resetAfterMs, waitMs });
const all = (allowed, retryAfterMs, resetAfterMs, limits) => ({ allowed, retryAfterMs, resetAfterMs, limits });
const remaining = (out) => out.limits.map((r) => r.remaining);

test('argument lists, and RL.POLICY GET read back into specs', () => {
  assert.deepEqual(policySetArgs('api', [['burst', token(10, 10, 1000)], ['day', quota(1000, 'DAY')]]),
    ['RL.POLICY', 'SET', 'api', 'LIMIT', 'burst', 'TOKEN', 10, 10, 1000, 'LIMIT', 'day', 'QUOTA', 1000, 'DAY']);
  assert.deepEqual(policySetArgs('s', [['s', smooth(5.5, { cost: 2 })]], { shadow: true }),
    ['RL.POLICY', 'SET', 's', 'SHADOW', 'LIMIT', 's', 'SMOOTH', '5.5', 'COST', 2]);
  assert.throws(() => policySetArgs('api', [['burst', 10]]), TypeError);
  assert.deepEqual(checkArgs('api', 'k'), ['RL.CHECK', 'api', 'k']);
  assert.deepEqual(checkArgs('api', 'k', { cost: 3, dryrun: true, waitMs: 100 }),
    ['RL.CHECK', 'api', 'k', 'COST', 3, 'WAIT', 100, 'DRYRUN']);
  assert.deepEqual(checkArgs('api', 'k', { cost: 0, dryrun: true, readonly: true }),
    ['RL.CHECK_RO', 'api', 'k', 'COST', 0]);
  const words = ['SHADOW', 'LIMIT', 's', 'TOKEN', '10', '10', '1000', 'interval', 'LOCKOUT', '50', 'BACKOFF', '2',
    'LIMIT', 'LIMIT', 'WINDOW', '6', '60000', 'SUBWINDOWS', '6', 'COST', '2',
    'LIMIT', 'g', 'SMOOTH', '5.5', 'WARMUP', '100', 'COLDFACTOR', '2', 'MAXWAIT', '0'];
  assert.deepEqual(parsePolicy('p', words), { name: 'p', shadow: true, limits: [
    ['s', token(10, 10, 1000, { interval: true, lockout: lockout(50, { backoff: 2 }) })],
    ['LIMIT', window(6, 60000, { subwindows: 6, cost: 2 })], // a limit may be named LIMIT
    ['g', smooth(5.5, { warmupMs: 100, coldfactor: 2, maxwaitMs: 0 })]] });
  for (const bad of [['LIMIT', 'x', 'TOKEN', '1', '1'], ['LIMIT', 'x', 'HOURLY', '1'],
    ['LIMIT', 'x', 'WINDOW', '1', '1', 'NEWOPTION'], ['LIMIT', 'x', 'WINDOW', '1', '1', 'NODELAY'],
    ['LIMIT', 'x', 'WINDOW', '1', '1', 'BACKOFF', '2'], ['TOKEN']]) {
    assert.throws(() => parsePolicy('p', bad), /^Error: policy p/, bad.join(' '));
  }
});

test('set, get, list, del, flush', async () => {
  const limits = [['burst', token(10, 10, 1000)], ['hour', window(100, 3600000, { fixed: true })]];
  assert.equal(await policySet(redis, 'api', limits), undefined);
  assert.deepEqual(await policyGet(redis, 'api'), { name: 'api', shadow: false, limits });
  await policySet(redis, 'B-2', [['s', token(10, 10, 1000)]], { shadow: true });
  assert.deepEqual(await redis.call('RL.POLICY', 'GET', 'B-2'), ['SHADOW', 'LIMIT', 's', 'TOKEN', '10', '10', '1000']);
  assert.deepEqual(await policyGet(redis, 'B-2'), { name: 'B-2', shadow: true, limits: [['s', token(10, 10, 1000)]] });
  assert.deepEqual(await policyList(redis), ['B-2', 'api']); // bytewise
  await redis.flushall(); // keys go, policies stay
  assert.deepEqual(await policyList(redis), ['B-2', 'api']);
  assert.equal(await policyDel(redis, 'api'), true);
  assert.equal(await policyDel(redis, 'api'), false);
  assert.equal(await policyGet(redis, 'api'), null);
  await policyFlush(redis);
  assert.deepEqual(await policyList(redis), []);
});

test('every kind and option reads back', async () => {
  const limits = [
    ['t', token(10, 2, 1000, { interval: true, lockout: lockout(5000, { backoff: 2, maxlockMs: 60000 }), cost: 2 })],
    ['l', leaky(5, 1, 200, { nodelay: true, force: true })],
    ['w', window(6, 60000, { subwindows: 6 })], ['f', window(9, 1000, { fixed: true, lockout: lockout(10) })],
    ['g', smooth(5.5, { warmupMs: 4000, coldfactor: 2.5, maxwaitMs: 100 })], ['b', smooth(2, { maxburstMs: 0 })],
    ['q', quota(1000, 'DAY', { offsetMinutes: 60, lockout: lockout(1000, { forgiveMs: 2000 }) })],
    ['s', slidingLog(5, 1000, { mingapMs: 10, lockout: lockout(20) })], ['c', concurrency(3, 30000, { cost: 2 })]];
  await policySet(redis, 'all-kinds_1', limits);
  assert.deepEqual(await policyGet(redis, 'all-kinds_1'), { name: 'all-kinds_1', shadow: false, limits });
});

test('bad input is the server\'s error and changes nothing', async () => {
  await policySet(redis, 'api', [['burst', BURST]]);
  const cases = [['bad name', [['a', BURST]], /^ReplyError: ERR name: /],
    ['x'.repeat(65), [['a', BURST]], /^ReplyError: ERR name: /],
    ['api', [], /ERR LIMIT: a policy needs 1 to 16 limits/],
    ['api', Array.from({ length: 17 }, (_, i) => [`l${i}`, BURST]), /ERR LIMIT: a policy needs 1 to 16 limits/],
    ['api', [['a', BURST], ['burst', HOUR], ['burst', BURST]], /ERR LIMIT 3 \(burst\): limit name used twice/],
    ['api', [['a', BURST], ['burst', token(0, 1, 1000)]], /ERR LIMIT 2 \(burst\): capacity: /],
    ['api', [['jobs', concurrency(3, 30000, { leaseId: 'x' })]], /ERR LIMIT 1 \(jobs\): ID: /]];
  for (const [name, limits, error] of cases) {
    await assert.rejects(policySet(redis, name, limits), error, String(error));
  }
  assert.deepEqual(await policyList(redis), ['api']);
  assert.deepEqual(await policyGet(redis, 'api'), { name: 'api', shadow: false, limits: [['burst', BURST]] });
});

test('check answers what RL.ALL answers, all or nothing', async () => {
  await policySet(redis, 'api', [['burst', BURST], ['hour', HOUR]]);
  assert.deepEqual(await check(redis, 'api', 'u1'),
    all(true, -1, 45000, [result(true, 3, 2, -1, 1000, 0), result(true, 5, 4, -1, 45000, 0)]));
  assert.equal(await redis.type('u1'), 'rl-checks');
  await redis.del('u1');
  // The same calls on one key under the policy and on two keys under RL.ALL: the same replies.
  for (const [cost, later] of [[1, 0], [2, 0], [1, 0], [0, 0], [3, 1500], [1, 0], [2, 30000], [5, 20000], [1, 0]]) {
    for (const opts of [{ dryrun: true }, { readonly: true }, {}]) {
      assert.deepEqual(await check(redis, 'api', 'u1', { cost, ...opts }),
        await limitAll(redis, [['{x}:1', BURST], ['{x}:2', HOUR]], { cost, ...opts }), `cost ${cost}`);
    }
    await redis.call('RL.CLOCK', 'ADVANCE', later);
  }
  await fresh(redis); // no key, the clock back at T0 + 15 s
  await check(redis, 'api', 'u1', { cost: 3 }); // the bucket is empty, the window has 2 left
  assert.deepEqual(await check(redis, 'api', 'u1'),
    all(false, 1000, 45000, [result(false, 3, 0, 1000, 3000, 0), result(true, 5, 2, -1, 45000, 0)]));
  await redis.call('RL.CLOCK', 'ADVANCE', 1000); // one token back; the window took nothing from the denial
  assert.deepEqual(remaining(await check(redis, 'api', 'u1')), [0, 1]);
});

test('DRYRUN and _RO write nothing; a limit\'s own COST; WAIT', async () => {
  await policySet(redis, 'api', [['burst', BURST], ['hour', HOUR]]);
  assert.equal((await check(redis, 'api', 'u1', { cost: 3, dryrun: true })).allowed, true);
  assert.equal((await check(redis, 'api', 'u1', { cost: 3, readonly: true })).allowed, true);
  assert.equal(await redis.exists('u1'), 0);
  await assert.rejects(check(redis, 'api', 'u1', { readonly: true, waitMs: 100 }), /WAIT/);
  await policySet(redis, 'bytes', [['calls', token(10, 1, 1000, { cost: 1 })], ['bytes', token(10000, 1000, 1000)]]);
  assert.deepEqual(remaining(await check(redis, 'bytes', 'u2', { cost: 4096 })), [9, 10000 - 4096]);
  await check(redis, 'api', 'u3', { cost: 3 }); // the bucket is empty: the next call waits for a token
  const waiter = client();
  try {
    const answer = check(waiter, 'api', 'u3', { waitMs: 600000 });
    assert.equal(await waitBlocked(redis, 1), true, 'the waiter never blocked');
    await redis.call('RL.CLOCK', 'ADVANCE', 1000);
    assert.deepEqual(await answer,
      all(true, -1, 44000, [result(true, 3, 0, -1, 3000, 0), result(true, 5, 1, -1, 44000, 0)]));
  } finally {
    waiter.disconnect();
  }
});

test('errors name the policy and change nothing', async () => {
  await policySet(redis, 'api', [['burst', BURST], ['hour', HOUR]]);
  await assert.rejects(check(redis, 'nope', 'u1'), /ERR policy 'nope': no such policy/);
  assert.equal(await redis.exists('u1'), 0);
  await redis.set('s', 'x');
  await assert.rejects(check(redis, 'api', 's'), /WRONGTYPE/);
  await check(redis, 'api', 'u1');
  await policySet(redis, 'other', [['burst', BURST]]);
  await assert.rejects(check(redis, 'other', 'u1'), /ERR key was checked under policy 'api', not 'other'/);
  await assert.rejects(check(redis, 'api', 'u1', { cost: -1 }), /ERR COST: /);
  assert.deepEqual(remaining(await check(redis, 'api', 'u1', { cost: 0 })), [2, 4]);
  assert.equal(await policyDel(redis, 'api'), true); // the key keeps its state, and answers no such policy
  await assert.rejects(check(redis, 'api', 'u1'), /ERR policy 'api': no such policy/);
  assert.equal(await redis.exists('u1'), 1);
});

test('a sliding log answers what RL.ALL answers', async () => {
  const limits = [['log', slidingLog(3, 1000)], ['burst', token(5, 1, 1000)]];
  await policySet(redis, 'strict', limits);
  const onKeys = [['{x}:1', limits[0][1]], ['{x}:2', limits[1][1]]];
  for (const [cost, later] of [[1, 0], [2, 100], [1, 100], [0, 0], [1, 500], [2, 400], [1, 0], [4, 0], [1, 1000]]) {
    for (const opts of [{ dryrun: true }, { readonly: true }, {}]) {
      assert.deepEqual(await check(redis, 'strict', 'u1', { cost, ...opts }),
        await limitAll(redis, onKeys, { cost, ...opts }), `cost ${cost}`);
    }
    await redis.call('RL.CLOCK', 'ADVANCE', later);
  }
});

test('a concurrency limit takes leases on the key', async () => {
  await policySet(redis, 'jobs', [['rate', token(10, 1, 1000)], ['jobs', concurrency(2, 30000)]]);
  const first = (await check(redis, 'jobs', 'u1')).limits[1];
  assert.equal(typeof first.lease, 'string');
  assert.deepEqual(first, { ...result(true, 2, 1, -1, 30000, 0), lease: first.lease });
  assert.equal((await check(redis, 'jobs', 'u1', { dryrun: true })).limits[1].lease, null); // a look takes none
  const second = (await check(redis, 'jobs', 'u1')).limits[1].lease;
  assert.deepEqual(await leases(redis, 'u1'),
    [{ leaseId: first.lease, units: 1, ttlMs: 30000 }, { leaseId: second, units: 1, ttlMs: 30000 }]);
  const denied = await check(redis, 'jobs', 'u1');
  assert.deepEqual([denied.allowed, denied.retryAfterMs], [false, 30000]);
  assert.deepEqual(denied.limits[1], { ...result(false, 2, 0, 30000, 30000, 0), lease: null });
  assert.equal(denied.limits[0].remaining, 8); // the denial took nothing from the bucket either
  assert.equal(await renew(redis, 'u1', second, 5000), true);
  // Taken in the same µs (the frozen clock), the leases are listed by their end: the renewed one first.
  assert.deepEqual(await leases(redis, 'u1'),
    [{ leaseId: second, units: 1, ttlMs: 5000 }, { leaseId: first.lease, units: 1, ttlMs: 30000 }]);
  assert.equal(await release(redis, 'u1', first.lease), true);
  assert.equal(await release(redis, 'u1', first.lease), false);
  const third = await check(redis, 'jobs', 'u1');
  assert.deepEqual([third.allowed, third.limits[1].remaining], [true, 0]);
  assert.equal((await leases(redis, 'u1')).length, 2);
});

test('SHADOW never denies and keeps the state right; a live change moves the key', async () => {
  await policySet(redis, 's', [['burst', token(2, 1, 1000)]], { shadow: true });
  assert.deepEqual((await check(redis, 's', 'u1', { cost: 2 })).limits, [result(true, 2, 0, -1, 2000, 0)]);
  assert.deepEqual(await check(redis, 's', 'u1'), all(true, -1, 2000, [result(false, 2, 0, 1000, 2000, 0)]));
  await policySet(redis, 's', [['burst', token(2, 1, 1000)]]); // enforced from the next call on
  assert.deepEqual(await check(redis, 's', 'u1'), all(false, 1000, 2000, [result(false, 2, 0, 1000, 2000, 0)]));

  await policySet(redis, 'p', [['burst', token(10, 1, 1000)], ['gone', window(3, 60000, { fixed: true })]]);
  assert.deepEqual(remaining(await check(redis, 'p', 'u2', { cost: 3 })), [7, 0]);
  // burst keeps its name and kind: its 7 tokens, capped at 5 (never refilled); "hour" is new: full.
  await policySet(redis, 'p', [['burst', token(5, 1, 1000)], ['hour', window(3, 60000, { fixed: true })]]);
  assert.deepEqual((await check(redis, 'p', 'u2', { cost: 0 })).limits,
    [result(true, 5, 5, -1, 0, 0), result(true, 3, 3, -1, 0, 0)]);
  assert.deepEqual(remaining(await check(redis, 'p', 'u2', { cost: 2 })), [3, 1]);
  // A limit whose kind changed starts fresh.
  await policySet(redis, 'p', [['burst', window(4, 60000, { fixed: true })],
    ['hour', window(3, 60000, { fixed: true })]]);
  assert.deepEqual(remaining(await check(redis, 'p', 'u2')), [3, 0]);
});
