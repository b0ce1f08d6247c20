// Types of lib/headers.js: the RateLimit-Policy, RateLimit and Retry-After header values of a decision.
import type { LimitResult, RateSpec } from './limits';

/** One policy's part of a decision: [name, spec, its result]. */
export type HeaderItem = readonly [string, RateSpec, LimitResult];

export interface RateLimitHeaders {
  'RateLimit-Policy': string;
  RateLimit: string;
  'Retry-After'?: string;
}

export interface QuotaExceededProblem {
  type: string;
  title: string;
  status: 429;
  'violated-policies': string[];
}

/** [q, w]: the quota and its window in whole seconds. */
export function quotaPolicy(spec: RateSpec): [number, number];
/** Milliseconds until the limiter holds more than `remaining`, or null when it is full. */
export function nextQuotaMs(spec: RateSpec, result: LimitResult): number | null;
export function sfString(name: string): string;
export function rateLimitHeaders(items: readonly HeaderItem[], allowed: boolean, retryAfterMs: number): RateLimitHeaders;
export function problem(violated: string[]): QuotaExceededProblem;
