// Types of lib/express.js: the Express middleware and its framework-free core, checkRequest(). The request and
// response are typed by what the middleware uses of them (structurally), so that Express's own types, where
// an application has them, fit without the package depending on them.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HeaderItem } from './headers';
import type { RateSpec, RedisClient } from './limits';

/** A policy of the application: a name (the header's) and a rate spec (not concurrency, not smooth). */
export interface Policy {
  name: string;
  spec: RateSpec;
}

export interface Decision {
  allowed: boolean;
  retryAfterMs: number;
  items: HeaderItem[];
  elapsedNs: bigint;
}

/** What the middleware reads of an Express request. */
export interface ExpressRequest extends IncomingMessage {
  get(name: string): string | undefined;
  ip?: string | undefined;
}

/** What the middleware uses of an Express response; the decision is left on res.locals.ratelimit. */
export interface ExpressResponse extends ServerResponse {
  locals: Record<string, any>;
  status(code: number): this;
  type(type: string): this;
  set(headers: Record<string, string>): this;
  send(body: string): this;
}

export type RateLimitMiddleware = (req: ExpressRequest, res: ExpressResponse, next: (err?: unknown) => void) => Promise<void>;

export interface RateLimitOptions {
  redis: RedisClient;
  policies: Policy[];
  /** The client key of a request (default: the X-API-Key header, else the address); null or undefined: not limited. */
  key?: (req: ExpressRequest) => string | null | undefined;
  prefix?: string;
  /** Let requests through when Redis fails (default: 503). */
  failOpen?: boolean;
}

export function rateLimit(options: RateLimitOptions): RateLimitMiddleware;
export function checkRequest(redis: RedisClient, policies: Policy[], clientKey: string,
  options?: { prefix?: string; cost?: number }): Promise<Decision>;
export function redisKey(prefix: string, clientKey: string, policy: Policy): string;
