// A tiny Fastify API behind the rate-limit plugin (lib/fastify.js): the application the tests run as a
// real HTTP server.
//
//   node example/fastify-app.js --redis-port 6379 --port 8000 --policy default=window:100:1000:fixed \
//        --search-policy search=token:5:1:1000
//
// Routes: GET / (the plugin's policies), GET /search (its own, from --search-policy), GET /health
// (config.rateLimit false: unlimited), GET /v2/items (declared in an encapsulated child plugin: the
// plugin's policies reach it too). Prints "listening PORT" once it accepts connections (--port 0 picks a
// free one); SIGTERM stops it. --policy and --search-policy take example/app.js's NAME=KIND:ARGS;
// --on-failure and --no-deny-cache as there.
'use strict';

const { parseArgs } = require('node:util');
const Fastify = require('fastify');
const Redis = require('ioredis');
const { rateLimitPlugin } = require('../lib/fastify');
const { parsePolicy } = require('./app');

// options: the plugin's (createLimiter's, the hooks allow and deny, key); searchPolicies: /search's own.
// The plugin is awaited before the routes are declared: it sees each route as it is declared.
async function createApp(redis, policies, searchPolicies, options = {}) {
  const app = Fastify();
  await app.register(rateLimitPlugin, { redis, policies, key: (request) => request.headers['x-api-key'] || 'anonymous', ...options });
  app.get('/', async () => 'ok\n');
  app.get('/search', { config: { rateLimit: { policies: searchPolicies } } }, async () => 'results\n');
  app.get('/health', { config: { rateLimit: false } }, async () => 'healthy\n');
  app.register(async (v2) => {
    v2.get('/items', async (request) => ({ items: [], remaining: request.ratelimit.items[0][2].remaining }));
  }, { prefix: '/v2' });
  return app;
}

async function main() {
  const { values } = parseArgs({ options: {
    'redis-host': { type: 'string', default: '127.0.0.1' },
    'redis-port': { type: 'string' },
    port: { type: 'string', default: '0' },
    policy: { type: 'string', multiple: true },
    'search-policy': { type: 'string', multiple: true, default: ['search=token:5:1:1000'] },
    'on-failure': { type: 'string', default: 'deny' },
    'no-deny-cache': { type: 'boolean', default: false },
  } });
  const redis = new Redis({ host: values['redis-host'], port: Number(values['redis-port']), maxRetriesPerRequest: 1 });
  const app = await createApp(redis, values.policy.map(parsePolicy), values['search-policy'].map(parsePolicy),
    { onFailure: values['on-failure'], ...(values['no-deny-cache'] ? { denyCache: false } : {}) });
  await app.listen({ port: Number(values.port), host: '127.0.0.1' });
  process.stdout.write(`listening ${app.server.address().port}\n`);
  process.on('SIGTERM', () => app.close().then(() => { redis.disconnect(); process.exit(0); }));
}

if (require.main === module) main();

module.exports = { createApp };
