// The Express middleware: in-process on a real socket (429 body and headers, unlimited paths, several
// policies in one RL.ALL, Redis down), then as two real processes (example/app.js) sharing one Redis:
// across both, exactly `limit` requests are admitted per window, each admitted request sees a distinct
// `r`, and every 429 carries the same exact headers.
'use strict';

const { test, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const readline = require('node:readline');
const { spawn } = require('node:child_process');
const Redis = require('ioredis');
const { createApp, parsePolicy } = require('../example/app');
const { PORT, client, fresh, get, getMany, assertTooMany } = require('./support');

let redis;
before(() => { redis = client(); });
after(async () => { await redis.call('RL.CLOCK', 'REAL'); redis.disconnect(); });
beforeEach(() => fresh(redis));

async function serve(policies, redisClient = redis) {
  const server = createApp(redisClient, policies.map(parsePolicy)).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return server;
}

test('admits, then 429 with the headers and a problem body', async (t) => {
  const server = await serve(['default=window:2:60000:fixed']);
  t.after(() => server.close());
  const port = server.address().port;
  const first = await get(port);
  assert.equal(first.status, 200);
  assert.equal(first.headers['ratelimit-policy'], '"default";q=2;w=60');
  assert.equal(first.headers.ratelimit, '"default";r=1;t=45');
  assert.equal(first.headers['retry-after'], undefined);
  await get(port);
  const denied = await get(port);
  assertTooMany(denied, { retryAfter: '45', ratelimit: '"default";r=0;t=45', violated: ['default'] });
  assert.equal((await get(port, { apiKey: 'bob' })).status, 200);
  const health = await get(port, { path: '/health' });
  assert.equal(health.status, 200);
  assert.equal(health.headers.ratelimit, undefined);
});

test('two policies: one RL.ALL, all or nothing', async (t) => {
  const server = await serve(['burst=token:5:1:1000', 'minute=window:2:60000:fixed']);
  t.after(() => server.close());
  const port = server.address().port;
  const ok = await get(port, { apiKey: 'carol' });
  assert.equal(ok.headers['ratelimit-policy'], '"burst";q=5;w=5, "minute";q=2;w=60');
  assert.equal(ok.headers.ratelimit, '"burst";r=4;t=1, "minute";r=1;t=45');
  await get(port, { apiKey: 'carol' });
  const denied = await get(port, { apiKey: 'carol' });
  assert.equal(denied.status, 429);
  assert.deepEqual(JSON.parse(denied.body)['violated-policies'], ['minute']);
  assert.equal(denied.headers.ratelimit, '"burst";r=3;t=1, "minute";r=0;t=45');
});

test('Redis down: 503', async (t) => {
  const dead = new Redis({ host: '127.0.0.1', port: 1, lazyConnect: true, enableOfflineQueue: false,
    maxRetriesPerRequest: 0, retryStrategy: () => null });
  const server = await serve(['default=window:2:60000'], dead);
  t.after(() => { server.close(); dead.disconnect(); });
  assert.equal((await get(server.address().port)).status, 503);
});

function startApp() {
  const app = path.join(__dirname, '..', 'example', 'app.js');
  const child = spawn(process.execPath, [app, '--redis-port', String(PORT), '--policy', 'default=window:50:60000:fixed',
    '--no-deny-cache', '--timeout-ms', '5000'], // exact counts: a check slowed by a busy machine is not a failure
    { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve) => {
    readline.createInterface({ input: child.stdout }).once('line', (line) => resolve({ child, port: Number(line.split(' ')[1]) }));
  });
}

function checkWindow(responses) {
  const admitted = responses.filter((r) => r.status === 200);
  assert.equal(admitted.length, 50);
  assert.equal(responses.filter((r) => r.status === 429).length, responses.length - 50);
  const seen = admitted.map((r) => Number(/;r=(\d+)/.exec(r.headers.ratelimit)[1])).sort((a, b) => a - b);
  assert.deepEqual(seen, Array.from({ length: 50 }, (_, i) => i));
  for (const r of responses) {
    assert.equal(r.headers['ratelimit-policy'], '"default";q=50;w=60');
    if (r.status === 429) assert.deepEqual([r.headers.ratelimit, r.headers['retry-after']], ['"default";r=0;t=45', '45']);
  }
}

test('two processes, one budget: exactly the limit per window', async (t) => {
  const apps = await Promise.all([startApp(), startApp()]);
  t.after(() => Promise.all(apps.map(({ child }) => new Promise((resolve) => {
    child.once('exit', resolve);
    child.kill('SIGTERM');
  }))));
  const ports = apps.map((a) => a.port);
  checkWindow(await getMany(ports, 40));
  await redis.call('RL.CLOCK', 'ADVANCE', 60000);
  checkWindow(await getMany(ports, 40));
});

test('allow and deny hooks: skipped or refused with 403, neither calling Redis', async (t) => {
  const app = createApp(redis, [parsePolicy('default=window:1:60000:fixed')], undefined, {
    allow: (req) => req.get('X-API-Key') === 'internal',
    deny: async (req) => req.get('X-API-Key') === 'mallory',
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  t.after(() => server.close());
  const port = server.address().port;
  await redis.config('RESETSTAT');
  for (let i = 0; i < 3; i++) {
    const ok = await get(port, { apiKey: 'internal' });
    assert.deepEqual([ok.status, ok.headers.ratelimit], [200, undefined]);
    const no = await get(port, { apiKey: 'mallory' });
    assert.deepEqual([no.status, JSON.parse(no.body).title, no.headers.ratelimit], [403, 'Forbidden', undefined]);
  }
  assert.doesNotMatch(await redis.info('commandstats'), /cmdstat_rl\./);
  assert.equal((await get(port, { apiKey: 'dave' })).status, 200);
  assert.match(await redis.info('commandstats'), /cmdstat_rl\.window:calls=1,/);
});

test('Redis down: admitted without headers (onFailure allow, or the old failOpen)', async (t) => {
  const dead = new Redis({ host: '127.0.0.1', port: 1, lazyConnect: true, enableOfflineQueue: false,
    maxRetriesPerRequest: 0, retryStrategy: () => null });
  t.after(() => dead.disconnect());
  for (const options of [{ onFailure: 'allow' }, { failOpen: true }]) {
    const server = createApp(dead, [parsePolicy('default=window:2:60000')], undefined, options).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    t.after(() => server.close());
    const res = await get(server.address().port);
    assert.deepEqual([res.status, res.body, res.headers.ratelimit], [200, 'ok\n', undefined]);
  }
});
