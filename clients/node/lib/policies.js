// Policies kept in Redis: RL.POLICY SET/GET/DEL/LIST/FLUSH store a named set of limits on the server, and
// RL.CHECK (RL.CHECK_RO) applies every limit of a policy to one key, all or nothing, answering as RL.ALL
// does ({ allowed, retryAfterMs, resetAfterMs, limits }, one result per limit in the policy's order).
//
// The idea: a limit of a stored policy is the same spec value as everywhere else (token(), window(), ...:
// an RL.ALL clause without its key), named. policyGet reads the stored arguments back through the same
// spec functions, so a stored policy compares deep-equal with the application's configuration. Decimals
// (smooth's) come back as numbers. Policies are kept per server: on an ioredis Cluster the writes go to
// every primary and the reads check that every primary holds the same (lib/client.js), while RL.CHECK
// goes to its key's primary.
'use strict';

const { send, sendEverywhere, readEverywhere } = require('./client');

const { token, leaky, window, slidingLog, smooth, quota, concurrency, lockout, clause, parseAll } = require('./limits');

// RL.POLICY SET's arguments: `LIMIT limitName kind params options` per [limitName, spec].
function policySetArgs(name, limits, { shadow = false } = {}) {
  const args = ['RL.POLICY', 'SET', name, ...(shadow ? ['SHADOW'] : [])];
  for (const [limitName, spec] of limits) args.push('LIMIT', limitName, ...clause(spec).slice(1));
  return args;
}

// Store (or replace, atomically) the policy `name`: 1 to 16 [limitName, spec] pairs, specs of any kind (a
// concurrency spec without leaseId: each lease check() takes gets an id made by the module). A spec's own
// cost fixes that limit's cost. shadow: true evaluates the policy without ever denying. Keys already
// checked move to the new limits at their next check, keeping the state of each limit that keeps its name
// and kind.
async function policySet(redis, name, limits, opts = {}) {
  const [command, ...args] = policySetArgs(name, limits, opts);
  await sendEverywhere(redis, command, args);
}

// The policy `name` as stored (RL.POLICY GET): { name, shadow, limits: [[limitName, spec]] }, or null.
async function policyGet(redis, name) {
  const words = await readEverywhere(redis, 'RL.POLICY', ['GET', name]);
  return words === null ? null : parsePolicy(name, words);
}

// Delete the policy `name` (RL.POLICY DEL): true if it existed (on a cluster: on any primary). Keys checked under it keep their state.
async function policyDel(redis, name) {
  return (await sendEverywhere(redis, 'RL.POLICY', ['DEL', name])).some((deleted) => Number(deleted) === 1);
}

// The names of the stored policies (RL.POLICY LIST), sorted bytewise.
async function policyList(redis) {
  return (await readEverywhere(redis, 'RL.POLICY', ['LIST'])).map(String);
}

// Delete every policy (RL.POLICY FLUSH); the keys stay.
async function policyFlush(redis) {
  await sendEverywhere(redis, 'RL.POLICY', ['FLUSH']);
}

// RL.CHECK's arguments (RL.CHECK_RO with readonly). waitMs is passed on as given, so that RL.CHECK_RO
// refuses WAIT by name rather than the helper dropping it.
function checkArgs(policy, key, { cost = 1, dryrun = false, readonly = false, waitMs } = {}) {
  const args = [readonly ? 'RL.CHECK_RO' : 'RL.CHECK', policy, key, ...(cost === 1 ? [] : ['COST', cost])];
  if (waitMs !== undefined) args.push('WAIT', waitMs);
  if (dryrun && !readonly) args.push('DRYRUN');
  return args;
}

// Apply every limit of the stored policy to `key` (RL.CHECK), all or nothing: RL.ALL's answer. cost is
// every limit's but one whose spec fixes its own; dryrun and readonly (RL.CHECK_RO, for replicas) only
// report; waitMs waits server-side until every limit admits. Under a SHADOW policy `allowed` is always
// true and each limit's result says what it really decided. A concurrency limit's result has `lease`: give
// it back with release(redis, key, lease), or renew it, on the same key.
async function check(redis, policy, key, opts = {}) {
  const [command, ...args] = checkArgs(policy, key, opts);
  return parseAll(await send(redis, key, command, args));
}

