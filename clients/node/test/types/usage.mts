// The package's TypeScript declarations in use, as an ES module: every export called the way the README
// shows, with the result types spelled out, and `// @ts-expect-error` lines that must fail to type-check (a
// wrong option name, a wrong spec argument, a field a result does not have), so the declarations cannot be
// loose. test/types.test.js runs `tsc --noEmit --strict` on it (never executed).
import { Cluster, Redis } from 'ioredis';
import rl, {
  acquire, block, check, concurrency, leaky, lease, LeaseDeniedError, leases, limit, limitAll, lockinfo, lockout,
  policyDel, policyFlush, policyGet, policyList, policySet, quota, rateLimit, rateLimitHeaders, release, renew, reset,
  slidingLog, smooth, throttle, token, unblock, window, withLease, COMMAND_TABLE, EXCLUDED_COMMANDS, checkRequest,
  problem, quotaPolicy, createLimiter, createLocalLimiter, rateLimitPlugin, withReplicas, NotReplicatedError,
} from 'redis-ratelimit';
import Fastify from 'fastify';
import type {} from 'redis-ratelimit/fastify-types';
import type {
  AcquireResult, AllResult, AtMostResult, ClauseResult, HeldLease, LimitResult, LockInfo, Lease, StoredPolicy,
  ThrottleResult, Spec, Decision, DecisionSource, LimiterStats, LocalResult,
} from 'redis-ratelimit';

const redis = new Redis();
const cluster = new Cluster([{ host: '127.0.0.1', port: 7000 }]);

// limit(): each spec, its options, the result.
const res: LimitResult = await limit(redis, 'user:42', token(10, 5, 1000));
const remaining: number = res.remaining;
await limit(redis, 'user:42', token(10, 5, 1000), { cost: 3, dryrun: true });
await limit(redis, 'user:42', token(10, 5, 1000), { cost: 30, force: true });
await limit(cluster, '{user:42}:s', token(10, 5, 1000, { interval: true }), { readonly: true });
await limit(redis, 'q', leaky(3, 3, 1000), { block: true });
await limit(redis, 'api:k', window(600, 60000, { subwindows: 6 }));
await limit(redis, 'log', slidingLog(10, 60000, { mingapMs: 100 }), { refund: 1 });
await limit(redis, 'db', smooth('2.5', { warmupMs: 4000, coldfactor: 3, maxwaitMs: 100 }), { block: true });
await limit(redis, 'api:u42', quota(1000, 'DAY', { offsetMinutes: 60 }), { cost: 10, waitMs: undefined });
const some: AtMostResult = await limit(redis, 'user:42', token(10, 1, 1000), { cost: 5, atmost: true });
const granted: number = some.granted;
const viaLimit: AcquireResult = await limit(redis, 'jobs', concurrency(5, 30000));
const login = window(5, 900000, { fixed: true,
  lockout: lockout(3600000, { backoff: 2, maxlockMs: 86400000, forgiveMs: 86400000 }) });
await limit(redis, 'login:alice', login);

// limitAll(): each limit's result typed by its spec.
const out = await limitAll(redis, [['{u42}:jobs', concurrency(5, 30000)], ['{u42}:h', window(1000, 3600000)]], { waitMs: 500 });
const jobLease: string | null = out.limits[0].lease;
const hourly: LimitResult = out.limits[1];
const everything: AllResult<ClauseResult[]> = await check(redis, 'api', 'user:42', { cost: 3, dryrun: true });

// Leases, locks, reset, throttle.
const got: AcquireResult = await acquire(redis, 'jobs', 5, 30000, { cost: 2, leaseId: 'job-7', waitMs: 1000 });
if (got.lease !== null) {
  const renewed: boolean = await renew(redis, 'jobs', got.lease, 30000);
  const released: boolean = await release(redis, 'jobs', got.lease);
}
const held: Lease[] = await leases(redis, 'jobs');
const info: LockInfo = await lockinfo(redis, 'login:alice');
const wasLocked: boolean = await unblock(redis, 'login:alice');
await block(redis, 'login:mallory', 86400000);
const deleted: number = await reset(redis, 'user:42', 'api:k');
const cell: ThrottleResult = await throttle(redis, 'user123', 15, 30, 60);

// Stored policies.
await policySet(redis, 'api', [['burst', token(10, 10, 1000)], ['day', quota(10000, 'DAY')]], { shadow: true });
const stored: StoredPolicy | null = await policyGet(redis, 'api');
const names: string[] = await policyList(redis);
const existed: boolean = await policyDel(redis, 'api');
await policyFlush(cluster);

// The lease helpers: withLease, and lease() with `await using`.
const value: number = await withLease(redis, 'jobs', 5, 30000, async (lease: HeldLease) => {
  const lost: boolean = lease.lost;
  const signal: AbortSignal = lease.signal;
  return 42;
}, { cost: 1 });
{
  await using job = await lease(redis, 'jobs', 5, 30000, { renewEveryMs: 5000 });
  const id: string = job.lease;
}
try {
  await lease(redis, 'jobs', 5, 30000);
} catch (err) {
  if (err instanceof LeaseDeniedError) {
    const retry: number = err.result.retryAfterMs;
  }
}

