// The cache of denials, measured: an attack of N requests (default 50,000) on one client key from one
// process, through createLimiter (lib/limiter.js), once with the cache and once without, counting the
// limiter commands the server ran (INFO commandstats, after CONFIG RESETSTAT). Run by hand against a
// redis-server with the module (make run), e.g.:
//
//   node clients/node/bench/denials.js --redis-port 6379 [--requests 50000] [--parallel 50]
//
// The policy is 10 per second, a token bucket (retry 100 ms once empty, the cache's default minimum) and a
// fixed window of 600 per minute; the attacker sends `parallel` requests at a time as fast as it can. It
// prints one line per run: requests, admitted, Redis calls, cache hits, and the wall time.
'use strict';

const { parseArgs } = require('node:util');
const Redis = require('ioredis');
const { createLimiter, token, window } = require('..');

async function redisCalls(redis) {
  const stats = await redis.info('commandstats');
  return [...stats.matchAll(/^cmdstat_rl\.[a-z_]+:calls=(\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

async function attack(redis, { requests, parallel, denyCache, prefix }) {
  const limiter = createLimiter({ redis, prefix, denyCache, timeoutMs: 1000,
    policies: [{ name: 'second', spec: token(10, 10, 1000) }, { name: 'minute', spec: window(600, 60000, { fixed: true }) }] });
  await redis.config('RESETSTAT');
  let sent = 0;
  let admitted = 0;
  const started = process.hrtime.bigint();
  const worker = async () => {
    while (sent < requests) {
      sent += 1;
      if ((await limiter.check('attacker')).allowed) admitted += 1;
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  return { admitted, calls: await redisCalls(redis), hits: limiter.stats.cacheHits, ms };
}

async function main() {
  const { values } = parseArgs({ options: {
    'redis-host': { type: 'string', default: '127.0.0.1' },
    'redis-port': { type: 'string', default: '6379' },
    requests: { type: 'string', default: '50000' },
    parallel: { type: 'string', default: '50' },
  } });
  const redis = new Redis({ host: values['redis-host'], port: Number(values['redis-port']) });
  const requests = Number(values.requests);
  const parallel = Number(values.parallel);
  try {
    for (const [label, denyCache] of [['with the cache', undefined], ['without the cache', false]]) {
      const prefix = `bench:${process.pid}:${label === 'with the cache' ? 'c' : 'n'}:`;
      const r = await attack(redis, { requests, parallel, denyCache, prefix });
      console.log(`${label}: ${requests} requests, ${r.admitted} admitted, ${r.calls} Redis calls, ${r.hits} cache hits, ${Math.round(r.ms)} ms`);
    }
  } finally {
    redis.disconnect();
  }
}

main().catch((err) => { console.error(err); process.exit(1); });
