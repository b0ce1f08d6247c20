// RateLimiterModule's declarations as an application uses them (test/rate-limiter-flexible.test.js checks
// this file with tsc --strict): each line marked to expect an error must fail to type-check.
import { Redis } from 'ioredis';
import { RateLimiterModule, RateLimiterRes } from 'redis-ratelimit';

const redis = new Redis();
const limiter = new RateLimiterModule({ storeClient: redis, points: 5, duration: 60, blockDuration: 10, keyPrefix: 'api' });
const points: number = limiter.points;

async function handle(key: string): Promise<number> {
  try {
    const res: RateLimiterRes = await limiter.consume(key, 2);
    return res.remainingPoints + res.consumedPoints + (res.isFirstInDuration ? 1 : 0);
  } catch (rejected) {
    if (rejected instanceof RateLimiterRes) return rejected.msBeforeNext;
    throw rejected;
  }
}

async function rest(key: string): Promise<void> {
  const seen: RateLimiterRes | null = await limiter.get(key);
  const deleted: boolean = await limiter.delete(key);
  await limiter.penalty(key);
  await limiter.reward(key, '2');
  await limiter.block(key, 0);
  await limiter.set(key, 3);
  void seen; void deleted; void points;
}

// @ts-expect-error storeClient is required
new RateLimiterModule({ points: 5, duration: 60 });
// @ts-expect-error points is a number
new RateLimiterModule({ storeClient: redis, points: '5', duration: 60 });
// @ts-expect-error get may answer null
const notNull: RateLimiterRes = await limiter.get('k');
// @ts-expect-error delete answers a boolean
const notRes: RateLimiterRes = await limiter.delete('k');

void handle; void rest; void notNull; void notRes;
redis.disconnect();
