// Types of lib/adapters/express-rate-limit.js: express-rate-limit's Store on RL.WINDOW. The library is not a
// dependency of the package, so its Store and Options are described by what the store uses of them; the
// class fits the library's own `Store` type (test/types/usage.mts checks it against express-rate-limit 8.7.5).
import type { Cluster, Redis } from 'ioredis';

export interface ExpressRateLimitStoreOptions {
  /** The ioredis client (a Redis or a Cluster). */
  redis: Redis | Cluster;
  /** Put before every key the library gives (default 'erl:'). */
  prefix?: string;
  /** The sliding-window counter (RL.WINDOW SLIDING) instead of the fixed window (default false: FIXED). */
  sliding?: boolean;
  /** What your requestWasSuccessful says of a denied response (default: the library's statusCode < 400). */
  denialWasSuccessful?: boolean;
}

/** What init() reads of the library's options. */
export interface ExpressRateLimitInitOptions {
  /** Requests per window: a whole number from 1 to 10^12 (a function of the request is refused). */
  limit: number | ((...args: any[]) => unknown);
  /** The window's length in ms: a whole number from 1 to 10^12. */
  windowMs: number;
  statusCode?: number;
  skipFailedRequests?: boolean;
  skipSuccessfulRequests?: boolean;
}

/** A client's count as express-rate-limit reads it. */
export interface ExpressRateLimitHits {
  /** Admitted: the units the window holds, this request's included. Denied: limit + 1 (nothing counted). */
  totalHits: number;
  /** Admitted: when the window is idle again. Denied: when this request would be admitted. */
  resetTime: Date;
}

export declare class ExpressRateLimitStore {
  constructor(options: ExpressRateLimitStoreOptions);
  readonly prefix: string;
  readonly localKeys: false;
  init(options: ExpressRateLimitInitOptions): void;
  increment(key: string): Promise<ExpressRateLimitHits>;
  decrement(key: string): Promise<void>;
  get(key: string): Promise<ExpressRateLimitHits | undefined>;
  resetKey(key: string): Promise<void>;
}
