// Types of lib/local.js: the in-process token bucket and fixed window with the module's semantics.
import type { LimitResult } from './limits';

/** A token bucket spec as token() makes it (the fields the local limiter reads). */
export interface LocalTokenSpec {
  kind: 'TOKEN';
  capacity: number;
  refillTokens: number;
  refillMs: number;
  interval: boolean;
  cost?: number;
  force?: boolean;
  lockout?: unknown;
}

/** A fixed window spec as window(limit, windowMs, { fixed: true }) makes it. */
export interface LocalWindowSpec {
  kind: 'WINDOW';
  limit: number;
  windowMs: number;
  fixed: boolean;
  subwindows?: number;
  cost?: number;
  force?: boolean;
  lockout?: unknown;
}

/** A spec the local limiter can run (localFormError says whether one has a local form). */
export type LocalSpec = LocalTokenSpec | LocalWindowSpec;

/** The module's six reply fields, as limit() resolves them. */
export type LocalResult = LimitResult;

/** RL.ALL's answer, as limitAll() resolves it. */
export interface LocalAllResult {
  allowed: boolean;
  retryAfterMs: number;
  resetAfterMs: number;
  limits: LocalResult[];
}

export interface LocalOptions {
  /** At most this many keys are kept, the least recently used forgotten first (default 10000). */
  maxKeys?: number;
  /** The time in integer ms (default Date.now). */
  now?: () => number;
}

export interface LocalCallOptions {
  cost?: number;
  dryrun?: boolean;
}

export interface LocalLimiter {
  limit(key: string, spec: LocalSpec, options?: LocalCallOptions): LocalResult;
  limitAll(limits: ReadonlyArray<readonly [string, LocalSpec]>, options?: LocalCallOptions): LocalAllResult;
  readonly size: number;
  clear(): void;
}

export function createLocalLimiter(options?: LocalOptions): LocalLimiter;
/** Why a spec has no local form, or null when it has one. */
export function localFormError(spec: { kind: string; fixed?: boolean; subwindows?: number; lockout?: unknown; force?: boolean }): string | null;
/** Throws (naming the argument) what the module would refuse of a spec with a local form. */
export function validateLocal(spec: LocalSpec): void;
