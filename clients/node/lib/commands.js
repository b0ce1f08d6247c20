// The package's command table: for each command of the module (and each RL.POLICY subcommand), the call
// that sends it and, for each option token the module documents for it (COMMAND DOCS), an example call that
// makes the package send that token. RL.SETSTATE and RL.CLOCK are left out on purpose (EXCLUDED_COMMANDS
// says why).
//
// The idea: the table is checked against a live server, so it cannot lie. test/commands.test.js reads
// COMMAND DOCS of every module command (COMMAND LIST FILTERBY MODULE ratelimit), walks the argument trees,
// and fails naming each command or token missing here; then it runs every example through a client that
// records the arguments of each call() and forwards them to the server, and checks that the command and
// the token were really sent. A module option the package cannot send therefore fails the build.
// Each example is a valid call (the server accepts it) on keys of its own under `cmd:`.
'use strict';

const { token, leaky, window, slidingLog, smooth, quota, concurrency, lockout, limit, limitAll, acquire, release,
  renew, leases, block, unblock, lockinfo, reset, throttle } = require('./limits');
const { policySet, policyGet, policyDel, policyList, policyFlush, check } = require('./policies');

const EXCLUDED_COMMANDS = {
  'RL.SETSTATE': "how the module's effects reach replicas and the AOF: written by the module, never sent by an application",
  'RL.CLOCK': 'exists only when the module is loaded with test-clock, to freeze the clock in tests: send it as a plain command',
};

const LOCKOUT_TOKENS = ['LOCKOUT', 'BACKOFF', 'MAXLOCK', 'FORGIVE'];
const locked = { lockout: lockout(1000, { backoff: 2, maxlockMs: 60000, forgiveMs: 60000 }) };

// { token: example } for tokens sharing one example.
const each = (tokens, example) => Object.fromEntries(tokens.map((name) => [name, example]));

// A limiter command and its _RO form: the options both take, and those only the command takes (DRYRUN,
// WAIT, BLOCK: the read-only forms report, they neither record nor wait).
function limiter(name, make, common, writeOnly) {
  const run = (readonly) => (specArgs, opts) => (redis) =>
    limit(redis, `cmd:${name.toLowerCase()}`, make(...specArgs), { ...opts, readonly });
  const tokens = (readonly) => {
    const call = run(readonly);
    const out = {};
    for (const [tokenName, [specArgs, opts]] of Object.entries(common)) out[tokenName] = call(specArgs, opts);
    Object.assign(out, each(LOCKOUT_TOKENS, call([locked], {})));
    if (!readonly) for (const [tokenName, [specArgs, opts]] of Object.entries(writeOnly)) out[tokenName] = call(specArgs, opts);
    return out;
  };
  return {
    [name]: { call: `limit(redis, key, ${make.name}(...), opts)`, example: run(false)([{}], {}), tokens: tokens(false) },
    [`${name}_RO`]: { call: `limit(redis, key, ${make.name}(...), { readonly: true, ...opts })`,
      example: run(true)([{}], {}), tokens: tokens(true) },
  };
}

// Spec makers with their parameters fixed, taking only the options object.
const tok = (o) => token(10, 1, 1000, o);
const leak = (o) => leaky(10, 1, 1000, o);
const win = (o) => window(10, 60000, o);
const log = (o) => slidingLog(10, 60000, o);
const smo = (o) => smooth(5, o);
const day = (o) => quota(1000, 'DAY', o);
Object.defineProperty(tok, 'name', { value: 'token' });
Object.defineProperty(leak, 'name', { value: 'leaky' });
Object.defineProperty(win, 'name', { value: 'window' });
Object.defineProperty(log, 'name', { value: 'slidingLog' });
Object.defineProperty(smo, 'name', { value: 'smooth' });
Object.defineProperty(day, 'name', { value: 'quota' });

