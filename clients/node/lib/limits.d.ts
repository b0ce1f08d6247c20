// Types of lib/limits.js: the limiter specs, the options of each call, and the results, as the code
// builds and parses them. A spec is a plain value made by its maker (token(), window(), ...); a result
// carries the module's six reply fields, `granted` with ATMOST, `lease` for RL.ACQUIRE.
import type { Cluster, Redis } from 'ioredis';

/** An ioredis client or Cluster (each call is routed to its key's node), or one wrapped by withMode or
 * withReplicas. */
export type RedisClient = Redis | Cluster | import('./lua-mode').ModeClient | import('./replicas').ReplicaClient;
/** A Redis key, sent as its bytes. */
export type RedisKey = string | Buffer;
/** RL.SMOOTH's decimals: sent as plain digits, never an exponent; a string as given. */
export type Decimal = number | string | bigint;
/** An argument word as the package sends it. */
export type Word = string | number | Buffer;

export interface LockoutOptions {
  /** BACKOFF: the n-th lock in a row lasts ms * backoff^(n-1). */
  backoff?: number;
  /** MAXLOCK: the longest a lock lasts. */
  maxlockMs?: number;
  /** FORGIVE: the strikes are forgiven this long after the last lock ended. */
  forgiveMs?: number;
}

export interface Lockout {
  readonly kind: 'LOCKOUT';
  readonly ms: number;
  readonly backoff: number | undefined;
  readonly maxlockMs: number | undefined;
  readonly forgiveMs: number | undefined;
  readonly args: Word[];
}

/** LOCKOUT ms [BACKOFF factor] [MAXLOCK ms] [FORGIVE ms]: a denial locks the key. */
export function lockout(ms: number, options?: LockoutOptions): Lockout;

/** What every spec carries: its kind, parameters and option words, its lockout and its own COST. */
interface SpecBase<K extends string> {
  readonly kind: K;
  readonly params: Word[];
  readonly flags: Word[];
  /** That limit's own COST (RL.ALL's clause, a stored policy's limit); added to the call's in limit(). */
  readonly cost: number | undefined;
}

/** Options every spec but concurrency() takes. */
export interface ClauseOptions {
  lockout?: Lockout;
  cost?: number;
}
/** ... and every spec but smooth() and concurrency(): FORCE, that limit's debt past its limit. */
export interface ForcedClauseOptions extends ClauseOptions {
  force?: boolean;
}

export interface TokenOptions extends ForcedClauseOptions {
  /** INTERVAL: refill in whole chunks of refillTokens every refillMs. */
  interval?: boolean;
}
export interface TokenSpec extends SpecBase<'TOKEN'> {
  readonly capacity: number;
  readonly refillTokens: number;
  readonly refillMs: number;
  readonly interval: boolean;
  readonly lockout: Lockout | undefined;
  readonly force: boolean;
}
export function token(capacity: number, refillTokens: number, refillMs: number, options?: TokenOptions): TokenSpec;

export interface LeakyOptions extends ForcedClauseOptions {
  /** NODELAY: police (GCRA) instead of shaping: waitMs is always 0. */
  nodelay?: boolean;
}
export interface LeakySpec extends SpecBase<'LEAKY'> {
  readonly capacity: number;
  readonly leakTokens: number;
  readonly leakMs: number;
  readonly nodelay: boolean;
  readonly lockout: Lockout | undefined;
  readonly force: boolean;
}
export function leaky(capacity: number, leakTokens: number, leakMs: number, options?: LeakyOptions): LeakySpec;

export interface WindowOptions extends ForcedClauseOptions {
  /** FIXED: a fixed window (else the sliding-window counter). */
  fixed?: boolean;
  /** SUBWINDOWS n: a sliding window of n epoch-aligned cells (2 to 60). */
  subwindows?: number;
}
export interface WindowSpec extends SpecBase<'WINDOW'> {
  readonly limit: number;
  readonly windowMs: number;
  readonly fixed: boolean;
  readonly subwindows: number | undefined;
  readonly lockout: Lockout | undefined;
  readonly force: boolean;
}
export function window(limit: number, windowMs: number, options?: WindowOptions): WindowSpec;

