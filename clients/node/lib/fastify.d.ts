// Types of lib/fastify.js: the Fastify plugin with per-route config.
import type { FastifyPluginCallback, FastifyRequest } from 'fastify';
import type { Decision, LimiterOptions } from './limiter';

export interface RateLimitPluginOptions extends Partial<LimiterOptions> {
  /** The client key of a request (default: x-api-key, else the address); null or undefined: unlimited. */
  key?: (request: FastifyRequest) => string | null | undefined;
  /** True: the request skips the limiter (no Redis call, no headers). */
  allow?: (request: FastifyRequest) => boolean | Promise<boolean>;
  /** True: the request is refused with 403 (no Redis call). */
  deny?: (request: FastifyRequest) => boolean | Promise<boolean>;
  /** What a request costs (default 1). */
  cost?: number | ((request: FastifyRequest) => number);
}

/** A route's `config.rateLimit`: its own options over the plugin's, or false (unlimited). */
export type RouteRateLimit = Omit<RateLimitPluginOptions, 'redis'> | false;

declare module 'fastify' {
  interface FastifyRequest {
    ratelimit: Decision | null;
  }
  interface FastifyContextConfig {
    rateLimit?: RouteRateLimit;
  }
}

export const rateLimitPlugin: FastifyPluginCallback<RateLimitPluginOptions>;
