// `await using` on a lease, compiled by the pinned TypeScript and run by test/types.test.js against the test
// server: the lease is held inside the block and given back when the block ends, thrown out of or not.
// Prints one JSON line: the leases seen inside and after each block.
import { Redis } from 'ioredis';
import { lease, leases } from 'redis-ratelimit';

const redis = new Redis({ host: '127.0.0.1', port: Number(process.env.RL_REDIS_PORT) });
const seen: Record<string, number> = {};
{
  await using job = await lease(redis, 'ts:jobs', 2, 30000);
  seen.inside = (await leases(redis, 'ts:jobs')).filter((l) => l.leaseId === job.lease).length;
}
seen.after = (await leases(redis, 'ts:jobs')).length;
try {
  await using job = await lease(redis, 'ts:jobs', 2, 30000, { cost: 2 });
  seen.insideThrowing = (await leases(redis, 'ts:jobs'))[0].units;
  throw new Error('boom');
} catch (err) {
  seen.afterThrow = (await leases(redis, 'ts:jobs')).length;
}
console.log(JSON.stringify(seen));
redis.disconnect();