const COST = [[{}], { cost: 2 }];
const REFUND = [[{}], { refund: 1 }];
const FORCE = [[{}], { cost: 2, force: true }];
const ATMOST = [[{}], { cost: 3, atmost: true }];
const DRYRUN = { DRYRUN: [[{}], { dryrun: true }] };

const limiters = {
  ...limiter('RL.TOKEN', tok, { COST, REFUND, FORCE, ATMOST, INTERVAL: [[{ interval: true }], {}] },
    { ...DRYRUN, WAIT: [[{}], { waitMs: 100 }] }),
  ...limiter('RL.LEAKY', leak, { COST, REFUND, NODELAY: [[{ nodelay: true }], {}],
    FORCE: [[{ nodelay: true }], { cost: 2, force: true }] }, { ...DRYRUN, BLOCK: [[{}], { block: true }] }),
  ...limiter('RL.WINDOW', win, { COST, REFUND, FORCE, ATMOST, FIXED: [[{ fixed: true }], {}], SLIDING: [[{}], {}],
    SUBWINDOWS: [[{ subwindows: 6 }], {}] }, { ...DRYRUN, WAIT: [[{}], { waitMs: 100 }] }),
  ...limiter('RL.SLIDINGLOG', log, { COST, REFUND, FORCE, MINGAP: [[{ mingapMs: 10 }], {}] }, DRYRUN),
  ...limiter('RL.SMOOTH', smo, { COST, WARMUP: [[{ warmupMs: 2000, coldfactor: 2.5 }], {}],
    COLDFACTOR: [[{ warmupMs: 2000, coldfactor: 2.5 }], {}], MAXBURST: [[{ maxburstMs: 500 }], {}],
    MAXWAIT: [[{ maxwaitMs: 100 }], {}] }, { ...DRYRUN, BLOCK: [[{}], { block: true }] }),
  ...limiter('RL.QUOTA', day, { COST, REFUND, FORCE, OFFSET: [[{ offsetMinutes: 60 }], {}], DAY: [[{}], {}] }, DRYRUN),
};
// RL.QUOTA's other periods: the spec's period is sent as given.
for (const [name, readonly] of [['RL.QUOTA', false], ['RL.QUOTA_RO', true]]) {
  for (const period of ['WEEK', 'MONTH']) {
    limiters[name].tokens[period] = (redis) => limit(redis, `cmd:quota:${period}`, quota(1000, period), { readonly });
  }
}

const all = (opts, specs = [token(10, 1, 1000), concurrency(3, 30000)]) => (redis) =>
  limitAll(redis, specs.map((spec, i) => [`{cmd}:all:${i}`, spec]), opts);
const acquireWith = (opts) => (redis) => acquire(redis, 'cmd:acquire', 5, 30000, opts);
const withPolicy = (opts) => async (redis) => {
  await policySet(redis, 'cmd-policy', [['burst', token(10, 10, 1000)]]);
  return check(redis, 'cmd-policy', 'cmd:check', opts);
};
const withLease = (then) => async (redis) => {
  const { lease } = await acquire(redis, 'cmd:lease', 5, 30000);
  return then(redis, lease);
};

