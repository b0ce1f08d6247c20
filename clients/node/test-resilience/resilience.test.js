// What createLimiter and the middlewares do when Redis fails, against a redis-server of this file's own
// (server.js) that is stopped (SHUTDOWN NOSAVE), killed (SIGKILL), put to sleep (DEBUG SLEEP), paused
// (CLIENT PAUSE WRITE) and restarted on the same port: for each failure mode, the decisions during the
// outage and after the return, the log lines and counters each way, and no unhandled rejection from the
// replies that come after their timeout.
//
// The limiter's own clock (`now`: the cache, the local limiter, when Redis is tried again) is injected and
// moved by hand, and the module's is frozen, so every value is exact. A timeout is made certain rather
// than raced: the test's DEBUG SLEEP goes first on the limiter's own connection, so the limiter's command
// cannot be answered before the sleep ends (1 s, against a timeout of 50 ms).
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const express = require('express');
const Redis = require('ioredis');
const { token, window, createLimiter, rateLimit } = require('..');
const { get } = require('../test/support');
const { TestServer, reconnected } = require('./server');

const T0 = (Math.floor(1700000000000 / 60000) + 1) * 60000 + 15000; // 45 s before a minute ends
const server = new TestServer();
const unhandled = [];
const onUnhandled = (err) => unhandled.push(err);

before(async () => {
  process.on('unhandledRejection', onUnhandled);
  await server.start(T0);
});
after(async () => {
  await server.stop();
  process.off('unhandledRejection', onUnhandled);
});

// The client an application should give the limiter (clients/node/README.md, "Failure modes"): commands
// fail at once while disconnected instead of queueing, and it reconnects on its own.
// (An 'error' listener: ioredis reports each failed reconnection there, and prints it without one.)
function appClient() {
  return new Redis({ host: '127.0.0.1', port: server.port, enableOfflineQueue: false, maxRetriesPerRequest: 1,
    retryStrategy: () => 20 }).on('error', () => {});
}

function setup({ onFailure, policies = [{ name: 'w', spec: window(3, 60000, { fixed: true }) }], client = appClient() }) {
  const clock = { ms: T0 };
  const logs = [];
  const limiter = createLimiter({ redis: client, policies, onFailure, retryMs: 1000, denyCache: false,
    now: () => clock.ms, logger: { warn: (message) => logs.push(message) } });
  return { client, clock, logs, limiter };
}

const brief = (d) => [d.source, d.allowed, d.items.map(([, , r]) => r.remaining)];

// An Express app limited by `middleware` on a free port of 127.0.0.1; closed with its client after the test.
async function serveExpress(t, client, middleware) {
  const app = express();
  app.use(middleware);
  app.get('/', (req, res) => res.send('ok\n'));
  const http = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => http.once('listening', resolve));
  t.after(() => { http.close(); client.disconnect(); });
  return http.address().port;
}

async function restart(client) {
  await server.start(T0);
  await reconnected(client);
}

test('local: stopped, the local limiter takes over and enforces its limit; restarted, Redis takes back', async (t) => {
  const { client, clock, logs, limiter } = setup({ onFailure: 'local' });
  t.after(() => client.disconnect());
  await reconnected(client);
  assert.deepEqual(brief(await limiter.check('alice')), ['redis', true, [2]]);
  await server.shutdown();
  assert.deepEqual(brief(await limiter.check('alice')), ['local', true, [2]]); // a new limiter: this process's own
  assert.equal(logs.length, 1);
  assert.match(logs[0], /^ratelimit: Redis failed \(.+\): the local limiter takes over, Redis is tried again every 1000 ms$/);
  assert.deepEqual(brief(await limiter.check('alice')), ['local', true, [1]]);
  assert.deepEqual(brief(await limiter.check('alice')), ['local', true, [0]]);
  const denied = await limiter.check('alice');
  assert.deepEqual([...brief(denied), denied.retryAfterMs], ['local', false, [0], 45000]);
  assert.deepEqual([limiter.stats.toLocal, limiter.stats.failures, limiter.mode], [1, 1, 'local']); // Redis not tried
  clock.ms += 1000; // tried again, still down: local, no new log line
  assert.deepEqual(brief(await limiter.check('alice')), ['local', false, [0]]);
  assert.deepEqual([limiter.stats.failures, logs.length], [2, 1]);
  await restart(client);
  assert.equal((await limiter.check('alice')).source, 'local'); // not before retryMs has passed
  clock.ms += 1000;
  assert.deepEqual(brief(await limiter.check('alice')), ['redis', true, [2]]); // the server came back empty
  assert.equal(logs.length, 2);
  assert.equal(logs[1], 'ratelimit: Redis answers again: it decides from now on, the local limiter stands by');
  assert.deepEqual(brief(await limiter.check('alice')), ['redis', true, [1]]);
  assert.deepEqual(limiter.stats, { calls: 9, redis: 5, local: 6, cacheHits: 0, failures: 2, timeouts: 0,
    toLocal: 1, toRedis: 1 });
});

