// Types of lib/fastify.js: the Fastify plugin with per-route config. Fastify is an optional peer of the
// package, so these types name nothing of fastify's (a TypeScript project without fastify compiles with
// the package's declarations): the request is described by what the plugin reads of it, and Fastify's own
// request fits. The typing of `request.ratelimit` and of a route's `config.rateLimit` needs fastify's
// types, so it is a separate entry an application with fastify imports once:
//   import type {} from 'redis-ratelimit/fastify-types';
import type { Decision, LimiterOptions } from './limiter';

/** What the plugin reads of a request: its headers (x-api-key) and the client's address. */
export interface FastifyRequestLike {
  headers: Record<string, string | string[] | undefined>;
  ip: string;
}

export interface RateLimitPluginOptions<Req extends FastifyRequestLike = FastifyRequestLike>
  extends Partial<LimiterOptions> {
  /** The client key of a request (default: x-api-key, else the address); null or undefined: unlimited. */
  key?: (request: Req) => string | null | undefined;
  /** True: the request skips the limiter (no Redis call, no headers). */
  allow?: (request: Req) => boolean | Promise<boolean>;
  /** True: the request is refused with 403 (no Redis call). */
  deny?: (request: Req) => boolean | Promise<boolean>;
  /** What a request costs (default 1). */
  cost?: number | ((request: Req) => number);
}

/** A route's `config.rateLimit`: its own options over the plugin's, or false (unlimited). */
export type RouteRateLimit = Omit<RateLimitPluginOptions, 'redis'> | false;

/** The decision a request carries on `request.ratelimit` (null: not limited). */
export type RequestDecision = Decision | null;

/** A Fastify plugin (callback style): `await fastify.register(rateLimitPlugin, options)`. */
export const rateLimitPlugin: (instance: object, options: RateLimitPluginOptions,
  done: (err?: Error) => void) => void;