const COMMAND_TABLE = {
  ...limiters,
  'RL.ACQUIRE': { call: 'acquire(redis, key, limit, leaseMs, opts)', example: acquireWith({}),
    tokens: { COST: acquireWith({ cost: 2 }), ID: acquireWith({ leaseId: 'job-1' }), WAIT: acquireWith({ waitMs: 100 }),
      DRYRUN: acquireWith({ dryrun: true }) } },
  'RL.ACQUIRE_RO': { call: 'acquire(redis, key, limit, leaseMs, { readonly: true, ...opts })',
    example: acquireWith({ readonly: true }),
    tokens: { COST: acquireWith({ readonly: true, cost: 2 }), ID: acquireWith({ readonly: true, leaseId: 'job-1' }) } },
  'RL.RELEASE': { call: 'release(redis, key, leaseId)', example: withLease((redis, id) => release(redis, 'cmd:lease', id)),
    tokens: {} },
  'RL.RENEW': { call: 'renew(redis, key, leaseId, leaseMs)',
    example: withLease((redis, id) => renew(redis, 'cmd:lease', id, 30000)), tokens: {} },
  'RL.LEASES': { call: 'leases(redis, key)', example: (redis) => leases(redis, 'cmd:lease'), tokens: {} },
  'RL.ALL': { call: 'limitAll(redis, [[key, spec], ...], opts)', example: all({}),
    tokens: { LIMIT: all({}), COST: all({ cost: 2 }), REFUND: all({ refund: 1 }, [token(10, 1, 1000)]),
      DRYRUN: all({ dryrun: true }), FORCE: all({ cost: 2, force: true }, [token(10, 1, 1000)]), WAIT: all({ waitMs: 100 }) } },
  'RL.ALL_RO': { call: 'limitAll(redis, [[key, spec], ...], { readonly: true, ...opts })', example: all({ readonly: true }),
    tokens: { LIMIT: all({ readonly: true }), COST: all({ readonly: true, cost: 2 }),
      REFUND: all({ readonly: true, refund: 1 }, [token(10, 1, 1000)]),
      FORCE: all({ readonly: true, cost: 2, force: true }, [token(10, 1, 1000)]) } },
  'RL.RESET': { call: 'reset(redis, ...keys)', example: (redis) => reset(redis, 'cmd:token', 'cmd:window'), tokens: {} },
  'RL.BLOCK': { call: 'block(redis, key, ms)', example: (redis) => block(redis, 'cmd:locked', 1000), tokens: {} },
  'RL.UNBLOCK': { call: 'unblock(redis, key)', example: (redis) => unblock(redis, 'cmd:locked'), tokens: {} },
  'RL.LOCKINFO': { call: 'lockinfo(redis, key)', example: (redis) => lockinfo(redis, 'cmd:locked'), tokens: {} },
  'CL.THROTTLE': { call: 'throttle(redis, key, maxBurst, countPerPeriod, period, quantity)',
    example: (redis) => throttle(redis, 'cmd:cell', 15, 30, 60, 1), tokens: {} },
  'RL.CHECK': { call: 'check(redis, policy, key, opts)', example: withPolicy({}),
    tokens: { COST: withPolicy({ cost: 2 }), DRYRUN: withPolicy({ dryrun: true }), WAIT: withPolicy({ waitMs: 100 }) } },
  'RL.CHECK_RO': { call: 'check(redis, policy, key, { readonly: true, ...opts })', example: withPolicy({ readonly: true }),
    tokens: { COST: withPolicy({ readonly: true, cost: 2 }) } },
  'RL.POLICY SET': { call: 'policySet(redis, name, [[limitName, spec], ...], { shadow })',
    example: (redis) => policySet(redis, 'cmd-set', [['burst', token(10, 10, 1000)]]),
    tokens: { LIMIT: (redis) => policySet(redis, 'cmd-set', [['burst', token(10, 10, 1000)]]),
      SHADOW: (redis) => policySet(redis, 'cmd-set', [['burst', token(10, 10, 1000)]], { shadow: true }) } },
  'RL.POLICY GET': { call: 'policyGet(redis, name)', example: (redis) => policyGet(redis, 'cmd-set'), tokens: {} },
  'RL.POLICY DEL': { call: 'policyDel(redis, name)', example: (redis) => policyDel(redis, 'cmd-set'), tokens: {} },
  'RL.POLICY LIST': { call: 'policyList(redis)', example: (redis) => policyList(redis), tokens: {} },
  'RL.POLICY FLUSH': { call: 'policyFlush(redis)', example: (redis) => policyFlush(redis), tokens: {} },
};

module.exports = { COMMAND_TABLE, EXCLUDED_COMMANDS };
