// RateLimit-Policy / RateLimit / Retry-After values (draft-ietf-httpapi-ratelimit-headers-11) for each
// algorithm, from real replies at a frozen clock: the same expectations as the Python helper's tests.
'use strict';

const { test, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const { token, leaky, window, slidingLog, limit, rateLimitHeaders, quotaPolicy, sfString } = require('..');
const { client, fresh } = require('./support');

let redis;
before(() => { redis = client(); });
after(async () => { await redis.call('RL.CLOCK', 'REAL'); redis.disconnect(); });
beforeEach(() => fresh(redis));

const headers = (spec, res) => rateLimitHeaders([['default', spec, res]], res.allowed, res.retryAfterMs);

test('quota policy per algorithm', () => {
  assert.deepEqual(quotaPolicy(token(100, 10, 1000)), [100, 10]);
  assert.deepEqual(quotaPolicy(token(10, 3, 1000, { interval: true })), [10, 4]);
  assert.deepEqual(quotaPolicy(leaky(3, 3, 1000)), [3, 1]);
  assert.deepEqual(quotaPolicy(window(100, 60000, { fixed: true })), [100, 60]);
  assert.deepEqual(quotaPolicy(slidingLog(5, 1500)), [5, 2]);
  assert.deepEqual(quotaPolicy(window(10, 100)), [10, 1]);
  assert.equal(sfString('a"b\\c'), '"a\\"b\\\\c"');
  assert.throws(() => sfString('caf\u00e9'));
});

test('fixed window', async () => {
  const spec = window(3, 60000, { fixed: true });
  const got = [];
  for (let i = 0; i < 4; i++) got.push(headers(spec, await limit(redis, 'w', spec)));
  assert.deepEqual(got[0], { 'RateLimit-Policy': '"default";q=3;w=60', RateLimit: '"default";r=2;t=45' });
  assert.deepEqual(got[3], { 'RateLimit-Policy': '"default";q=3;w=60', RateLimit: '"default";r=0;t=45', 'Retry-After': '45' });
});

test('token bucket: t is the next token', async () => {
  const spec = token(10, 1, 2000);
  let res;
  for (let i = 0; i < 3; i++) res = await limit(redis, 't', spec);
  assert.deepEqual(headers(spec, res), { 'RateLimit-Policy': '"default";q=10;w=20', RateLimit: '"default";r=7;t=2' });
  res = await limit(redis, 't', spec, { cost: 8 });
  assert.deepEqual(headers(spec, res), { 'RateLimit-Policy': '"default";q=10;w=20', RateLimit: '"default";r=7;t=2', 'Retry-After': '2' });
});

test('leaky bucket policing', async () => {
  const spec = leaky(2, 1, 1500, { nodelay: true });
  let res;
  for (let i = 0; i < 3; i++) res = await limit(redis, 'l', spec);
  assert.deepEqual(headers(spec, res), { 'RateLimit-Policy': '"default";q=2;w=3', RateLimit: '"default";r=0;t=2', 'Retry-After': '2' });
});

test('sliding log: t capped by the retry', async () => {
  const spec = slidingLog(2, 10000);
  await limit(redis, 's', spec);
  await redis.call('RL.CLOCK', 'ADVANCE', 4000);
  await limit(redis, 's', spec);
  await redis.call('RL.CLOCK', 'ADVANCE', 1000);
  const res = await limit(redis, 's', spec);
  assert.deepEqual([res.retryAfterMs, res.resetAfterMs], [9000, 10000]);
  assert.equal(headers(spec, res).RateLimit, '"default";r=0;t=9');
  assert.equal(headers(spec, res)['Retry-After'], '9');
});

test('never admitted: no Retry-After, no t', async () => {
  const spec = window(5, 1000, { fixed: true });
  const got = headers(spec, await limit(redis, 'n', spec, { cost: 6 }));
  assert.equal(got['Retry-After'], undefined);
  assert.equal(got.RateLimit, '"default";r=5');
});
