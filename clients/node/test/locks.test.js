// Lockouts through the helpers against a real redis-server with the module: a lockout on every spec that
// takes one locks its key on a denial, longer for a repeat offence (backoff, maxlockMs), seen by
// lockinfo(); block(), unblock() and lockinfo() by hand; a LOCKOUT clause in RL.ALL; bad input as the
// server's error naming the argument. The clock is frozen, so every lock's length is exact.
'use strict';

const { test, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const { token, leaky, window, slidingLog, quota, lockout, limit, limitAll, block, unblock, lockinfo, commandArgs,
  allArgs, parseLockinfo, rateLimitHeaders } = require('..');
const { client, fresh } = require('./support');

let redis;
before(() => { redis = client(); });
after(async () => { await redis.call('RL.CLOCK', 'REAL'); redis.disconnect(); });
beforeEach(() => fresh(redis));

const result = (allowed, lim, remaining, retryAfterMs, resetAfterMs, waitMs) =>
  ({ allowed, limit: lim, remaining, retryAfterMs, resetAfterMs, waitMs });
const info = (lockMs, strikes) => ({ lockMs, strikes, locked: lockMs > 0 });
const advance = (ms) => redis.call('RL.CLOCK', 'ADVANCE', ms);

test('argument lists', () => {
  assert.deepEqual(commandArgs('k', token(10, 1, 1000, { lockout: lockout(5000) })),
    ['RL.TOKEN', 'k', 10, 1, 1000, 'LOCKOUT', 5000]);
  const full = lockout(3600000, { backoff: 2, maxlockMs: 86400000, forgiveMs: 86400000 });
  assert.deepEqual(commandArgs('k', window(5, 900000, { fixed: true, lockout: full })),
    ['RL.WINDOW', 'k', 5, 900000, 'FIXED', 'LOCKOUT', 3600000, 'BACKOFF', 2, 'MAXLOCK', 86400000, 'FORGIVE', 86400000]);
  assert.deepEqual(commandArgs('k', slidingLog(2, 1000, { mingapMs: 10, lockout: lockout(1, { forgiveMs: 7 }) })),
    ['RL.SLIDINGLOG', 'k', 2, 1000, 'MINGAP', 10, 'LOCKOUT', 1, 'FORGIVE', 7]);
  assert.deepEqual(allArgs([['a', leaky(3, 1, 1000, { nodelay: true, lockout: lockout(9) })],
    ['b', quota(5, 'DAY', { offsetMinutes: 60, lockout: lockout(8, { backoff: 3 }) })]]),
  ['RL.ALL', 2, 'a', 'b', 'LIMIT', 'LEAKY', 3, 1, 1000, 'NODELAY', 'LOCKOUT', 9,
    'LIMIT', 'QUOTA', 5, 'DAY', 'OFFSET', 60, 'LOCKOUT', 8, 'BACKOFF', 3]);
  assert.throws(() => token(10, 1, 1000, { lockout: 5000 }), /^TypeError: lockout: /);
  assert.deepEqual(parseLockinfo([5000, 1]), info(5000, 1));
  assert.deepEqual(parseLockinfo([0, 2]), { lockMs: 0, strikes: 2, locked: false });
});

test('every spec locks its key on a denial', async () => {
  const lock = lockout(10000);
  const specs = [token(1, 1, 60000, { lockout: lock }), leaky(1, 1, 60000, { nodelay: true, lockout: lock }),
    window(1, 60000, { fixed: true, lockout: lock }), slidingLog(1, 60000, { lockout: lock }),
    quota(1, 'DAY', { lockout: lock })];
  for (const [i, spec] of specs.entries()) {
    assert.equal((await limit(redis, `k${i}`, spec)).allowed, true, spec.kind);
    assert.deepEqual(await lockinfo(redis, `k${i}`), info(0, 0), spec.kind);
    assert.equal((await limit(redis, `k${i}`, spec)).allowed, false, spec.kind);
    assert.deepEqual(await lockinfo(redis, `k${i}`), info(10000, 1), spec.kind);
  }
});

test('BACKOFF doubles the next lock, unblock forgives', async () => {
  const spec = token(1, 1, 1000, { lockout: lockout(10000, { backoff: 2, maxlockMs: 30000, forgiveMs: 60000 }) });
  assert.deepEqual(await limit(redis, 't', spec), result(true, 1, 0, -1, 1000, 0));
  // Denied: the lock starts; its record lives FORGIVE past the lock's end.
  assert.deepEqual(await limit(redis, 't', spec), result(false, 1, 0, 10000, 70000, 0));
  await advance(5000);
  assert.deepEqual(await limit(redis, 't', spec), result(false, 1, 0, 5000, 65000, 0)); // the bucket is full again
  assert.deepEqual(await lockinfo(redis, 't'), info(5000, 1));
  await advance(5000);
  assert.equal((await limit(redis, 't', spec)).allowed, true);
  assert.equal((await limit(redis, 't', spec)).retryAfterMs, 20000); // the second strike: twice as long
  assert.deepEqual(await lockinfo(redis, 't'), info(20000, 2));
  assert.equal(await unblock(redis, 't'), true);
  assert.deepEqual(await lockinfo(redis, 't'), info(0, 0));
  assert.equal(await unblock(redis, 't'), false);
});

test('the headers of a locked key: t capped at Retry-After', async () => {
  const spec = token(1, 1, 1000, { lockout: lockout(10000, { forgiveMs: 60000 }) });
  await limit(redis, 'h', spec);
  const res = await limit(redis, 'h', spec);
  assert.deepEqual(rateLimitHeaders([['login', spec, res]], res.allowed, res.retryAfterMs),
    { 'RateLimit-Policy': '"login";q=1;w=1', RateLimit: '"login";r=0;t=10', 'Retry-After': '10' });
});

test('DRYRUN and _RO start no lock; a bad lockout is the server\'s error', async () => {
  const spec = window(1, 60000, { fixed: true, lockout: lockout(10000) });
  await limit(redis, 'w', spec);
  assert.equal((await limit(redis, 'w', spec, { dryrun: true })).retryAfterMs, 45000);
  assert.equal((await limit(redis, 'w', spec, { readonly: true })).retryAfterMs, 45000);
  assert.deepEqual(await lockinfo(redis, 'w'), info(0, 0));
  const cases = [[lockout(0), 'LOCKOUT'], [lockout(1000, { backoff: 17 }), 'BACKOFF'],
    [lockout(1000, { maxlockMs: 999 }), 'MAXLOCK'], [lockout(1000, { forgiveMs: 0 }), 'FORGIVE']];
  for (const [lock, name] of cases) {
    await assert.rejects(limit(redis, 'bad', token(1, 1, 1000, { lockout: lock })),
      new RegExp(`^ReplyError: ERR ${name}: `));
  }
  assert.equal(await redis.exists('bad'), 0);
});

test('block keeps the state; a blocked new key is free when the lock ends', async () => {
  assert.deepEqual(await lockinfo(redis, 'none'), info(0, 0));
  const spec = token(3, 1, 1000);
  assert.equal((await limit(redis, 'b', spec, { cost: 2 })).remaining, 1);
  assert.equal(await block(redis, 'b', 5000), undefined);
  assert.deepEqual(await lockinfo(redis, 'b'), info(5000, 0)); // a lock by hand counts no strike
  assert.deepEqual(await limit(redis, 'b', spec), result(false, 3, 0, 5000, 5000, 0));
  assert.equal(await unblock(redis, 'b'), true);
  assert.equal((await limit(redis, 'b', spec)).remaining, 0); // the bucket as it was: 1 left, now taken
  await block(redis, 'n', 2000);
  assert.deepEqual(await limit(redis, 'n', window(5, 60000, { fixed: true })), result(false, 5, 0, 2000, 2000, 0));
  await advance(2000);
  assert.deepEqual(await lockinfo(redis, 'n'), info(0, 0));
  assert.equal((await limit(redis, 'n', window(5, 60000, { fixed: true }))).remaining, 4);
});

test('block, unblock, lockinfo: bad input is the server\'s error', async () => {
  await assert.rejects(block(redis, 'b', 0), /^ReplyError: ERR ms: /);
  assert.equal(await redis.exists('b'), 0);
  await redis.set('s', 'a string');
  await assert.rejects(block(redis, 's', 1000), /WRONGTYPE/);
  await assert.rejects(unblock(redis, 's'), /WRONGTYPE/);
  await assert.rejects(lockinfo(redis, 's'), /WRONGTYPE/);
  assert.equal(await redis.get('s'), 'a string');
});

test('RL.ALL: a LOCKOUT clause locks on a denied call, a locked key denies the call', async () => {
  const limits = [['{u}:s', token(10, 1, 60000)],
    ['{u}:l', window(1, 60000, { fixed: true, lockout: lockout(60000) })]];
  assert.equal((await limitAll(redis, limits)).allowed, true);
  await advance(10000); // the window has 35 s left, less than the lock will hold
  const denied = await limitAll(redis, limits);
  assert.deepEqual([denied.allowed, denied.retryAfterMs], [false, 60000]);
  // The lock is the one write of the denied call: the bucket kept its token.
  assert.deepEqual(await lockinfo(redis, '{u}:l'), info(60000, 1));
  assert.deepEqual((await limitAll(redis, limits, { cost: 0, readonly: true })).limits.map((r) => r.remaining), [9, 0]);
  await advance(35000); // a new window, but the lock holds 25 s longer: the whole call is denied
  const locked = await limitAll(redis, limits);
  assert.deepEqual([locked.allowed, locked.limits.map((r) => r.allowed)], [false, [true, false]]);
  // The lock's record lives until its strike is forgiven: 25 s, then the lock's own 60 s.
  assert.deepEqual(locked.limits[1], result(false, 1, 0, 25000, 85000, 0));
  await unblock(redis, '{u}:l');
  assert.equal((await limitAll(redis, limits)).allowed, true);
  const withQuota = [['{v}:s', token(10, 1, 1000)], ['{v}:q', quota(100, 'MONTH')]];
  await block(redis, '{v}:q', 3000);
  const out = await limitAll(redis, withQuota);
  assert.deepEqual([out.allowed, out.retryAfterMs], [false, 3000]);
  assert.equal(await redis.exists('{v}:s'), 0);
});
