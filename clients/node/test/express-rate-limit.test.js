// The express-rate-limit store (lib/adapters/express-rate-limit.js) with the real express-rate-limit 8.7.5:
// a real Express app on a real socket (the library's headers, its 429, the reset after the window,
// skipFailedRequests and skipSuccessfulRequests, two apps sharing one Redis), then the store's calls one by
// one (increment, decrement, get, resetKey, the sliding counter, bad options).
//
// The idea: the module's test clock is frozen, and so is this process's Date (node:test's mock timers, Date
// only), at the same instant; the two move together. Every reset time and header the library computes from
// Date.now() is then exact, and the tests compare them exactly, never timing anything.
'use strict';

const { test, before, after, beforeEach, afterEach, mock } = require('node:test');
const assert = require('node:assert/strict');
const { setTimeout: sleep } = require('node:timers/promises');
const express = require('express');
const { rateLimit } = require('express-rate-limit');
const { ExpressRateLimitStore } = require('..');
const { T0, client, fresh, get } = require('./support');

let redis;
before(() => { redis = client(); });
after(async () => { await redis.call('RL.CLOCK', 'REAL'); redis.disconnect(); });
beforeEach(async () => {
  await fresh(redis);                                   // module clock at T0 + 15 s, 45 s before a minute ends
  await redis.config('RESETSTAT');
  mock.timers.enable({ apis: ['Date'], now: T0 + 15000 });
});
afterEach(() => mock.timers.reset());

// Both clocks forward by ms.
async function advance(ms) {
  await redis.call('RL.CLOCK', 'ADVANCE', ms);
  mock.timers.tick(ms);
}

// How many times the server ran a command (INFO commandstats), e.g. 'rl.window'.
async function calls(command) {
  const match = new RegExp(`cmdstat_${command.replace('.', '\\.')}:calls=(\\d+)`).exec(await redis.info('commandstats'));
  return match ? Number(match[1]) : 0;
}

// A logger that keeps what the library logs (its validations report misuse there).
function keepingLogger() {
  const lines = [];
  return { lines, warn: (...args) => lines.push(['warn', ...args]), error: (...args) => lines.push(['error', ...args]) };
}

// A store that counts its finished decrements, so a test can wait until the library's have all landed.
class CountingStore extends ExpressRateLimitStore {
  constructor(opts) {
    super(opts);
    this.decrements = 0;
  }

  async decrement(key) {
    await super.decrement(key);
    this.decrements += 1;
  }
}

// Until the store has finished `count` decrements (a bound on the polling, not a timing being asserted).
async function decrementsDone(store, count) {
  for (let i = 0; i < 2000 && store.decrements < count; i++) await sleep(5);
  assert.equal(store.decrements, count, 'the decrements the library sends');
}

// An Express app limited by rateLimit(options) with the store; /ok answers 200, /fail 500. The client key is
// the X-API-Key header.
async function serve(t, options) {
  const logger = keepingLogger();
  const app = express();
  app.use(rateLimit({ keyGenerator: (req) => req.get('X-API-Key'), logger, ...options }));
  app.get('/ok', (req, res) => res.send('ok'));
  app.get('/fail', (req, res) => res.status(500).send('failed'));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  t.after(() => server.close());
  return { port: server.address().port, logger };
}

