// redis-ratelimit-client: Node.js calls for the redis-ratelimit module's RL.* commands (lib/limits.js),
// their RateLimit headers (lib/headers.js) and an Express middleware (lib/express.js).
'use strict';

module.exports = {
  ...require('./lib/limits'),
  ...require('./lib/headers'),
  ...require('./lib/express'),
};
