// Fastify plugin: the Express middleware's behaviour (express.js) as an onRequest hook of each route,
// with per-route policies.
//
//   await fastify.register(rateLimitPlugin, { redis, policies: [{ name: 'default', spec: window(100, 60000, { fixed: true }) }] });
//   fastify.get('/search', { config: { rateLimit: { policies: [{ name: 'search', spec: token(5, 1, 1000) }] } } }, handler);
//   fastify.get('/health', { config: { rateLimit: false } }, handler);
//
// The idea: the plugin watches routes as they are declared (an onRoute hook) and gives each its own
// createLimiter (limiter.js): the plugin's options, overridden by the route's `config.rateLimit` object;
// `config.rateLimit: false` leaves the route unlimited, and without plugin policies only the routes with
// their own are limited. A plugin's hooks normally stay inside its own encapsulation context; this one
// is marked Symbol.for('skip-override'), the documented way (what the fastify-plugin package sets), so
// that it applies to the routes of the context that registers it and of that context's children.
// Await its registration before declaring the routes it limits (`await fastify.register(...)`): a route
// declared before the plugin has loaded is not seen. The decision is on request.ratelimit.
'use strict';

const { createLimiter } = require('./limiter');
const { rateLimitHeaders, problem } = require('./headers');

const apiKeyOrAddress = (request) => request.headers['x-api-key'] || request.ip;
const FORBIDDEN = { type: 'about:blank', title: 'Forbidden', status: 403 };
const costOf = (cost, request) => (typeof cost === 'function' ? cost(request) : cost);

// The limiter options of createLimiter, from the plugin's and a route's options.
function limiterOptions({ redis, policies, prefix, timeoutMs, onFailure, retryMs, denyCache, logger, now }) {
  return { redis, policies, prefix, timeoutMs, onFailure, retryMs, denyCache, logger, now };
}

// One route's onRequest hook: the hooks of the request, then the limiter's decision as HTTP.
function limitHook({ limiter, key = apiKeyOrAddress, allow, deny, cost = 1 }) {
  return async function rateLimitHook(request, reply) {
    if (allow && await allow(request)) return;
    if (deny && await deny(request)) {
      return reply.code(403).type('application/problem+json').send(`${JSON.stringify(FORBIDDEN)}\n`);
    }
    const clientKey = key(request);
    if (clientKey === null || clientKey === undefined) return;
    const decision = await limiter.check(clientKey, { cost: costOf(cost, request) });
    request.ratelimit = decision;
    if (decision.source === 'failure') {
      if (decision.allowed) return;
      return reply.code(503).type('text/plain').send('rate limiter unavailable\n');
    }
    reply.headers(rateLimitHeaders(decision.items, decision.allowed, decision.retryAfterMs));
    if (decision.allowed) return;
    const violated = decision.items.filter(([, , r]) => !r.allowed).map(([name]) => name);
    return reply.code(429).type('application/problem+json').send(`${JSON.stringify(problem(violated))}\n`);
  };
}

// A route's settings: undefined (the plugin's), false (unlimited) or an object of options.
function routeSettings(config) {
  const own = config ? config.rateLimit : undefined;
  if (own !== undefined && own !== false && (own === null || typeof own !== 'object')) {
    throw new TypeError(`config.rateLimit: must be an object of options or false, not ${JSON.stringify(own)}`);
  }
  return own;
}

function rateLimitPlugin(fastify, options, done) {
  const shared = options.policies ? createLimiter(limiterOptions(options)) : null;
  if (!fastify.hasRequestDecorator('ratelimit')) fastify.decorateRequest('ratelimit', null);
  fastify.addHook('onRoute', (route) => {
    const own = routeSettings(route.config);
    if (own === false || (own === undefined && !shared)) return;
    const settings = { ...options, ...own };
    const limiter = own && own.policies ? createLimiter(limiterOptions(settings)) : shared;
    if (!limiter) throw new TypeError(`route ${route.method} ${route.url}: config.rateLimit has no policies, nor has the plugin`);
    const hook = limitHook({ ...settings, limiter });
    // First, so that a denied request runs none of the route's other hooks.
    route.onRequest = [hook, ...(route.onRequest === undefined ? [] : [].concat(route.onRequest))];
  });
  done();
}

rateLimitPlugin[Symbol.for('skip-override')] = true;
rateLimitPlugin[Symbol.for('fastify.display-name')] = 'redis-ratelimit';

module.exports = { rateLimitPlugin };
