// Shared test support: the real redis-server that run-tests.sh started (RL_REDIS_PORT, module loaded with
// test-clock), a frozen clock at a known instant, and plain HTTP GETs (one connection each).
//
// The idea: with the module's clock frozen every reply field is exact, so the tests compare header
// values and admitted counts exactly and never depend on timing.
'use strict';

const assert = require('node:assert/strict');
const http = require('node:http');
const { setTimeout: sleep } = require('node:timers/promises');
const Redis = require('ioredis');

const PORT = Number(process.env.RL_REDIS_PORT || 0);
// A minute boundary: T0 + 15 s is 45 s before the window of 60 s ends.
const T0 = (Math.floor(1700000000000 / 60000) + 1) * 60000;

function client(opts = {}) {
  if (!PORT) throw new Error('RL_REDIS_PORT is not set (run clients/node/run-tests.sh)');
  return new Redis({ host: '127.0.0.1', port: PORT, ...opts });
}

// Empty database, clock frozen at T0 + 15 s.
async function fresh(redis) {
  await redis.flushall();
  await redis.call('RL.CLOCK', 'SET', T0 + 15000);
}

// Until `count` clients are blocked (a bound on the polling, not a timing being asserted).
async function waitBlocked(redis, count) {
  for (let i = 0; i < 1000; i++) {
    const info = await redis.info('clients');
    if (Number(/blocked_clients:(\d+)/.exec(info)[1]) === count) return true;
    await sleep(10);
  }
  return false;
}

function get(port, { path = '/', apiKey = 'alice' } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: false, headers: apiKey ? { 'X-API-Key': apiKey } : {} },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => { body += c; });
        res.on('end', () => resolve({ port, status: res.statusCode, headers: res.headers, body }));
      });
    req.on('error', reject);
  });
}

// perPort GETs at each port, `parallel` in flight per port at a time.
async function getMany(ports, perPort, parallel = 4) {
  const out = [];
  const worker = async (port, n) => { for (let i = 0; i < n; i++) out.push(await get(port)); };
  const jobs = [];
  for (const port of ports) {
    for (let w = 0; w < parallel; w++) jobs.push(worker(port, Math.floor(perPort / parallel) + (w < perPort % parallel ? 1 : 0)));
  }
  await Promise.all(jobs);
  return out;
}

// A 429 as the middlewares answer it: Retry-After, the RateLimit header, and a problem+json body naming
// the policies that denied.
function assertTooMany(res, { retryAfter, ratelimit, violated }) {
  assert.equal(res.status, 429);
  assert.equal(res.headers['retry-after'], retryAfter);
  assert.equal(res.headers.ratelimit, ratelimit);
  assert.match(res.headers['content-type'], /^application\/problem\+json/);
  assert.deepEqual(JSON.parse(res.body)['violated-policies'], violated);
}

module.exports = { PORT, T0, client, fresh, waitBlocked, get, getMany, assertTooMany };