test('local: DEBUG SLEEP times the call out; the late reply is dropped, and it was counted by Redis', async (t) => {
  const { client, clock, logs, limiter } = setup({ onFailure: 'local',
    policies: [{ name: 'b', spec: token(5, 1, 60000) }, { name: 'w', spec: window(3, 60000, { fixed: true }) }] });
  t.after(() => client.disconnect());
  await reconnected(client);
  assert.deepEqual(brief(await limiter.check('bob')), ['redis', true, [4, 2]]);
  const asleep = client.call('DEBUG', 'SLEEP', '1');
  const during = await limiter.check('bob');
  assert.deepEqual(brief(during), ['local', true, [4, 2]]);
  assert.deepEqual([limiter.stats.timeouts, limiter.stats.toLocal, logs.length], [1, 1, 1]);
  assert.match(logs[0], /no reply from Redis within 50 ms/);
  assert.equal(await asleep, 'OK');
  clock.ms += 1000;
  // Redis ran the command that timed out, once awake: a timed-out call may still have been counted.
  assert.deepEqual(brief(await limiter.check('bob')), ['redis', true, [2, 0]]);
  assert.deepEqual([limiter.stats.toRedis, logs.length], [1, 2]);
});

test('local: CLIENT PAUSE WRITE holds the calls; each times out, then Redis takes back', async (t) => {
  const { client, clock, logs, limiter } = setup({ onFailure: 'local' });
  const ctl = server.control();
  t.after(() => { client.disconnect(); ctl.disconnect(); });
  await reconnected(client);
  await ctl.call('CLIENT', 'PAUSE', 30000, 'WRITE');
  t.after(() => ctl.call('CLIENT', 'UNPAUSE').catch(() => {}));
  assert.deepEqual(brief(await limiter.check('carol')), ['local', true, [2]]);
  clock.ms += 1000;
  assert.deepEqual(brief(await limiter.check('carol')), ['local', true, [1]]); // tried, held again
  assert.deepEqual([limiter.stats.timeouts, limiter.stats.toLocal, logs.length], [2, 1, 1]);
  await ctl.call('CLIENT', 'UNPAUSE');
  clock.ms += 1000;
  const back = await limiter.check('carol');
  assert.deepEqual([back.source, back.allowed, limiter.stats.toRedis], ['redis', true, 1]);
});

test('deny: killed, every call is a failure (Express: 503); restarted, decided by Redis again', async (t) => {
  // ioredis's defaults: while disconnected it queues commands, and only the timeout answers.
  const client = new Redis({ host: '127.0.0.1', port: server.port, retryStrategy: () => 20 }).on('error', () => {});
  const logs = [];
  const port = await serveExpress(t, client, rateLimit({ redis: client,
    policies: [{ name: 'w', spec: window(3, 60000, { fixed: true }) }], onFailure: 'deny', logger: { warn: (m) => logs.push(m) } }));
  await reconnected(client);
  assert.equal((await get(port)).status, 200);
  await server.kill();
  for (let i = 0; i < 3; i++) {
    const res = await get(port);
    assert.deepEqual([res.status, res.body, res.headers.ratelimit], [503, 'rate limiter unavailable\n', undefined]);
  }
  await restart(client);
  const res = await get(port, { apiKey: 'dave' });
  assert.deepEqual([res.status, res.headers.ratelimit], [200, '"w";r=2;t=45']);
  assert.deepEqual(logs, []); // deny logs nothing: each 503 is the log
});

test('allow: stopped, requests go through without headers; restarted, limited again', async (t) => {
  const client = appClient();
  const port = await serveExpress(t, client, rateLimit({ redis: client,
    policies: [{ name: 'w', spec: window(1, 60000, { fixed: true }) }], onFailure: 'allow' }));
  await reconnected(client);
  await server.shutdown();
  for (let i = 0; i < 3; i++) {
    const res = await get(port, { apiKey: 'erin' });
    assert.deepEqual([res.status, res.headers.ratelimit], [200, undefined]);
  }
  await restart(client);
  assert.equal((await get(port, { apiKey: 'erin' })).headers.ratelimit, '"w";r=0;t=45');
  assert.equal((await get(port, { apiKey: 'erin' })).status, 429);
});

test('local through Express: stopped, 200 then 429 with the local limiter\'s headers; restarted, Redis\'s', async (t) => {
  const client = appClient();
  const clock = { ms: T0 };
  const middleware = rateLimit({ redis: client, policies: [{ name: 'w', spec: window(2, 60000, { fixed: true }) }],
    onFailure: 'local', now: () => clock.ms, logger: null });
  const port = await serveExpress(t, client, middleware);
  await reconnected(client);
  await server.shutdown();
  const first = await get(port, { apiKey: 'frank' });
  assert.deepEqual([first.status, first.headers.ratelimit], [200, '"w";r=1;t=45']);
  await get(port, { apiKey: 'frank' });
  const denied = await get(port, { apiKey: 'frank' });
  assert.deepEqual([denied.status, denied.headers['retry-after'], JSON.parse(denied.body)['violated-policies']], [429, '45', ['w']]);
  await restart(client);
  clock.ms += 1000;
  const back = await get(port, { apiKey: 'frank' });
  assert.deepEqual([back.status, back.headers.ratelimit], [200, '"w";r=1;t=45']);
  assert.deepEqual([middleware.limiter.stats.toLocal, middleware.limiter.stats.toRedis], [1, 1]);
});

test('no unhandled rejection from the replies and errors that came after their timeout', async () => {
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(unhandled, []);
});
