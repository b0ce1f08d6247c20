// The express-rate-limit store's declarations against the library's own types (express-rate-limit 8.7.5):
// the class is a `Store`, rateLimit() takes it, and `// @ts-expect-error` lines that must fail (a wrong
// option, a wrong client). test/types.test.js runs `tsc --noEmit --strict` on it (never executed).
import { Cluster, Redis } from 'ioredis';
import { rateLimit, type ClientRateLimitInfo, type Store } from 'express-rate-limit';
import { ExpressRateLimitStore } from 'redis-ratelimit';
import type { ExpressRateLimitHits, ExpressRateLimitStoreOptions } from 'redis-ratelimit';

const redis = new Redis();
const store: Store = new ExpressRateLimitStore({ redis, prefix: 'erl:', sliding: true, denialWasSuccessful: false });
rateLimit({ store, limit: 100, windowMs: 60000, skipFailedRequests: true, standardHeaders: 'draft-8' });
rateLimit({ store: new ExpressRateLimitStore({ redis: new Cluster([{ host: '127.0.0.1', port: 7000 }]) }) });
const hits: ExpressRateLimitHits = await new ExpressRateLimitStore({ redis }).increment('k');
const info: ClientRateLimitInfo = hits;
const options: ExpressRateLimitStoreOptions = { redis };
info.resetTime?.getTime();
options.prefix?.length;

// @ts-expect-error: a wrong option name
new ExpressRateLimitStore({ redis, mode: 'sliding' });
// @ts-expect-error: the client must be an ioredis Redis or Cluster
new ExpressRateLimitStore({ redis: 'redis://127.0.0.1' });
// @ts-expect-error: sliding is true or false
new ExpressRateLimitStore({ redis, sliding: 'yes' });
