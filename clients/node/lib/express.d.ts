// Types of lib/express.js: the Express middleware on createLimiter. Express ships no types of its own
// (and @types/express is not a dependency), so the request and response are described by what the
// middleware uses of them; Express's own objects fit.
import type { Limiter, LimiterOptions } from './limiter';

export { checkRequest, redisKey } from './limiter';

/** What the middleware reads of a request. */
export interface ExpressRequestLike {
  get(name: string): string | undefined;
  ip?: string;
}

/** What the middleware does with a response. */
export interface ExpressResponseLike {
  status(code: number): this;
  type(type: string): this;
  set(headers: Record<string, string>): this;
  send(body: string): this;
  locals: Record<string, unknown>;
}

export interface RateLimitOptions<Req extends ExpressRequestLike = ExpressRequestLike>
  extends Omit<LimiterOptions, 'onFailure'> {
  /** The client key of a request (default: X-API-Key, else the address); null or undefined: unlimited. */
  key?: (req: Req) => string | null | undefined;
  onFailure?: LimiterOptions['onFailure'];
  /** The old name of onFailure 'allow' (used when onFailure is not given). */
  failOpen?: boolean;
  /** True: the request skips the limiter (no Redis call, no headers). */
  allow?: (req: Req) => boolean | Promise<boolean>;
  /** True: the request is refused with 403 (no Redis call). */
  deny?: (req: Req) => boolean | Promise<boolean>;
  /** What a request costs (default 1). */
  cost?: number | ((req: Req) => number);
}

export interface RateLimitMiddleware<Req extends ExpressRequestLike = ExpressRequestLike> {
  (req: Req, res: ExpressResponseLike, next: (err?: unknown) => void): Promise<void>;
  limiter: Limiter;
}

export function rateLimit<Req extends ExpressRequestLike = ExpressRequestLike>(
  options: RateLimitOptions<Req>): RateLimitMiddleware<Req>;
