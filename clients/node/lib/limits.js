// The RL.* commands as Node.js calls: a limiter spec (token, leaky, window, slidingLog) names the
// algorithm and its parameters, limit() runs one command for one key and limitAll() runs RL.ALL for
// several; both resolve to plain result objects with the module's six reply fields.
//
// The idea: a spec is a plain value (Redis stores no parameters, every call brings its own), so one
// spec serves the command, its read-only form and the HTTP headers (headers.js). `redis` is an ioredis
// client, or anything with call(command, ...args) returning a promise of the RESP2 reply.
'use strict';

const FIELDS = ['allowed', 'limit', 'remaining', 'retryAfterMs', 'resetAfterMs', 'waitMs'];

function token(capacity, refillTokens, refillMs, { interval = false } = {}) {
  return { kind: 'TOKEN', capacity, refillTokens, refillMs, interval,
    params: [capacity, refillTokens, refillMs], flags: interval ? ['INTERVAL'] : [] };
}

function leaky(capacity, leakTokens, leakMs, { nodelay = false } = {}) {
  return { kind: 'LEAKY', capacity, leakTokens, leakMs, nodelay,
    params: [capacity, leakTokens, leakMs], flags: nodelay ? ['NODELAY'] : [] };
}

function window(limit, windowMs, { fixed = false } = {}) {
  return { kind: 'WINDOW', limit, windowMs, fixed,
    params: [limit, windowMs], flags: [fixed ? 'FIXED' : 'SLIDING'] };
}

function slidingLog(limit, windowMs, { mingapMs } = {}) {
  return { kind: 'SLIDINGLOG', limit, windowMs, mingapMs,
    params: [limit, windowMs], flags: mingapMs === undefined ? [] : ['MINGAP', mingapMs] };
}

// A six-field reply (RESP2 array) as { allowed, limit, remaining, retryAfterMs, resetAfterMs, waitMs }.
function parseResult(reply) {
  if (!Array.isArray(reply) || reply.length !== 6) throw new Error(`expected 6 fields, got ${reply}`);
  const out = {};
  FIELDS.forEach((name, i) => { out[name] = Number(reply[i]); });
  out.allowed = out.allowed === 1;
  return out;
}

// RL.ALL's reply: allowed, retry, reset, then one six-field reply per limit.
function parseAll(reply) {
  return { allowed: Number(reply[0]) === 1, retryAfterMs: Number(reply[1]), resetAfterMs: Number(reply[2]),
    limits: reply.slice(3).map(parseResult) };
}

// COST n (left out for the default 1), or REFUND n in its place.
function weight(cost, refund) {
  if (refund === undefined) return cost === 1 ? [] : ['COST', cost];
  if (cost !== 1) throw new Error('cost and refund exclude each other: a call takes or gives back');
  return ['REFUND', refund];
}

function commandArgs(key, spec, { cost = 1, dryrun = false, readonly = false, refund } = {}) {
  const args = [`RL.${spec.kind}${readonly ? '_RO' : ''}`, key, ...spec.params, ...spec.flags, ...weight(cost, refund)];
  if (dryrun && !readonly) args.push('DRYRUN');
  return args;
}

// RL.ALL (RL.ALL_RO with readonly) for [key, spec] pairs.
function allArgs(limits, { cost = 1, dryrun = false, readonly = false, refund } = {}) {
  const args = [readonly ? 'RL.ALL_RO' : 'RL.ALL', limits.length, ...limits.map(([key]) => key),
    ...weight(cost, refund)];
  if (dryrun && !readonly) args.push('DRYRUN');
  for (const [, spec] of limits) args.push('LIMIT', spec.kind, ...spec.params, ...spec.flags);
  return args;
}

// One limiter for `key`. dryrun looks without consuming; readonly uses the _RO command (the same
// answer; runs on replicas and for read-only users); refund: n gives back n units a failed request took.
async function limit(redis, key, spec, opts = {}) {
  const [command, ...args] = commandArgs(key, spec, opts);
  return parseResult(await redis.call(command, ...args));
}

// Several [key, spec] limits in one atomic RL.ALL: admitted by all, or by none and nothing consumed.
// readonly uses RL.ALL_RO (the DRYRUN answer); refund: n gives n back to every limit in one atomic write,
// for a request RL.ALL admitted that failed downstream.
async function limitAll(redis, limits, opts = {}) {
  const [command, ...args] = allArgs(limits, opts);
  return parseAll(await redis.call(command, ...args));
}

module.exports = { token, leaky, window, slidingLog, limit, limitAll, commandArgs, allArgs, parseResult, parseAll };
