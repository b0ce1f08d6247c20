// Types of lib/adapters/rate-limiter-flexible.js: RateLimiterModule, rate-limiter-flexible's
// RateLimiterRedis API on the module's RL.WINDOW, and the RateLimiterRes it resolves and rejects with.
import type { RedisClient } from '../limits';

/** The four fields of rate-limiter-flexible's RateLimiterRes (its own class when the library is installed). */
export declare class RateLimiterRes {
  constructor(remainingPoints?: number, msBeforeNext?: number, consumedPoints?: number, isFirstInDuration?: boolean);
  /** What still fits in the current window (the module's `remaining`). */
  remainingPoints: number;
  /** Admitted: until the window ends; rejected: until the same call could be admitted, -1 never; block(key, 0): -1. */
  msBeforeNext: number;
  /** points - remainingPoints: what the window holds as used (points while blocked or in debt). */
  consumedPoints: number;
  /** Admitted, and the window holds exactly this call's points. */
  isFirstInDuration: boolean;
  toJSON(): { remainingPoints: number; msBeforeNext: number; consumedPoints: number; isFirstInDuration: boolean };
}

export interface RateLimiterModuleOptions {
  /** An ioredis Redis or Cluster with the module loaded. */
  storeClient: RedisClient;
  /** The most points per window: an integer from 1 to 10^12. */
  points: number;
  /** The window in seconds, a whole number of ms from 1 to 10^12; windows are aligned to the Unix epoch. */
  duration: number;
  /** Seconds a key is blocked for when a consume is rejected (RL.WINDOW's LOCKOUT); 0 or left out: none. */
  blockDuration?: number;
  /** Keys are `${keyPrefix}:${key}`; default 'rlflxm' (not the library's 'rlflx', whose string keys the module refuses). */
  keyPrefix?: string;
  /** Accepted and ignored (the library's). */
  storeType?: string;
  useRedisPackage?: boolean;
  useRedis3AndLowerPackage?: boolean;
}

/** The library's per-call options: `customDuration` is refused. */
export type RateLimiterCallOptions = Record<string, unknown>;

export declare class RateLimiterModule {
  constructor(opts: RateLimiterModuleOptions);
  readonly points: number;
  readonly duration: number;
  readonly blockDuration: number;
  readonly keyPrefix: string;
  getKey(key: string | number): string;
  parseKey(rlKey: string): string;
  /** Resolves when the points fit; rejects with a RateLimiterRes when they do not (or the key is blocked). */
  consume(key: string | number, points?: number | string, options?: RateLimiterCallOptions): Promise<RateLimiterRes>;
  /** Counts the points whatever the count (RL.WINDOW FORCE). */
  penalty(key: string | number, points?: number | string, options?: RateLimiterCallOptions): Promise<RateLimiterRes>;
  /** Gives back up to the points, never below 0 (RL.WINDOW REFUND). */
  reward(key: string | number, points?: number | string, options?: RateLimiterCallOptions): Promise<RateLimiterRes>;
  /** The key's state, or null when its window counts nothing and it is not blocked. */
  get(key: string | number, options?: RateLimiterCallOptions): Promise<RateLimiterRes | null>;
  /** Blocks the key (RL.BLOCK), keeping its count; 0 seconds: 10^12 ms. */
  block(key: string | number, secDuration: number, options?: RateLimiterCallOptions): Promise<RateLimiterRes>;
  /** The key's count in the current window, until it ends: secDuration left out, negative, or duration. */
  set(key: string | number, points: number | string, secDuration?: number, options?: RateLimiterCallOptions): Promise<RateLimiterRes>;
  /** Forgets the key (RL.RESET): true if it held something. */
  delete(key: string | number, options?: RateLimiterCallOptions): Promise<boolean>;
}