test('a real Express app: the library\'s headers, 429 after the limit, one RL.WINDOW call per request', async (t) => {
  const store = new ExpressRateLimitStore({ redis });
  const { port, logger } = await serve(t, { store, limit: 3, windowMs: 60000, standardHeaders: 'draft-7' });
  const first = await get(port, { path: '/ok' });
  assert.equal(first.status, 200);
  assert.equal(first.headers['ratelimit-policy'], '3;w=60');
  assert.equal(first.headers.ratelimit, 'limit=3, remaining=2, reset=45');   // the epoch-aligned minute's end
  assert.equal(first.headers['x-ratelimit-limit'], '3');
  assert.equal(first.headers['x-ratelimit-remaining'], '2');
  assert.equal(first.headers['x-ratelimit-reset'], String((T0 + 60000) / 1000));
  assert.equal((await get(port, { path: '/ok' })).headers.ratelimit, 'limit=3, remaining=1, reset=45');
  assert.equal((await get(port, { path: '/ok' })).headers.ratelimit, 'limit=3, remaining=0, reset=45');
  for (let i = 0; i < 3; i++) {
    const denied = await get(port, { path: '/ok' });
    assert.equal(denied.status, 429);
    assert.equal(denied.body, 'Too many requests, please try again later.');
    assert.equal(denied.headers['retry-after'], '45');
    assert.equal(denied.headers.ratelimit, 'limit=3, remaining=0, reset=45');
  }
  assert.equal((await get(port, { path: '/ok', apiKey: 'bob' })).status, 200);   // another key, its own count
  assert.equal(await calls('rl.window'), 7, 'one RL.WINDOW per request, nothing else');
  assert.deepEqual(await redis.call('RL.WINDOW_RO', 'erl:alice', 3, 60000, 'FIXED', 'COST', 0),
    [1, 3, 0, -1, 45000, 0], 'the three denials counted nothing');

  await advance(44999);
  const last = await get(port, { path: '/ok' });
  assert.equal(last.status, 429);
  assert.equal(last.headers['retry-after'], '1');
  await advance(1);                                      // the window has ended: a new count
  const next = await get(port, { path: '/ok' });
  assert.equal(next.status, 200);
  assert.equal(next.headers.ratelimit, 'limit=3, remaining=2, reset=60');
  assert.deepEqual(logger.lines, [], 'the library logged nothing (no validation failed)');
});

test('the draft-8 headers, and limit/windowMs taken from the library\'s options', async (t) => {
  const store = new ExpressRateLimitStore({ redis, prefix: 'api:' });
  const { port } = await serve(t, { store, limit: 1, windowMs: 10000, standardHeaders: 'draft-8',
    legacyHeaders: false, identifier: 'burst' });
  const ok = await get(port, { path: '/ok' });
  assert.match(ok.headers['ratelimit-policy'], /^"burst"; q=1; w=10; pk=:[A-Za-z0-9+/=]+:$/);
  assert.equal(ok.headers.ratelimit, '"burst"; r=0; t=5');       // T0 + 15 s: the 10 s window ends at T0 + 20 s
  assert.equal(ok.headers['x-ratelimit-limit'], undefined);
  const denied = await get(port, { path: '/ok' });
  assert.equal(denied.status, 429);
  assert.equal(denied.headers['retry-after'], '5');
  assert.equal(await redis.exists('api:alice'), 1, 'the store\'s prefix');
});

test('two apps, one store each, sharing Redis: the limit holds across both', async (t) => {
  const a = await serve(t, { store: new ExpressRateLimitStore({ redis }), limit: 5, windowMs: 60000 });
  const b = await serve(t, { store: new ExpressRateLimitStore({ redis }), limit: 5, windowMs: 60000 });
  const statuses = [];
  for (let i = 0; i < 6; i++) statuses.push((await get(i % 2 ? b.port : a.port, { path: '/ok' })).status);
  assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
});

test('skipFailedRequests: a failed request is given back (REFUND), a 429 gives back nothing', async (t) => {
  const store = new CountingStore({ redis });
  const { port, logger } = await serve(t, { store, limit: 2, windowMs: 60000, skipFailedRequests: true,
    standardHeaders: 'draft-7' });
  for (let i = 0; i < 3; i++) {
    assert.equal((await get(port, { path: '/fail' })).status, 500);
    await decrementsDone(store, i + 1);
  }
  assert.equal(await store.get('alice'), undefined, 'the three failures were refunded: the window is empty');
  assert.equal((await get(port, { path: '/ok' })).headers.ratelimit, 'limit=2, remaining=1, reset=45');
  assert.equal((await get(port, { path: '/ok' })).status, 200);
  const refundsBefore = await calls('rl.window');
  // The library decrements each 429 (a failure): the store must not refund for a request it never counted.
  for (let i = 0; i < 3; i++) {
    assert.equal((await get(port, { path: '/ok' })).status, 429);
    await decrementsDone(store, 4 + i);
  }
  assert.equal(await calls('rl.window'), refundsBefore + 3, 'three denials, three calls, no REFUND');
  assert.deepEqual(await store.get('alice'), { totalHits: 2, resetTime: new Date(T0 + 60000) });
  assert.equal(store.denials.size, 0, 'every remembered denial was paid by its decrement');
  assert.equal((await get(port, { path: '/fail' })).status, 429, 'still full');
  await decrementsDone(store, 7);
  assert.deepEqual(logger.lines, []);
});

