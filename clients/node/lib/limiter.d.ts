// Types of lib/limiter.js: createLimiter, the request core of the middlewares, and checkRequest.
import type { LimitResult, RateSpec, RedisClient } from './limits';

export interface Policy<S extends RateSpec = RateSpec> {
  name: string;
  spec: S;
}

/** Where a decision came from: Redis, the local limiter (onFailure 'local'), the cache of denials, or a
 * failure (onFailure 'deny': allowed false; 'allow': allowed true). */
export type DecisionSource = 'redis' | 'local' | 'cache' | 'failure';

export interface Decision {
  allowed: boolean;
  /** -1 when admitted, or when a denial can never be admitted. */
  retryAfterMs: number;
  /** [policy name, spec, result] per policy; empty on a failure. */
  items: Array<[string, RateSpec, LimitResult]>;
  elapsedNs: bigint;
  source: DecisionSource;
  /** The failure, when source is 'failure'. */
  error?: Error;
}

export type FailureMode = 'deny' | 'allow' | 'local';

export interface DenyCacheOptions {
  /** Denials with a retry of at least this many ms are cached (default 100). */
  minMs?: number;
  /** At most this many client keys, the least recently used forgotten first (default 10000). */
  maxEntries?: number;
}

export interface LimiterOptions {
  redis: RedisClient;
  policies: Policy[];
  prefix?: string;
  timeoutMs?: number;
  onFailure?: FailureMode;
  retryMs?: number;
  denyCache?: DenyCacheOptions | false;
  logger?: { warn(message: string): void } | null;
  /** The time in integer ms (default Date.now): the cache, the local limiter, when Redis is tried again. */
  now?: () => number;
}

export interface LimiterStats {
  calls: number;
  redis: number;
  local: number;
  cacheHits: number;
  failures: number;
  timeouts: number;
  toLocal: number;
  toRedis: number;
}

export interface Limiter {
  check(clientKey: string, options?: { cost?: number; dryrun?: boolean }): Promise<Decision>;
  readonly stats: LimiterStats;
  readonly policies: Policy[];
  /** 'local' while onFailure 'local' has taken over. */
  readonly mode: 'redis' | 'local';
}

export function createLimiter(options: LimiterOptions): Limiter;

/** One request's decision from Redis, without timeout, cache or failure mode (a Redis error rejects). */
export function checkRequest(redis: RedisClient, policies: Policy[], clientKey: string,
  options?: { prefix?: string; cost?: number; dryrun?: boolean }): Promise<Decision>;

export function redisKey(prefix: string, clientKey: string, policy: Policy): string;

export class TimeoutError extends Error {
  constructor(ms: number);
}
