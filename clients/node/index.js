// redis-ratelimit-client: Node.js calls for the redis-ratelimit module's RL.* commands (lib/limits.js),
// its policies kept in Redis (RL.POLICY and RL.CHECK: lib/policies.js), their RateLimit headers
// (lib/headers.js) and an Express middleware (lib/express.js).
'use strict';

module.exports = {
  ...require('./lib/limits'),
  ...require('./lib/policies'),
  ...require('./lib/headers'),
  ...require('./lib/express'),
  ...require('./lib/limiter'), // createLimiter (issue 29: resilience)
  ...require('./lib/local'), // createLocalLimiter, localFormError, validateLocal (issue 29)
  ...require('./lib/fastify'), // rateLimitPlugin (issue 29: frameworks)
};
