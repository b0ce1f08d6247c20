// The quota spec (RL.QUOTA, RL.QUOTA_RO, a QUOTA clause in RL.ALL) against a real redis-server with the
// module: calendar windows in UTC and in fixed time zones, FORCE into debt and REFUND back, RL.ALL all or
// nothing with a quota, bad input as the server's error naming the argument, and the HTTP headers.
//
// The clock is frozen at 2023-11-14 22:14:15 UTC, a Tuesday (support's T0 + 15 s), so the ends of the
// day, the week (Monday 2023-11-20) and the month (2023-12-01) are exact numbers of ms away.
'use strict';

const { test, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const { quota, token, limit, limitAll, commandArgs, allArgs, quotaPolicy, rateLimitHeaders } = require('..');
const { client, fresh } = require('./support');

let redis;
before(() => { redis = client(); });
after(async () => { await redis.call('RL.CLOCK', 'REAL'); redis.disconnect(); });
beforeEach(() => fresh(redis));

const DAY = 86400000;
const TO_MIDNIGHT_UTC = 6345000; // 1 h 45 min 45 s
const TO_MONDAY = 5 * DAY + TO_MIDNIGHT_UTC; // the rest of Tuesday, then Wednesday to Sunday
const TO_DECEMBER = 16 * DAY + TO_MIDNIGHT_UTC; // November 15 to 30

const result = (allowed, lim, remaining, retryAfterMs, resetAfterMs, waitMs) =>
  ({ allowed, limit: lim, remaining, retryAfterMs, resetAfterMs, waitMs });

test('argument lists', () => {
  assert.deepEqual(commandArgs('k', quota(1000, 'DAY')), ['RL.QUOTA', 'k', 1000, 'DAY']);
  assert.deepEqual(commandArgs('k', quota(1000, 'WEEK', { offsetMinutes: -300 }), { cost: 5, readonly: true }),
    ['RL.QUOTA_RO', 'k', 1000, 'WEEK', 'OFFSET', -300, 'COST', 5]);
  assert.deepEqual(commandArgs('k', quota(10, 'MONTH'), { cost: 25, force: true, dryrun: true }),
    ['RL.QUOTA', 'k', 10, 'MONTH', 'COST', 25, 'FORCE', 'DRYRUN']);
  assert.deepEqual(allArgs([['a', token(10, 1, 1000)], ['b', quota(1000, 'MONTH', { offsetMinutes: 60 })]]),
    ['RL.ALL', 2, 'a', 'b', 'LIMIT', 'TOKEN', 10, 1, 1000, 'LIMIT', 'QUOTA', 1000, 'MONTH', 'OFFSET', 60]);
});

test('a day counts until UTC midnight', async () => {
  const spec = quota(3, 'DAY');
  assert.deepEqual(await limit(redis, 'q', spec, { cost: 2 }), result(true, 3, 1, -1, TO_MIDNIGHT_UTC, 0));
  assert.deepEqual(await limit(redis, 'q', spec, { cost: 2 }), result(false, 3, 1, TO_MIDNIGHT_UTC, TO_MIDNIGHT_UTC, 0));
  await redis.call('RL.CLOCK', 'ADVANCE', TO_MIDNIGHT_UTC); // a new day: everything is back
  assert.deepEqual(await limit(redis, 'q', spec, { cost: 3 }), result(true, 3, 0, -1, DAY, 0));
});

test('time zones, weeks and months', async () => {
  const cases = [[quota(3, 'DAY', { offsetMinutes: 60 }), 2745000], // UTC+1: the day ends at 23:00 UTC
    [quota(3, 'day', { offsetMinutes: -300 }), 24345000], // UTC-5, any case: at 05:00 UTC
    [quota(3, 'WEEK'), TO_MONDAY], [quota(3, 'MONTH'), TO_DECEMBER]];
  for (const [i, [spec, reset]] of cases.entries()) {
    assert.deepEqual(await limit(redis, `q${i}`, spec), result(true, 3, 2, -1, reset, 0), spec.period);
  }
});

test('FORCE into debt, REFUND back; DRYRUN and _RO count nothing', async () => {
  const spec = quota(3, 'MONTH');
  assert.deepEqual(await limit(redis, 'm', spec, { cost: 5, force: true }), result(true, 3, 0, -1, TO_DECEMBER, 0));
  assert.deepEqual(await limit(redis, 'm', spec, { cost: 0 }), result(false, 3, 0, TO_DECEMBER, TO_DECEMBER, 0));
  assert.equal((await limit(redis, 'm', spec, { refund: 3 })).remaining, 1); // 2 counted: the debt is paid
  assert.equal((await limit(redis, 'm', spec)).remaining, 0);
  const week = quota(2, 'WEEK');
  for (const opts of [{ dryrun: true }, { readonly: true }]) {
    assert.deepEqual(await limit(redis, 'w', week, { cost: 2, ...opts }), result(true, 2, 0, -1, TO_MONDAY, 0));
  }
  assert.equal(await redis.exists('w'), 0);
});

test('bad input is the server\'s error, naming the argument', async () => {
  const cases = [[quota(3, 'YEAR'), {}, 'period'], [quota(3, 'DAY', { offsetMinutes: 841 }), {}, 'OFFSET'],
    [quota(0, 'DAY'), {}, 'limit'], [quota(3, 'DAY'), { cost: -1 }, 'COST']];
  for (const [spec, opts, name] of cases) {
    await assert.rejects(limit(redis, 'bad', spec, opts), new RegExp(`^ReplyError: ERR ${name}: `), name);
  }
  await assert.rejects(limitAll(redis, [['{b}:s', token(10, 1, 1000)], ['{b}:q', quota(3, 'HOUR')]]),
    /ERR LIMIT 2: period: /);
  assert.equal(await redis.exists('bad', '{b}:s', '{b}:q'), 0);
  assert.throws(() => commandArgs('k', quota(3, 'DAY'), { refund: 1, force: true }));
});

test('RL.ALL with a QUOTA clause is all or nothing', async () => {
  const limits = [['{u}:s', token(10, 1, 1000)], ['{u}:d', quota(3, 'DAY')]];
  const ok = await limitAll(redis, limits, { cost: 2 });
  assert.deepEqual([ok.allowed, ok.limits.map((r) => r.remaining)], [true, [8, 1]]);
  const denied = await limitAll(redis, limits, { cost: 2 });
  assert.deepEqual([denied.allowed, denied.retryAfterMs], [false, TO_MIDNIGHT_UTC]);
  assert.deepEqual(denied.limits, [result(true, 10, 8, -1, 2000, 0),
    result(false, 3, 1, TO_MIDNIGHT_UTC, TO_MIDNIGHT_UTC, 0)]);
  // Nothing was taken.
  assert.deepEqual((await limitAll(redis, limits, { cost: 0, readonly: true })).limits.map((r) => r.remaining), [8, 1]);
  assert.deepEqual((await limitAll(redis, limits, { refund: 2 })).limits.map((r) => r.remaining), [10, 3]);
});

test('headers: the policy is the calendar period, t the end of the window', async () => {
  assert.deepEqual(quotaPolicy(quota(1000, 'DAY')), [1000, 86400]);
  assert.deepEqual(quotaPolicy(quota(1000, 'week', { offsetMinutes: 60 })), [1000, 604800]);
  assert.deepEqual(quotaPolicy(quota(1000, 'MONTH')), [1000, 2592000]); // 30 days
  assert.throws(() => quotaPolicy(quota(1000, 'YEAR')), /^Error: period: /);
  const spec = quota(2, 'DAY');
  const headers = (res) => rateLimitHeaders([['daily', spec, res]], res.allowed, res.retryAfterMs);
  assert.deepEqual(headers(await limit(redis, 'h', spec)),
    { 'RateLimit-Policy': '"daily";q=2;w=86400', RateLimit: '"daily";r=1;t=6345' });
  await limit(redis, 'h', spec);
  assert.deepEqual(headers(await limit(redis, 'h', spec)),
    { 'RateLimit-Policy': '"daily";q=2;w=86400', RateLimit: '"daily";r=0;t=6345', 'Retry-After': '6345' });
});
