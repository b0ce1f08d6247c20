// TypeScript declarations of redis-ratelimit as an ES module (import ... from 'redis-ratelimit'): the names of
// index.d.ts, and the CommonJS exports object as the default export, as index.mjs has them.
import * as cjs from './index.js';

export * from './index.js';
export default cjs;
