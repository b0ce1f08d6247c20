// A tiny Express API behind the rateLimit middleware: the application the tests and `make demo` run as
// real HTTP servers.
//
//   node example/app.js --redis-port 6379 --port 8000 --policy default=window:100:1000:fixed
//
// Prints "listening PORT" once it accepts connections (--port 0 picks a free one). With --log FILE it
// appends one line per limited request, "unix_ms status reset_after_ms check_us" (the first policy's
// reply and the Redis round trip), which the demo's report reads. SIGTERM stops it cleanly.
// --policy NAME=KIND:ARGS is repeatable, with the same KIND:ARGS as clients/python/example_app.py.
// --on-failure deny|allow|local picks what a Redis failure does (lib/limiter.js); --no-deny-cache turns the
// cache of denials off (the tests do: it counts real time, while their Redis clock is frozen).
// --timeout-ms N sets how long a check may take before it counts as a Redis failure (default the
// limiter's, 50 ms; tests that count exact admissions on a busy machine raise it).
'use strict';

const fs = require('node:fs');
const { parseArgs } = require('node:util');
const express = require('express');
const Redis = require('ioredis');
const { rateLimit, token, leaky, window, slidingLog } = require('..');

function parsePolicy(text) {
  const [name, rest] = text.split('=');
  const [kind, ...fields] = rest.split(':');
  const nums = fields.filter((f) => /^\d+$/.test(f)).map(Number);
  const words = new Set(fields.filter((f) => !/^\d+$/.test(f)));
  const specs = {
    token: () => token(nums[0], nums[1], nums[2], { interval: words.has('interval') }),
    leaky: () => leaky(nums[0], nums[1], nums[2], { nodelay: words.has('nodelay') }),
    window: () => window(nums[0], nums[1], { fixed: words.has('fixed') }),
    slidinglog: () => slidingLog(nums[0], nums[1], nums.length > 2 ? { mingapMs: nums[2] } : {}),
  };
  if (!specs[kind]) throw new Error(`--policy ${text}: unknown kind ${kind}`);
  return { name, spec: specs[kind]() };
}

// One line per limited request, once the response is sent; close(done) flushes the file.
function requestLog(path) {
  if (!path) return { middleware: (req, res, next) => next(), close: (done) => done() };
  const out = fs.createWriteStream(path, { flags: 'a' });
  const middleware = (req, res, next) => {
    res.on('finish', () => {
      const d = res.locals.ratelimit;
      if (!d) return;
      const reset = d.items[0][2].resetAfterMs;
      out.write(`${Date.now()} ${res.statusCode} ${reset} ${d.elapsedNs / 1000n}\n`);
    });
    next();
  };
  return { middleware, close: (done) => out.end(done) };
}

// options: createLimiter's (onFailure, denyCache, timeoutMs, ...) and the hooks (allow, deny).
function createApp(redis, policies, log = requestLog(null), options = {}) {
  const app = express();
  app.get('/health', (req, res) => res.send('healthy\n'));
  app.use(log.middleware);
  app.use(rateLimit({ redis, policies, key: (req) => req.get('X-API-Key') || 'anonymous', ...options }));
  app.get('/', (req, res) => res.send('ok\n'));
  return app;
}

function main() {
  const { values } = parseArgs({ options: {
    'redis-host': { type: 'string', default: '127.0.0.1' },
    'redis-port': { type: 'string' },
    port: { type: 'string', default: '0' },
    policy: { type: 'string', multiple: true },
    log: { type: 'string' },
    'on-failure': { type: 'string', default: 'deny' },
    'no-deny-cache': { type: 'boolean', default: false },
    'timeout-ms': { type: 'string' },
  } });
  const redis = new Redis({ host: values['redis-host'], port: Number(values['redis-port']), maxRetriesPerRequest: 1 });
  const log = requestLog(values.log);
  const app = createApp(redis, values.policy.map(parsePolicy), log,
    { onFailure: values['on-failure'], ...(values['no-deny-cache'] ? { denyCache: false } : {}),
      ...(values['timeout-ms'] ? { timeoutMs: Number(values['timeout-ms']) } : {}) });
  const server = app.listen(Number(values.port), '127.0.0.1', () => {
    process.stdout.write(`listening ${server.address().port}\n`);
  });
  process.on('SIGTERM', () => {
    server.close(() => log.close(() => process.exit(0)));
    server.closeAllConnections();
    redis.disconnect();
  });
}

if (require.main === module) main();

module.exports = { createApp, parsePolicy };