test('skipSuccessfulRequests: a success is given back, a 429 is not decremented by the library', async (t) => {
  const store = new CountingStore({ redis });
  const { port } = await serve(t, { store, limit: 2, windowMs: 60000, skipSuccessfulRequests: true });
  for (let i = 0; i < 3; i++) {
    assert.equal((await get(port, { path: '/ok' })).status, 200);
    await decrementsDone(store, i + 1);
  }
  assert.equal(await store.get('alice'), undefined);
  assert.equal((await get(port, { path: '/fail' })).status, 500);
  assert.equal((await get(port, { path: '/fail' })).status, 500);
  assert.equal((await get(port, { path: '/ok' })).status, 429);
  assert.equal(store.denials.size, 0, 'a denial the library will not decrement is not remembered');
  assert.equal(store.decrements, 3);
  assert.deepEqual(await store.get('alice'), { totalHits: 2, resetTime: new Date(T0 + 60000) });
});

test('increment: totalHits and resetTime exact, a denial is limit + 1 and counts nothing', async () => {
  const store = new ExpressRateLimitStore({ redis });
  store.init({ limit: 2, windowMs: 60000, statusCode: 429 });
  const end = new Date(T0 + 60000);
  assert.deepEqual(await store.increment('k'), { totalHits: 1, resetTime: end });
  assert.deepEqual(await store.increment('k'), { totalHits: 2, resetTime: end });
  assert.deepEqual(await store.increment('k'), { totalHits: 3, resetTime: end });
  assert.deepEqual(await store.increment('k'), { totalHits: 3, resetTime: end }, 'not 4: denials are not counted');
  assert.deepEqual(await store.get('k'), { totalHits: 2, resetTime: end });
  await advance(45000);
  assert.equal(await store.get('k'), undefined, 'the window ended');
  assert.deepEqual(await store.increment('k'), { totalHits: 1, resetTime: new Date(T0 + 120000) });
});

test('decrement is REFUND 1, never below 0; resetKey is RL.RESET', async () => {
  const store = new ExpressRateLimitStore({ redis });
  store.init({ limit: 5, windowMs: 60000, statusCode: 429 });
  await store.increment('k');
  await store.increment('k');
  await store.decrement('k');
  assert.equal((await store.get('k')).totalHits, 1);
  await store.decrement('k');
  await store.decrement('k');
  assert.equal(await store.get('k'), undefined, 'an empty window');
  assert.equal(await store.get('never-seen'), undefined);
  await store.increment('k');
  await store.resetKey('k');
  assert.equal(await redis.exists('erl:k'), 0);
  assert.equal((await store.increment('k')).totalHits, 1);
});

