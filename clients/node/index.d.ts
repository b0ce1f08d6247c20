// TypeScript declarations of redis-ratelimit (CommonJS: require('redis-ratelimit')), one file per library
// file; index.d.mts gives the same to `import`.
export * from './lib/limits';
export * from './lib/policies';
export * from './lib/headers';
export * from './lib/express';
export * from './lib/limiter';
export * from './lib/local';
export * from './lib/fastify';
export * from './lib/lease';
export * from './lib/commands';
export * from './lib/adapters/express-rate-limit';
export * from './lib/lua-mode';
export * from './lib/replicas';
export * from './lib/adapters/rate-limiter-flexible';
