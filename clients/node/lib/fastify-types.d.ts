// Fastify's side of the plugin's types (lib/fastify.d.ts): `request.ratelimit` and a route's
// `config.rateLimit`, added to fastify's own interfaces. It names fastify, an optional peer, so it is not
// part of the main declarations: an application with fastify imports it once,
//   import type {} from 'redis-ratelimit/fastify-types';
import type { RequestDecision, RouteRateLimit } from './fastify';

declare module 'fastify' {
  interface FastifyRequest {
    ratelimit: RequestDecision;
  }
  interface FastifyContextConfig {
    rateLimit?: RouteRateLimit;
  }
}
