// The Fastify plugin (lib/fastify.js) through its example app (example/fastify-app.js) listening on a real
// socket: the plugin's policies on a root route and on a route of a child context (the plugin reaches
// outside its own), a route's own policies, an unlimited route, the 429's headers and body, the allow and
// deny hooks (neither calls Redis, counted by INFO commandstats), and Redis down in each failure mode.
'use strict';

const { test, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const Fastify = require('fastify');
const Redis = require('ioredis');
const { createApp } = require('../example/fastify-app');
const { parsePolicy } = require('../example/app');
const { rateLimitPlugin } = require('../lib/fastify');
const { client, fresh, get, assertTooMany } = require('./support');

let redis;
before(() => { redis = client(); });
after(async () => { await redis.call('RL.CLOCK', 'REAL'); redis.disconnect(); });
beforeEach(async () => {
  await fresh(redis);
  await redis.config('RESETSTAT');
});

async function serve(app, t) {
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  return app.server.address().port;
}

async function rlCalls() {
  const stats = await redis.info('commandstats');
  return [...stats.matchAll(/^cmdstat_rl\.[a-z_]+:calls=(\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

const deadRedis = () => new Redis({ host: '127.0.0.1', port: 1, lazyConnect: true, enableOfflineQueue: false,
  maxRetriesPerRequest: 0, retryStrategy: () => null });

test('the plugin\'s policies: admits, then 429 with the headers and a problem body; a child context\'s route too', async (t) => {
  const port = await serve(await createApp(redis, [parsePolicy('default=window:2:60000:fixed')], [parsePolicy('search=token:5:1:1000')]), t);
  const first = await get(port);
  assert.equal(first.status, 200);
  assert.equal(first.body, 'ok\n');
  assert.equal(first.headers['ratelimit-policy'], '"default";q=2;w=60');
  assert.equal(first.headers.ratelimit, '"default";r=1;t=45');
  const child = await get(port, { path: '/v2/items' }); // the same policy and client key: the same budget
  assert.equal(child.status, 200);
  assert.deepEqual(JSON.parse(child.body), { items: [], remaining: 0 });
  const denied = await get(port);
  assertTooMany(denied, { retryAfter: '45', ratelimit: '"default";r=0;t=45', violated: ['default'] });
  assert.equal((await get(port, { path: '/v2/items' })).status, 429);
  assert.equal((await get(port, { apiKey: 'bob' })).status, 200);
  const health = await get(port, { path: '/health' });
  assert.deepEqual([health.status, health.headers.ratelimit], [200, undefined]);
});

test('a route\'s own policies: its own budget and headers', async (t) => {
  const port = await serve(await createApp(redis, [parsePolicy('default=window:2:60000:fixed')], [parsePolicy('search=token:2:1:1000')]), t);
  const first = await get(port, { path: '/search' });
  assert.deepEqual([first.status, first.headers['ratelimit-policy'], first.headers.ratelimit],
    [200, '"search";q=2;w=2', '"search";r=1;t=1']);
  await get(port, { path: '/search' });
  const denied = await get(port, { path: '/search' });
  assert.deepEqual([denied.status, denied.headers['retry-after']], [429, '1']);
  assert.deepEqual(JSON.parse(denied.body)['violated-policies'], ['search']);
  assert.equal((await get(port)).headers.ratelimit, '"default";r=1;t=45'); // untouched by /search
});

test('without plugin policies only routes with their own are limited; a bad config.rateLimit is refused', async (t) => {
  const app = Fastify();
  await app.register(rateLimitPlugin, { redis });
  app.get('/free', async () => 'free\n');
  app.get('/paid', { config: { rateLimit: { policies: [parsePolicy('paid=window:1:60000:fixed')] } } }, async () => 'paid\n');
  const port = await serve(app, t);
  assert.equal((await get(port, { path: '/free' })).headers.ratelimit, undefined);
  assert.equal((await get(port, { path: '/paid' })).status, 200);
  assert.equal((await get(port, { path: '/paid' })).status, 429);
  const bad = Fastify();
  t.after(() => bad.close());
  await bad.register(rateLimitPlugin, { redis });
  assert.throws(() => bad.get('/x', { config: { rateLimit: true } }, async () => 'x'), /config.rateLimit: must be an object of options or false, not true/);
  const none = Fastify();
  t.after(() => none.close());
  await none.register(rateLimitPlugin, { redis });
  assert.throws(() => none.get('/y', { config: { rateLimit: { prefix: 'p:' } } }, async () => 'y'), /route GET \/y: config.rateLimit has no policies, nor has the plugin/);
});

test('allow and deny hooks: skipped or refused with 403, neither calling Redis', async (t) => {
  const port = await serve(await createApp(redis, [parsePolicy('default=window:1:60000:fixed')], [parsePolicy('search=token:5:1:1000')], {
    allow: (request) => request.headers['x-api-key'] === 'internal',
    deny: async (request) => request.headers['x-api-key'] === 'mallory',
  }), t);
  for (let i = 0; i < 3; i++) {
    const ok = await get(port, { apiKey: 'internal' });
    assert.deepEqual([ok.status, ok.headers.ratelimit], [200, undefined]);
    const no = await get(port, { apiKey: 'mallory' });
    assert.deepEqual([no.status, JSON.parse(no.body).status, no.headers.ratelimit], [403, 403, undefined]);
    assert.match(no.headers['content-type'], /^application\/problem\+json/);
  }
  assert.equal(await rlCalls(), 0);
  assert.equal((await get(port, { apiKey: 'carol' })).status, 200);
  assert.equal(await rlCalls(), 1);
});

test('Redis down: 503 (deny), admitted without headers (allow)', async (t) => {
  const dead = deadRedis();
  t.after(() => dead.disconnect());
  const policies = [parsePolicy('default=window:2:60000:fixed')];
  const denyPort = await serve(await createApp(dead, policies, policies, { logger: null }), t);
  const refused = await get(denyPort);
  assert.deepEqual([refused.status, refused.body], [503, 'rate limiter unavailable\n']);
  const allowPort = await serve(await createApp(dead, policies, policies, { onFailure: 'allow' }), t);
  const through = await get(allowPort);
  assert.deepEqual([through.status, through.headers.ratelimit], [200, undefined]);
});
