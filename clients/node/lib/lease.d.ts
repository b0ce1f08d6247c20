// Types of lib/lease.js: a lease renewed while a block of work runs and released when it ends.
import type { AcquireOptions, AcquireResult, RedisClient, RedisKey } from './limits';

export interface LeaseOptions extends Omit<AcquireOptions, 'dryrun' | 'readonly'> {
  /** How often to renew (default leaseMs / 3). */
  renewEveryMs?: number;
}

export class LeaseDeniedError extends Error {
  readonly name: 'LeaseDeniedError';
  readonly key: RedisKey;
  /** The denied RL.ACQUIRE result (its retryAfterMs says when a slot frees). */
  readonly result: AcquireResult;
}

export class HeldLease implements AsyncDisposable {
  private constructor();
  readonly key: RedisKey;
  readonly leaseMs: number;
  readonly result: AcquireResult;
  /** The lease id. */
  readonly lease: string;
  /** True once RL.RENEW answered the lease is no longer held. */
  readonly lost: boolean;
  /** Aborted when the lease is lost. */
  readonly signal: AbortSignal;
  /** Successful renewals so far. */
  readonly renewals: number;
  /** The last renewal's error, null once one succeeds. */
  readonly renewError: Error | null;
  readonly released: boolean;
  /** Stop renewing and give the lease back: true if it was still held. */
  release(): Promise<boolean>;
  [Symbol.asyncDispose](): Promise<void>;
}

export function lease(redis: RedisClient, key: RedisKey, limit: number, leaseMs: number, options?: LeaseOptions): Promise<HeldLease>;
export function withLease<T>(redis: RedisClient, key: RedisKey, limit: number, leaseMs: number,
  fn: (held: HeldLease) => T | PromiseLike<T>, options?: LeaseOptions): Promise<Awaited<T>>;
