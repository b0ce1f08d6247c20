// Types of lib/policies.js: policies kept in Redis (RL.POLICY) and RL.CHECK, which answers as RL.ALL does.
import type { AllResult, ClauseResult, RedisClient, RedisKey, Spec, Word } from './limits';

/** A stored policy's limit: [limitName, spec]. */
export type NamedLimit = readonly [string, Spec];

export interface StoredPolicy {
  name: string;
  shadow: boolean;
  limits: Array<[string, Spec]>;
}

export interface PolicySetOptions {
  /** SHADOW: evaluate the policy without ever denying. */
  shadow?: boolean;
}

export interface CheckOptions {
  cost?: number;
  dryrun?: boolean;
  /** RL.CHECK_RO: the DRYRUN answer, for replicas. */
  readonly?: boolean;
  /** WAIT timeout_ms: wait server-side until every limit admits. */
  waitMs?: number;
}

export function policySet(redis: RedisClient, name: string, limits: readonly NamedLimit[], options?: PolicySetOptions): Promise<void>;
export function policyGet(redis: RedisClient, name: string): Promise<StoredPolicy | null>;
export function policyDel(redis: RedisClient, name: string): Promise<boolean>;
export function policyList(redis: RedisClient): Promise<string[]>;
export function policyFlush(redis: RedisClient): Promise<void>;
/** RL.CHECK: one result per limit in the policy's order; a concurrency limit's has `lease`. */
export function check(redis: RedisClient, policy: string, key: RedisKey, options?: CheckOptions): Promise<AllResult<ClauseResult[]>>;

export function policySetArgs(name: string, limits: readonly NamedLimit[], options?: PolicySetOptions): Word[];
export function checkArgs(policy: string, key: RedisKey, options?: CheckOptions): Word[];
export function parsePolicy(name: string, reply: unknown[]): StoredPolicy;