test('the denials a decrement will follow: read from the library\'s options', async () => {
  const cases = [
    [{ skipFailedRequests: true }, true],
    [{ skipSuccessfulRequests: true }, false],
    [{ skipFailedRequests: true, skipSuccessfulRequests: true }, true],
    [{}, false],
    [{ skipFailedRequests: true, statusCode: 303 }, false],                 // a redirect is a success
    [{ skipSuccessfulRequests: true, statusCode: 303 }, true],
  ];
  for (const [options, remembered] of cases) {
    const store = new ExpressRateLimitStore({ redis });
    store.init({ limit: 1, windowMs: 60000, statusCode: 429, ...options });
    assert.equal(store.denialsDecremented, remembered, JSON.stringify(options));
  }
  const own = new ExpressRateLimitStore({ redis, denialWasSuccessful: true });
  own.init({ limit: 1, windowMs: 60000, statusCode: 429, skipSuccessfulRequests: true });
  assert.equal(own.denialsDecremented, true, 'your own requestWasSuccessful, as denialWasSuccessful says');

  // skipSuccessfulRequests: a success admitted before a denial is still refunded after it.
  const store = new ExpressRateLimitStore({ redis });
  store.init({ limit: 1, windowMs: 60000, statusCode: 429, skipSuccessfulRequests: true });
  await store.increment('s');
  assert.equal((await store.increment('s')).totalHits, 2);
  await store.decrement('s');
  assert.equal(await store.get('s'), undefined);
  // skipFailedRequests: a remembered denial is owed only until its reset time (the library sends nothing later).
  const failing = new ExpressRateLimitStore({ redis });
  failing.init({ limit: 1, windowMs: 60000, statusCode: 429, skipFailedRequests: true });
  await failing.increment('f');
  await failing.increment('f');
  await advance(45000);
  await failing.increment('f');
  await failing.decrement('f');
  assert.equal(await failing.get('f'), undefined, 'refunded: the old denial was no longer owed');
});

test('sliding: true is the sliding-window counter', async () => {
  const store = new ExpressRateLimitStore({ redis, sliding: true });
  store.init({ limit: 4, windowMs: 60000, statusCode: 429 });
  for (let i = 0; i < 4; i++) await store.increment('s');
  await advance(60000);                                   // 15 s into the next minute: the 4 weigh 3
  assert.deepEqual(await store.increment('s'), { totalHits: 4, resetTime: new Date(T0 + 180000) });
  // Denied: 4 * 45/60 + 1 + 1 > 4. One fits again when the old window weighs 2: 30 s into it, 15 s from now.
  assert.deepEqual(await store.increment('s'), { totalHits: 5, resetTime: new Date(T0 + 90000) });
  assert.deepEqual(await redis.call('RL.WINDOW_RO', 'erl:s', 4, 60000, 'SLIDING', 'COST', 0),
    [1, 4, 0, -1, 105000, 0]);
});

test('bad options: an error naming the option, and nothing written', async () => {
  assert.throws(() => new ExpressRateLimitStore({}), /^TypeError: redis: an ioredis Redis or Cluster is needed$/);
  assert.throws(() => new ExpressRateLimitStore({ redis, prefix: 3 }), /^TypeError: prefix: must be a string/);
  assert.throws(() => new ExpressRateLimitStore({ redis, sliding: 'yes' }), /^TypeError: sliding: must be true or false/);
  assert.throws(() => new ExpressRateLimitStore({ redis, denialWasSuccessful: 1 }), /denialWasSuccessful: must be/);
  const store = new ExpressRateLimitStore({ redis });
  await assert.rejects(store.increment('k'), /^Error: init: not called yet/);
  for (const [options, message] of [
    [{ limit: () => 5, windowMs: 60000 }, /^TypeError: limit: a function of the request is not supported/],
    [{ limit: 0, windowMs: 60000 }, /^RangeError: limit: must be a whole number from 1 to 10\^12 for RL.WINDOW, not 0$/],
    [{ limit: 2.5, windowMs: 60000 }, /limit: must be a whole number .* not 2.5$/],
    [{ limit: 5, windowMs: 0 }, /^RangeError: windowMs: must be a whole number .* not 0$/],
    [{ limit: 5, windowMs: '60000' }, /windowMs: must be a whole number .* not 60000$/],
  ]) {
    assert.throws(() => store.init({ statusCode: 429, ...options }), message);
    await assert.rejects(store.increment('k'), message, 'every call rejects with init\'s error');
    await assert.rejects(store.get('k'), message);
  }
  assert.deepEqual(await redis.keys('*'), []);
  // Through the library: init's error is logged at rateLimit(), and a request fails with it.
  const logger = keepingLogger();
  rateLimit({ store: new ExpressRateLimitStore({ redis }), limit: () => 5, logger });
  assert.match(String(logger.lines[0][1]), /limit: a function of the request is not supported/);
});