// Headers, the middleware, the command table, the default export.
const decision: Decision = await checkRequest(redis, [{ name: 'default', spec: window(100, 60000) }], 'alice');
const headers = rateLimitHeaders(decision.items, decision.allowed, decision.retryAfterMs);
const policyHeader: string = headers['RateLimit-Policy'];
const [q, w]: [number, number] = quotaPolicy(token(10, 1, 1000));
const body = problem(['default']);
const middleware = rateLimit({ redis, policies: [{ name: 'default', spec: window(100, 60000, { fixed: true }) }] });
const tokensOfToken: string[] = Object.keys(COMMAND_TABLE['RL.TOKEN'].tokens);
const why: string = EXCLUDED_COMMANDS['RL.SETSTATE'];
const viaDefault: Spec = rl.token(1, 1, 1000);

// The request core (timeout, failure modes, cache of denials), the local limiter, the Fastify plugin.
const limiter = createLimiter({ redis, policies: [{ name: 'default', spec: token(10, 1, 1000) }], timeoutMs: 50,
  onFailure: 'local', denyCache: { minMs: 100, maxEntries: 1000 } });
const source: DecisionSource = (await limiter.check('alice', { cost: 2 })).source;
const stats: LimiterStats = limiter.stats;
const localResult: LocalResult = createLocalLimiter({ maxKeys: 100 }).limit('k', token(10, 1, 1000));
const guarded = rateLimit({ redis, policies: [{ name: 'default', spec: window(100, 60000, { fixed: true }) }],
  onFailure: 'allow', allow: (req) => req.get('X-Internal') === '1', deny: () => false });
const app = Fastify();
await app.register(rateLimitPlugin, { redis, policies: [{ name: 'default', spec: token(10, 1, 1000) }] });
app.get('/open', { config: { rateLimit: false } }, async (request) => request.ratelimit?.allowed);
app.get('/light', { config: { rateLimit: { policies: [{ name: 'light', spec: window(5, 1000) }] } } }, async () => 'ok');

// What must not type-check.
// @ts-expect-error: onFailure is 'deny', 'allow' or 'local'
createLimiter({ redis, policies: [], onFailure: 'open' });
// @ts-expect-error: a decision's source is one of four words
const wrongSource: 'redis' | 'cache' = (await limiter.check('alice')).source;
// @ts-expect-error: a wrong option name
await limit(redis, 'k', token(10, 1, 1000), { costs: 2 });
// @ts-expect-error: a wrong option name of a spec
window(10, 1000, { fixd: true });
// @ts-expect-error: a spec's argument of the wrong type
token('10', 1, 1000);
// @ts-expect-error: a period the module does not have
quota(1000, 'YEAR');
// @ts-expect-error: force is not an option of smooth()
smooth(5, { force: true });
// @ts-expect-error: a plain result has no granted
res.granted;
// @ts-expect-error: a plain result has no lease
res.lease;
// @ts-expect-error: a window limit's result in limitAll() has no lease
out.limits[1].lease;
// @ts-expect-error: a lease result has no granted
got.granted;
// @ts-expect-error: limitAll takes [key, spec] pairs
await limitAll(redis, [token(10, 1, 1000)]);
// @ts-expect-error: the client must be a Redis or a Cluster
await limit({}, 'k', token(10, 1, 1000));
// @ts-expect-error: the middleware refuses what is not a rate spec
rateLimit({ redis, policies: [{ name: 'jobs', spec: concurrency(5, 30000) }] });
// @ts-expect-error: lease() takes no dryrun
await lease(redis, 'jobs', 5, 30000, { dryrun: true });
// @ts-expect-error: a held lease's id cannot be reassigned
(await lease(redis, 'jobs', 5, 30000)).lease = 'other';
// withReplicas(): the wrapper in place of the client; NotReplicatedError's fields.
const replicated = withReplicas(cluster, { replicas: 1, timeoutMs: 100 });
const acked: boolean = (await limit(replicated, 'user:42', token(10, 5, 1000))).allowed;
createLimiter({ redis: withReplicas(redis), policies: [{ name: 'api', spec: token(10, 5, 1000) }] });
const short = new Error() as unknown;
const ackedBy: number = short instanceof NotReplicatedError ? short.acked : 0;
// @ts-expect-error: the option is timeoutMs
withReplicas(redis, { timeout: 100 });

export { acked, ackedBy, remaining, granted, viaLimit, jobLease, hourly, everything, held, info, wasLocked, deleted, cell, stored, names,
  existed, value, policyHeader, q, w, body, middleware, tokensOfToken, why, viaDefault, source, stats, localResult,
  guarded, wrongSource };
