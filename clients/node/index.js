// redis-ratelimit: Node.js calls for the redis-ratelimit module's RL.* commands (lib/limits.js), its
// policies kept in Redis (RL.POLICY and RL.CHECK: lib/policies.js), their RateLimit headers
// (lib/headers.js), the request core of the middlewares with its timeout, failure modes and cache of
// denials (lib/limiter.js, lib/local.js: the in-process limiters), the Express and Fastify middlewares
// (lib/express.js, lib/fastify.js), leases held for a block of work (lib/lease.js), the package's table
// of the module's commands (lib/commands.js), the Lua mode for servers without the module
// (lib/lua-mode.js), grants acknowledged by replicas before they count (lib/replicas.js), and the adapters
// for express-rate-limit and rate-limiter-flexible (lib/adapters/).
// index.mjs is the ES module entry, index.d.ts the TypeScript declarations.
'use strict';

module.exports = {
  ...require('./lib/limits'),
  ...require('./lib/policies'),
  ...require('./lib/headers'),
  ...require('./lib/express'),
  ...require('./lib/limiter'),
  ...require('./lib/local'),
  ...require('./lib/fastify'),
  ...require('./lib/lease'),
  ...require('./lib/commands'),
  ...require('./lib/adapters/express-rate-limit'),
  ...require('./lib/lua-mode'),
  ...require('./lib/replicas'),
  ...require('./lib/adapters/rate-limiter-flexible'),
};
