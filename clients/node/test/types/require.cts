// The declarations through require(): the CommonJS form of the package types the same exports.
import rl = require('redis-ratelimit');
import { Redis } from 'ioredis';

export async function main(): Promise<rl.LimitResult> {
  const redis = new Redis();
  const got: rl.AcquireResult = await rl.acquire(redis, 'jobs', 5, 30000);
  // @ts-expect-error: no such export
  rl.limitEvery(redis);
  return rl.limit(redis, 'user:42', rl.token(10, 5, 1000), { dryrun: got.allowed });
}