export interface SlidingLogOptions extends ForcedClauseOptions {
  /** MINGAP ms: at least this long between two admitted requests. */
  mingapMs?: number;
}
export interface SlidingLogSpec extends SpecBase<'SLIDINGLOG'> {
  readonly limit: number;
  readonly windowMs: number;
  readonly mingapMs: number | undefined;
  readonly lockout: Lockout | undefined;
  readonly force: boolean;
}
export function slidingLog(limit: number, windowMs: number, options?: SlidingLogOptions): SlidingLogSpec;

export interface SmoothOptions extends ClauseOptions {
  warmupMs?: number;
  maxburstMs?: number;
  coldfactor?: Decimal;
  /** MAXWAIT: deny a request that would wait longer (Guava's tryAcquire timeout). */
  maxwaitMs?: number;
}
export interface SmoothSpec extends SpecBase<'SMOOTH'> {
  readonly permitsPerSecond: Decimal;
  readonly warmupMs: number | undefined;
  readonly maxburstMs: number | undefined;
  readonly coldfactor: Decimal | undefined;
  readonly maxwaitMs: number | undefined;
  readonly lockout: Lockout | undefined;
}
export function smooth(permitsPerSecond: Decimal, options?: SmoothOptions): SmoothSpec;

export type Period = 'DAY' | 'WEEK' | 'MONTH';
export interface QuotaOptions extends ForcedClauseOptions {
  /** OFFSET: a fixed time zone, minutes east of UTC (60 is UTC+1). */
  offsetMinutes?: number;
}
export interface QuotaSpec extends SpecBase<'QUOTA'> {
  readonly limit: number;
  readonly period: Period;
  readonly offsetMinutes: number | undefined;
  readonly lockout: Lockout | undefined;
  readonly force: boolean;
}
export function quota(limit: number, period: Period, options?: QuotaOptions): QuotaSpec;

export interface ConcurrencyOptions {
  /** ID: the lease to take, or to renew if it is still held. */
  leaseId?: string | Buffer;
  cost?: number;
}
export interface ConcurrencySpec extends SpecBase<'CONCURRENCY'> {
  readonly command: 'RL.ACQUIRE';
  readonly limit: number;
  readonly leaseMs: number;
  readonly leaseId: string | Buffer | undefined;
}
export function concurrency(limit: number, leaseMs: number, options?: ConcurrencyOptions): ConcurrencySpec;

/** Any limiter spec. */
export type Spec = TokenSpec | LeakySpec | WindowSpec | SlidingLogSpec | SmoothSpec | QuotaSpec | ConcurrencySpec;
/** A spec the _RO commands, limit() and the headers take as a rate limit (not a lease). */
export type RateSpec = Exclude<Spec, ConcurrencySpec>;

/** The module's six reply fields. */
export interface LimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** -1 when allowed (or never: a cost above the limit). */
  retryAfterMs: number;
  resetAfterMs: number;
  waitMs: number;
}
/** With ATMOST: the units taken, 1 to cost (0: denied). */
export interface AtMostResult extends LimitResult {
  granted: number;
}
/** RL.ACQUIRE's: the lease id, or null (denied, dryrun, readonly). */
export interface AcquireResult extends LimitResult {
  lease: string | null;
}
/** A limit's result in RL.ALL or RL.CHECK: a concurrency limit's carries its lease. */
export interface ClauseResult extends LimitResult {
  lease?: string | null;
}
export type ResultOf<S> = S extends ConcurrencySpec ? AcquireResult : LimitResult;

export interface AllResult<L extends readonly LimitResult[] = ClauseResult[]> {
  allowed: boolean;
  retryAfterMs: number;
  resetAfterMs: number;
  /** One result per limit, in the order given. */
  limits: L;
}

