// redis-ratelimit as an ES module: the same calls as the CommonJS entry (index.js), re-exported by name,
// so that `import { limit, token } from 'redis-ratelimit'` and `require('redis-ratelimit')` give the very
// same functions (one copy of the code, one module state).
//
// The idea: the package is written once, in CommonJS; an ES import of it gets module.exports as its
// default, and this file names each export (Node cannot see names through index.js's spreads). One line
// per library file; test/esm.test.js fails if a CommonJS export is missing here.
import cjs from './index.js';

export default cjs;
export const { token, leaky, window, slidingLog, smooth, quota, concurrency, lockout, limit, limitAll, acquire,
  release, renew, leases, block, unblock, lockinfo, reset, throttle, commandArgs, allArgs, acquireArgs, clause,
  throttleArgs, decimalArg, parseResult, parseAll, parseLockinfo } = cjs;
export const { policySet, policyGet, policyDel, policyList, policyFlush, check, policySetArgs, checkArgs,
  parsePolicy } = cjs;
export const { quotaPolicy, nextQuotaMs, sfString, rateLimitHeaders, problem } = cjs;
export const { rateLimit, checkRequest, redisKey } = cjs;
export const { createLimiter, TimeoutError } = cjs;
export const { createLocalLimiter, localFormError, validateLocal } = cjs;
export const { rateLimitPlugin } = cjs;
export const { lease, withLease, LeaseDeniedError, HeldLease } = cjs;
export const { COMMAND_TABLE, EXCLUDED_COMMANDS } = cjs;
export const { ExpressRateLimitStore } = cjs;
export const { withMode, ModeClient, LUA_SCRIPT, LUA_SHA } = cjs;
export const { withReplicas, ReplicaClient, NotReplicatedError } = cjs;
export const { RateLimiterModule, RateLimiterRes } = cjs;