// Reading RL.POLICY GET's words back into specs: per kind, its spec function and its parameters' types;
// per option, its name in the spec function's options, how many words it takes and their type. Option
// names never collide with LIMIT and every option's arity is known, so a clause ends exactly where the
// next LIMIT begins.
const text = String;
const KINDS = {
  TOKEN: [token, [Number, Number, Number]], LEAKY: [leaky, [Number, Number, Number]],
  WINDOW: [window, [Number, Number]], SLIDINGLOG: [slidingLog, [Number, Number]], SMOOTH: [smooth, [Number]],
  QUOTA: [quota, [Number, text]], CONCURRENCY: [concurrency, [Number, Number]],
};
// option -> [its name among the spec's options ('lockout.x' for lockout()'s, null for none), its value's
// type (null for a flag)]
const OPTIONS = {
  INTERVAL: ['interval', null], NODELAY: ['nodelay', null], FIXED: ['fixed', null], SLIDING: [null, null],
  SUBWINDOWS: ['subwindows', Number], MINGAP: ['mingapMs', Number], OFFSET: ['offsetMinutes', Number],
  WARMUP: ['warmupMs', Number], MAXBURST: ['maxburstMs', Number], COLDFACTOR: ['coldfactor', Number],
  MAXWAIT: ['maxwaitMs', Number], COST: ['cost', Number], FORCE: ['force', null], ID: ['leaseId', text],
  LOCKOUT: ['lockout.ms', Number], BACKOFF: ['lockout.backoff', Number], MAXLOCK: ['lockout.maxlockMs', Number],
  FORGIVE: ['lockout.forgiveMs', Number],
};
// The options each spec function takes (any other is refused here, as the module refuses it).
const TAKES = {
  TOKEN: ['interval', 'cost', 'force'], LEAKY: ['nodelay', 'cost', 'force'],
  WINDOW: ['fixed', 'subwindows', 'cost', 'force'], SLIDINGLOG: ['mingapMs', 'cost', 'force'],
  SMOOTH: ['warmupMs', 'maxburstMs', 'coldfactor', 'maxwaitMs', 'cost'], QUOTA: ['offsetMinutes', 'cost', 'force'],
  CONCURRENCY: ['leaseId', 'cost'],
};

// RL.POLICY GET's reply (`[SHADOW] LIMIT limitName spec ...`) as { name, shadow, limits }. A word this
// helper does not know (an option of a newer module) throws, naming the policy and the limit.
function parsePolicy(name, reply) {
  const words = reply.map(text);
  const shadow = words.length > 0 && words[0].toUpperCase() === 'SHADOW';
  const limits = [];
  let at = shadow ? 1 : 0;
  while (at < words.length) {
    if (words[at].toUpperCase() !== 'LIMIT' || at + 2 >= words.length) {
      throw new Error(`policy ${name}: expected LIMIT limitName kind ..., got ${words.slice(at).join(' ')}`);
    }
    const limitName = words[at + 1];
    const [spec, next] = parseClause(`policy ${name}, limit ${limitName}`, words, at + 2);
    limits.push([limitName, spec]);
    at = next;
  }
  return { name, shadow, limits };
}

// One clause from words[at] (its kind) to the next LIMIT or the end: [spec, where the next begins].
function parseClause(where, words, at) {
  const kind = words[at].toUpperCase();
  if (!(kind in KINDS)) throw new Error(`${where}: unknown kind ${words[at]}`);
  const [make, paramTypes] = KINDS[kind];
  const params = words.slice(at + 1, at + 1 + paramTypes.length);
  if (params.length < paramTypes.length) throw new Error(`${where}: ${kind} needs ${paramTypes.length} parameters`);
  const options = {};
  const lock = {};
  let i = at + 1 + paramTypes.length;
  while (i < words.length && words[i].toUpperCase() !== 'LIMIT') {
    const option = words[i].toUpperCase();
    if (!(option in OPTIONS)) throw new Error(`${where}: ${words[i]} is not an option this helper knows`);
    const [field, type] = OPTIONS[option];
    if (type !== null && i + 1 >= words.length) throw new Error(`${where}: ${option} needs a value`);
    const value = type === null ? true : type(words[i + 1]);
    if (field !== null && field.startsWith('lockout.')) lock[field.slice('lockout.'.length)] = value;
    else if (field !== null && !TAKES[kind].includes(field)) {
      throw new Error(`${where}: ${kind} does not take ${option}`);
    } else if (field !== null) options[field] = value;
    i += type === null ? 1 : 2;
  }
  if (Object.keys(lock).length > 0) {
    if (lock.ms === undefined || kind === 'CONCURRENCY') {
      throw new Error(`${where}: a lockout option without LOCKOUT ms, or on ${kind}`);
    }
    const { ms, ...rest } = lock;
    options.lockout = lockout(ms, rest);
  }
  return [make(...params.map((word, n) => paramTypes[n](word)), options), i];
}

module.exports = { policySet, policyGet, policyDel, policyList, policyFlush, check, policySetArgs, checkArgs,
  parsePolicy };