export interface LimitOptions {
  /** COST n (default 1). */
  cost?: number;
  /** DRYRUN: look without consuming. */
  dryrun?: boolean;
  /** The _RO command: the DRYRUN answer, for replicas and read-only users. */
  readonly?: boolean;
  /** REFUND n: give back what a failed request took (not with cost or force). */
  refund?: number;
  /** FORCE: take cost even past the limit (a debt). */
  force?: boolean;
  /** ATMOST (token, window): take what is there, 1 to cost; the result has `granted`. */
  atmost?: boolean;
  /** WAIT timeout_ms (token, window): wait server-side, first in first out. */
  waitMs?: number;
  /** BLOCK (leaky without nodelay, smooth): the server holds an admitted reply for its waitMs. */
  block?: boolean;
}

export interface AllOptions {
  cost?: number;
  dryrun?: boolean;
  readonly?: boolean;
  refund?: number;
  force?: boolean;
  waitMs?: number;
}

export interface AcquireOptions {
  cost?: number;
  leaseId?: string | Buffer;
  /** WAIT timeout_ms: wait server-side for a release or an expiry. */
  waitMs?: number;
  dryrun?: boolean;
  readonly?: boolean;
}

export interface ThrottleResult {
  limited: boolean;
  allowed: boolean;
  limit: number;
  remaining: number;
  retryAfterS: number;
  resetAfterS: number;
}

export interface LockInfo {
  lockMs: number;
  strikes: number;
  locked: boolean;
}

export interface Lease {
  leaseId: string;
  units: number;
  ttlMs: number;
}

/** A [key, spec] pair of limitAll(). */
export type KeyedSpec = readonly [RedisKey, Spec];

export function limit(redis: RedisClient, key: RedisKey, spec: ConcurrencySpec, options?: LimitOptions): Promise<AcquireResult>;
export function limit(redis: RedisClient, key: RedisKey, spec: RateSpec, options: LimitOptions & { atmost: true }): Promise<AtMostResult>;
export function limit(redis: RedisClient, key: RedisKey, spec: Spec, options?: LimitOptions): Promise<LimitResult>;

/** RL.ALL: every limit admits, or none and nothing is consumed; results in the order of `limits`. */
export function limitAll<const L extends readonly KeyedSpec[]>(redis: RedisClient, limits: L, options?: AllOptions):
  Promise<AllResult<{ -readonly [I in keyof L]: ResultOf<L[I][1]> }>>;

export function acquire(redis: RedisClient, key: RedisKey, limit: number, leaseMs: number, options?: AcquireOptions):
  Promise<AcquireResult>;
export function release(redis: RedisClient, key: RedisKey, leaseId: string | Buffer): Promise<boolean>;
export function renew(redis: RedisClient, key: RedisKey, leaseId: string | Buffer, leaseMs: number): Promise<boolean>;
export function leases(redis: RedisClient, key: RedisKey): Promise<Lease[]>;
export function block(redis: RedisClient, key: RedisKey, ms: number): Promise<void>;
export function unblock(redis: RedisClient, key: RedisKey): Promise<boolean>;
export function lockinfo(redis: RedisClient, key: RedisKey): Promise<LockInfo>;
export function reset(redis: RedisClient, ...keys: RedisKey[]): Promise<number>;
export function throttle(redis: RedisClient, key: RedisKey, maxBurst: number, countPerPeriod: number, period: number,
  quantity?: number): Promise<ThrottleResult>;

/** The argument lists the calls send (command first), and the reply parsers. */
export function commandArgs(key: RedisKey, spec: Spec, options?: LimitOptions): Word[];
export function allArgs(limits: readonly KeyedSpec[], options?: AllOptions): Word[];
export function acquireArgs(key: RedisKey, limit: number, leaseMs: number, options?: AcquireOptions): Word[];
export function clause(spec: Spec): Word[];
export function throttleArgs(key: RedisKey, maxBurst: number, countPerPeriod: number, period: number, quantity?: number): Word[];
export function decimalArg(value: Decimal): string;
export function parseResult(reply: unknown[]): LimitResult & { granted?: number; lease?: string | null };
export function parseAll(reply: unknown[]): AllResult;
export function parseLockinfo(reply: unknown[]): LockInfo;
