// withLease() and lease() against a real redis-server with the module, its clock frozen: a lease is held
// while the work runs and renewed by the helper's timer (the module's clock is moved past leaseMs during the
// work and the lease is still there), released when the work ends (returning, throwing, or disposed); a
// denied lease is a LeaseDeniedError and the work never starts; a lease removed behind the helper's back is
// seen as lost (held.lost, held.signal); a renewal that fails on the way is retried. Renewals happen on
// real time: the tests wait for one to be seen (bounded polling), never for a duration.
'use strict';

const { test, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const { setTimeout: sleep } = require('node:timers/promises');
const { acquire, leases, release, withLease, lease, LeaseDeniedError } = require('..');
const { client, fresh } = require('./support');

let redis;
before(() => { redis = client(); });
after(async () => { await redis.call('RL.CLOCK', 'REAL'); redis.disconnect(); });
beforeEach(() => fresh(redis));

const advance = (ms) => redis.call('RL.CLOCK', 'ADVANCE', ms);

// Until check() is true (a bound on the polling, not a timing being asserted).
async function until(check) {
  for (let i = 0; i < 1000; i++) {
    if (await check()) return true;
    await sleep(10);
  }
  return false;
}

const ttlIs = (key, ms) => async () => (await leases(redis, key)).some((l) => l.ttlMs === ms);

test('withLease renews while the work runs past leaseMs, and releases after', async () => {
  const value = await withLease(redis, 'jobs', 1, 300, async (held) => {
    assert.equal(typeof held.lease, 'string');
    assert.deepEqual(held.result, { allowed: true, limit: 1, remaining: 0, retryAfterMs: -1, resetAfterMs: 300,
      waitMs: 0, lease: held.lease });
    await advance(200);
    assert.equal(await until(ttlIs('jobs', 300)), true, 'never renewed');
    await advance(200); // 400 ms after the acquire: a lease never renewed would have expired at 300
    assert.deepEqual((await leases(redis, 'jobs')).map((l) => l.leaseId), [held.lease]);
    assert.equal((await acquire(redis, 'jobs', 1, 300)).allowed, false);
    assert.equal(held.lost, false);
    assert.ok(held.renewals >= 1);
    return 'done';
  });
  assert.equal(value, 'done');
  assert.deepEqual(await leases(redis, 'jobs'), []);
  assert.equal((await acquire(redis, 'jobs', 1, 300)).allowed, true);
});

test('a denied lease throws LeaseDeniedError with the result, and the work never starts', async () => {
  await acquire(redis, 'jobs', 1, 5000);
  await advance(1000);
  let called = false;
  const denied = await withLease(redis, 'jobs', 1, 5000, () => { called = true; }).catch((err) => err);
  assert.ok(denied instanceof LeaseDeniedError);
  assert.equal(denied.key, 'jobs');
  assert.deepEqual(denied.result, { allowed: false, limit: 1, remaining: 0, retryAfterMs: 4000, resetAfterMs: 4000,
    waitMs: 0, lease: null });
  assert.match(denied.message, /lease on jobs: denied \(retry after 4000 ms/);
  assert.equal(called, false);
  await assert.rejects(lease(redis, 'jobs', 1, 5000), LeaseDeniedError);
});

test('work that throws: its error, and the lease released', async () => {
  await assert.rejects(withLease(redis, 'jobs', 2, 30000, async () => { throw new Error('boom'); }), /boom/);
  assert.deepEqual(await leases(redis, 'jobs'), []);
});

test('a lease removed behind the helper is lost: held.lost, held.signal aborted', async () => {
  let seen;
  await withLease(redis, 'jobs', 1, 300, async (held) => {
    seen = held;
    assert.equal(held.signal.aborted, false);
    assert.equal(await release(redis, 'jobs', held.lease), true);
    assert.equal(await until(() => held.lost), true, 'the loss was never seen');
    assert.equal(held.signal.aborted, true);
    assert.match(held.signal.reason.message, /lost/);
  }, { leaseId: 'job-1' });
  assert.equal(seen.lease, 'job-1');
  assert.equal(await seen.release(), false);
});

test('lease() disposes through Symbol.asyncDispose (what `await using` calls), once', async () => {
  const held = await lease(redis, 'jobs', 3, 30000, { cost: 2 });
  assert.deepEqual(await leases(redis, 'jobs'), [{ leaseId: held.lease, units: 2, ttlMs: 30000 }]);
  await held[Symbol.asyncDispose]();
  assert.deepEqual(await leases(redis, 'jobs'), []);
  assert.equal(held.released, true);
  assert.equal(await held.release(), false);
  await assert.rejects(lease(redis, 'jobs', 3, 30000, { dryrun: true }), /dryrun and readonly take no lease/);
  await assert.rejects(lease(redis, 'jobs', 0, 30000), /ERR limit: /);
});

test('a renewal that fails on the way is kept in renewError and tried again', async () => {
  let failing = true;
  const flaky = { call: (command, ...args) => (command === 'RL.RENEW' && failing
    ? Promise.reject(new Error('connection lost')) : redis.call(command, ...args)) };
  const held = await lease(flaky, 'jobs', 1, 300);
  try {
    assert.equal(await until(() => held.renewError !== null), true);
    assert.match(held.renewError.message, /connection lost/);
    assert.equal(held.lost, false);
    failing = false;
    await advance(200);
    assert.equal(await until(ttlIs('jobs', 300)), true, 'never renewed after the failures');
    assert.equal(await until(() => held.renewError === null), true);
    assert.equal(held.lost, false);
  } finally {
    assert.equal(await held.release(), true);
  }
});
