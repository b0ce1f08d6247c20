// acquire(), release(), renew(), leases() and the concurrency spec in limitAll() against a real
// redis-server with the module: a lease is taken while the held units leave room, denied (no lease) when
// not, given back and renewed by id; an ID names the lease again; DRYRUN and RL.ACQUIRE_RO record
// nothing; RL.ALL takes a lease only if every limit admits; WAIT is woken by a release; bad input is the
// server's error, naming the argument. The clock is frozen, so every ttl and retry is exact.
'use strict';

const { test, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const { concurrency, window, token, limit, limitAll, acquire, release, renew, leases, acquireArgs, allArgs,
  parseResult, rateLimit } = require('..');
const { client, fresh, waitBlocked } = require('./support');

let redis;
before(() => { redis = client(); });
after(async () => { await redis.call('RL.CLOCK', 'REAL'); redis.disconnect(); });
beforeEach(() => fresh(redis));

const advance = (ms) => redis.call('RL.CLOCK', 'ADVANCE', ms);
const acquired = (allowed, lim, remaining, retryAfterMs, resetAfterMs, lease) =>
  ({ allowed, limit: lim, remaining, retryAfterMs, resetAfterMs, waitMs: 0, lease });

test('argument lists and the seven-field reply', () => {
  assert.deepEqual(acquireArgs('k', 5, 30000), ['RL.ACQUIRE', 'k', 5, 30000]);
  assert.deepEqual(acquireArgs('k', 5, 30000, { cost: 2, leaseId: 'job', waitMs: 100, dryrun: true }),
    ['RL.ACQUIRE', 'k', 5, 30000, 'ID', 'job', 'COST', 2, 'WAIT', 100, 'DRYRUN']);
  assert.deepEqual(acquireArgs('k', 5, 30000, { dryrun: true, readonly: true }), ['RL.ACQUIRE_RO', 'k', 5, 30000]);
  assert.deepEqual(allArgs([['a', concurrency(3, 1000, { leaseId: 'x' })], ['b', token(10, 1, 1000)]], { cost: 2 }),
    ['RL.ALL', 2, 'a', 'b', 'COST', 2, 'LIMIT', 'CONCURRENCY', 3, 1000, 'ID', 'x', 'LIMIT', 'TOKEN', 10, 1, 1000]);
  assert.deepEqual(parseResult([0, 5, 0, 7, 9, 0, null]), acquired(false, 5, 0, 7, 9, null));
  assert.throws(() => rateLimit({ redis, policies: [{ name: 'jobs', spec: concurrency(5, 30000) }] }),
    /concurrency is not a rate limit/);
});

test('acquire, deny, release', async () => {
  const first = await acquire(redis, 'c', 2, 30000);
  assert.equal(typeof first.lease, 'string');
  assert.deepEqual(first, acquired(true, 2, 1, -1, 30000, first.lease));
  await advance(1000);
  const second = await acquire(redis, 'c', 2, 30000);
  assert.deepEqual([second.allowed, second.remaining, second.resetAfterMs], [true, 0, 30000]);
  assert.notEqual(second.lease, first.lease);
  // Full: the first lease frees a unit when it expires, 29 s from now.
  assert.deepEqual(await acquire(redis, 'c', 2, 30000), acquired(false, 2, 0, 29000, 30000, null));
  assert.deepEqual(await leases(redis, 'c'),
    [{ leaseId: first.lease, units: 1, ttlMs: 29000 }, { leaseId: second.lease, units: 1, ttlMs: 30000 }]);
  assert.equal(await release(redis, 'c', first.lease), true);
  assert.equal(await release(redis, 'c', first.lease), false);
  assert.equal(await release(redis, 'c', 'no-such-lease'), false);
  await advance(500); // leases taken at one instant are listed by end: later, oldest first is by age
  const third = await acquire(redis, 'c', 2, 10000);
  assert.deepEqual([third.allowed, third.remaining, third.resetAfterMs], [true, 0, 29500]);
  assert.deepEqual(await leases(redis, 'c'),
    [{ leaseId: second.lease, units: 1, ttlMs: 29500 }, { leaseId: third.lease, units: 1, ttlMs: 10000 }]);
});

test('COST, and a cost above the limit never fits', async () => {
  assert.equal((await acquire(redis, 'c', 5, 1000, { cost: 3 })).remaining, 2);
  await advance(400);
  assert.deepEqual(await acquire(redis, 'c', 5, 1000, { cost: 3 }), acquired(false, 5, 2, 600, 600, null));
  assert.deepEqual(await acquire(redis, 'c', 5, 1000, { cost: 6 }), acquired(false, 5, 2, -1, 600, null));
  assert.deepEqual((await leases(redis, 'c')).map((l) => l.units), [3]);
});

test('expiry and renew', async () => {
  const held = (await acquire(redis, 'c', 1, 1000)).lease;
  await advance(600);
  assert.equal(await renew(redis, 'c', held, 5000), true);
  assert.deepEqual(await leases(redis, 'c'), [{ leaseId: held, units: 1, ttlMs: 5000 }]);
  await advance(1000); // past the first end: renewed, still held
  assert.equal((await acquire(redis, 'c', 1, 1000)).allowed, false);
  assert.equal(await renew(redis, 'c', 'other', 5000), false);
  await advance(4000); // now it has expired
  assert.deepEqual(await leases(redis, 'c'), []);
  assert.equal(await renew(redis, 'c', held, 5000), false);
  assert.equal(await release(redis, 'c', held), false);
  assert.equal((await acquire(redis, 'c', 1, 1000)).allowed, true);
});

test('an ID names the lease again', async () => {
  const held = acquired(true, 1, 0, -1, 3000, 'job-1');
  assert.deepEqual(await acquire(redis, 'c', 1, 3000, { leaseId: 'job-1' }), held);
  await advance(500);
  // The same id renews the lease it names, taking no more units; another id finds no room.
  assert.deepEqual(await acquire(redis, 'c', 1, 3000, { leaseId: 'job-1' }), held);
  assert.equal((await acquire(redis, 'c', 1, 3000, { leaseId: 'job-2' })).allowed, false);
  assert.deepEqual(await leases(redis, 'c'), [{ leaseId: 'job-1', units: 1, ttlMs: 3000 }]);
});

test('DRYRUN and RL.ACQUIRE_RO record nothing', async () => {
  for (const opts of [{ dryrun: true }, { readonly: true }]) {
    assert.deepEqual(await acquire(redis, 'c', 3, 1000, { cost: 3, ...opts }), acquired(true, 3, 0, -1, 1000, null));
  }
  assert.equal(await redis.exists('c'), 0);
  await acquire(redis, 'c', 3, 1000);
  for (const cost of [1, 2, 3]) {
    assert.deepEqual(await acquire(redis, 'c', 3, 1000, { cost, readonly: true }),
      await acquire(redis, 'c', 3, 1000, { cost, dryrun: true }));
  }
  assert.equal((await leases(redis, 'c')).length, 1);
  assert.deepEqual(await limit(redis, 'c', concurrency(3, 1000), { readonly: true }),
    await acquire(redis, 'c', 3, 1000, { readonly: true }));
});

test('bad input is the server\'s error, naming the argument', async () => {
  const cases = [[{ limit: 0 }, 'limit'], [{ leaseMs: 0 }, 'lease_ms'], [{ cost: 10001 }, 'COST'],
    [{ leaseId: '' }, 'ID'], [{ leaseId: 'x'.repeat(65) }, 'ID'], [{ waitMs: 0 }, 'WAIT'],
    [{ readonly: true, waitMs: 100 }, 'WAIT']];
  for (const [change, name] of cases) {
    const { limit: lim = 2, leaseMs = 1000, ...opts } = change;
    // The argument is named first: "ERR limit: ...", "ERR 'WAIT': not an option ...".
    await assert.rejects(acquire(redis, 'c', lim, leaseMs, opts), new RegExp(`ERR '?${name}'?: `),
      JSON.stringify(change));
  }
  assert.equal(await redis.exists('c'), 0);
  await assert.rejects(renew(redis, 'c', 'x', 0), /ERR lease_ms: /);
  await redis.set('s', 'a string');
  await assert.rejects(release(redis, 's', 'x'), /WRONGTYPE/);
  await assert.rejects(renew(redis, 's', 'x', 1000), /WRONGTYPE/);
  await assert.rejects(leases(redis, 's'), /WRONGTYPE/);
  await assert.rejects(acquire(redis, 's', 1, 1000), /WRONGTYPE/);
  assert.equal(await redis.get('s'), 'a string');
});

test('WAIT is woken by a release', async () => {
  const held = (await acquire(redis, 'c', 1, 600000)).lease;
  const waiter = client();
  try {
    const answer = acquire(waiter, 'c', 1, 1000, { waitMs: 600000 });
    assert.equal(await waitBlocked(redis, 1), true, 'the waiter never blocked');
    assert.equal(await release(redis, 'c', held), true);
    const got = await answer;
    assert.deepEqual([got.allowed, got.remaining], [true, 0]);
    assert.deepEqual(await leases(redis, 'c'), [{ leaseId: got.lease, units: 1, ttlMs: 1000 }]);
  } finally {
    waiter.disconnect();
  }
});

test('RL.ALL takes a lease only if every limit admits', async () => {
  const limits = [['{u}:c', concurrency(2, 30000)], ['{u}:h', window(3, 60000)]];
  const out = await limitAll(redis, limits);
  assert.equal(out.allowed, true);
  const [leaseResult, windowResult] = out.limits;
  assert.equal(typeof leaseResult.lease, 'string');
  assert.deepEqual(leaseResult, acquired(true, 2, 1, -1, 30000, leaseResult.lease));
  assert.equal('lease' in windowResult, false);
  assert.equal(windowResult.remaining, 2);
  assert.deepEqual(await leases(redis, '{u}:c'), [{ leaseId: leaseResult.lease, units: 1, ttlMs: 30000 }]);
  // The window admits 2 more, the leases only 1: denied, no lease, nothing written.
  const denied = await limitAll(redis, limits, { cost: 2 });
  assert.equal(denied.allowed, false);
  assert.deepEqual(denied.limits.map((r) => [r.allowed, r.remaining]), [[false, 1], [true, 2]]);
  assert.equal(denied.limits[0].lease, null);
  assert.equal((await leases(redis, '{u}:c')).length, 1);
  assert.deepEqual((await limitAll(redis, limits, { readonly: true })).limits.map((r) => r.remaining), [0, 1]);
});

test('RL.ALL: an ID renews its lease, RL.ALL_RO answers what DRYRUN answers, a bad clause is refused', async () => {
  const limits = [['{u}:c', concurrency(2, 30000)], ['{u}:h', window(3, 60000)]];
  const first = (await limitAll(redis, limits)).limits[0].lease;
  await advance(1000);
  const again = await limitAll(redis, [['{u}:c', concurrency(2, 30000, { leaseId: first })], limits[1]]);
  assert.deepEqual(again.limits[0], acquired(true, 2, 1, -1, 30000, first));
  assert.deepEqual(await leases(redis, '{u}:c'), [{ leaseId: first, units: 1, ttlMs: 30000 }]);
  for (const cost of [1, 2]) {
    const ro = await limitAll(redis, limits, { cost, readonly: true });
    assert.deepEqual(ro, await limitAll(redis, limits, { cost, dryrun: true }));
    assert.equal(ro.limits[0].lease, null);
  }
  assert.equal((await leases(redis, '{u}:c')).length, 1);
  await redis.flushall();
  await assert.rejects(limitAll(redis, [['{u}:c', concurrency(2, 30000, { leaseId: 'x'.repeat(65) })], limits[1]]),
    /ERR LIMIT 1: ID: /);
  assert.equal(await redis.exists('{u}:c', '{u}:h'), 0);
});
