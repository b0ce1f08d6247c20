// The Lua mode (lib/lua-mode.js) proven equal to the module: generated traces of calls (random limiters,
// costs, DRYRUN, RL.ALL over several keys, clock steps) run against the module under its frozen test clock
// and against the script on a second redis-server started here WITHOUT the module, at the same times, and
// every field of every reply must agree. Also: the package's copy of the script is the project's one
// script, 'auto' finds the module or its absence, NOSCRIPT loads the script again, and what the script does
// not run is refused by name.
//
// The idea: the script keeps integer ms states that are exactly the module's µs states divided by 1000
// when times are whole ms, so equality is exact (docs/migrating.md, the Lua mode).
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const Redis = require('ioredis');
const { token, leaky, window, slidingLog, limit, limitAll, withMode, LUA_SCRIPT, LUA_SHA } = require('..');
const { client } = require('./support');

const SPECS = {
  'tok:a': token(10, 3, 1000),
  'tok:b': token(5, 1, 7),
  'leaky:nodelay': leaky(10, 3, 1000, { nodelay: true }),
  'leaky:shape': leaky(4, 1, 250),
  'win:fixed': window(10, 1000, { fixed: true }),
  'win:odd': window(5, 999),
  'win:minute': window(7, 60000),
  'log:a': slidingLog(5, 1000),
  'log:gap': slidingLog(3, 500, { mingapMs: 100 }),
};
const KEYS = Object.keys(SPECS).sort();
const STEPS = [0, 0, 1, 1, 2, 7, 13, 50, 100, 250, 333, 999, 1000, 5000];

// A seeded generator (mulberry32): the same trace on every run.
function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  return { next, int, pick: (list) => list[int(list.length)] };
}

const freePort = () => new Promise((resolve, reject) => {
  const server = net.createServer();
  server.on('error', reject);
  server.listen(0, '127.0.0.1', () => { const { port } = server.address(); server.close(() => resolve(port)); });
});

let redis; // the module's test server
let plain; // { proc, port, dir, redis }

// The module's test server's binary; one started from PATH is reported as if in its working directory.
async function executable() {
  const info = await redis.info('server');
  const exe = /executable:(.*)\r?\n/.exec(info)[1].trim();
  if (fs.existsSync(exe)) return exe;
  const name = path.basename(exe);
  const found = (process.env.PATH || '').split(':').map((dir) => path.join(dir, name)).find((p) => fs.existsSync(p));
  return found || exe;
}

async function startPlain() {
  const exe = await executable();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-lua-'));
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const proc = spawn(exe, ['--bind', '127.0.0.1', '--port', String(port), '--dir', dir, '--save', '',
      '--appendonly', 'no'], { stdio: 'ignore' });
    const r = new Redis({ host: '127.0.0.1', port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    for (let i = 0; i < 200 && proc.exitCode === null; i++) { // a bound on the polling, not a timing asserted
      try {
        await r.connect();
        await r.ping();
        return { proc, port, dir, redis: r };
      } catch {
        await new Promise((done) => setTimeout(done, 20));
      }
    }
    r.disconnect();
    proc.kill();
  }
  throw new Error('could not start a plain redis-server');
}

before(async () => {
  redis = client();
  plain = await startPlain();
});
after(async () => {
  await redis.call('RL.CLOCK', 'REAL');
  redis.disconnect();
  plain.redis.disconnect();
  await new Promise((done) => { plain.proc.once('exit', done); plain.proc.kill('SIGTERM'); });
  fs.rmSync(plain.dir, { recursive: true, force: true });
});

const fields = (res) => (res.limits
  ? [res.allowed, res.retryAfterMs, res.resetAfterMs, res.limits.map(fields)]
  : [res.allowed, res.limit, res.remaining, res.retryAfterMs, res.resetAfterMs, res.waitMs]);

test('the package carries the one script', () => {
  const repo = path.join(__dirname, '..', '..', '..');
  assert.equal(fs.readFileSync(path.join(repo, 'clients', 'lua', 'ratelimit.lua'), 'utf8'), LUA_SCRIPT,
    'lib/ratelimit.lua differs from clients/lua/ratelimit.lua: run scripts/lua-copy.sh');
  assert.equal(fs.readFileSync(path.join(repo, 'clients', 'python', 'redis_ratelimit', 'ratelimit.lua'), 'utf8'), LUA_SCRIPT);
});

test("'auto' finds the module or its absence", async () => {
  assert.equal(await withMode(plain.redis).usesLua(), true);
  assert.equal(await withMode(redis).usesLua(), false);
  assert.equal(await withMode(redis, 'lua').usesLua(), true);
  assert.equal(await withMode(plain.redis, 'module').usesLua(), false);
  assert.throws(() => withMode(redis, 'fast'), /mode: must be 'auto', 'module' or 'lua'/);
  // auto on the plain server runs the script on the real clock (TIME): a new bucket gives one token
  const res = await limit(withMode(plain.redis), 'real', token(10, 5, 1000));
  assert.deepEqual([res.allowed, res.remaining, res.retryAfterMs, res.waitMs], [true, 9, -1, 0]);
  assert.ok(await plain.redis.pttl('real') > 0);
});

test('NOSCRIPT loads the script again; what it does not run is refused by name', async () => {
  await plain.redis.flushall();
  const lua = withMode(plain.redis, 'lua');
  lua.testNowMs = 1000000;
  assert.equal((await limit(lua, 'k', token(3, 1, 1000))).remaining, 2);
  await plain.redis.script('FLUSH');
  assert.equal((await limit(lua, 'k', token(3, 1, 1000))).remaining, 1);
  assert.deepEqual(await plain.redis.script('EXISTS', LUA_SHA), [1]);
  await assert.rejects(limit(lua, 'k', token(3, 1, 1000, { interval: true })), /INTERVAL: not supported by the Lua mode/);
  await assert.rejects(limit(lua, 'k', window(3, 1000), { force: true }), /FORCE: not supported by the Lua mode/);
  await assert.rejects(limit(lua, 'k', window(1e9, 1e7)), /limit: limit \* window_ms must not exceed 2\^51/);
  await assert.rejects(limitAll(lua, [['a', token(1, 1, 1)], ['b', leaky(1, 1, 1, { nodelay: true })]], { waitMs: 5 }),
    /WAIT: not supported by the Lua mode/);
  await assert.rejects(lua.call('RL.SMOOTH', 'k', 5), /RL.SMOOTH: the Lua mode runs/);
  assert.deepEqual(await plain.redis.keys('z*'), []);
});

async function trace(seed, calls, steps) {
  const r = rng(seed);
  const lua = withMode(plain.redis, 'lua');
  let now = 1700000000000 + r.int(1000000);
  let compared = 0;
  for (let step = 0; step < calls; step++) {
    now += r.pick(steps);
    await redis.call('RL.CLOCK', 'SET', now);
    lua.testNowMs = now;
    const dryrun = r.next() < 0.1;
    let want;
    let got;
    let what;
    if (r.next() < 0.3) {
      const chosen = [...KEYS].sort(() => r.next() - 0.5).slice(0, 1 + r.int(4));
      const limits = chosen.map((k) => [k, SPECS[k]]);
      const cost = r.pick([0, 1, 1, 1, 2, 3, 6]);
      want = await limitAll(redis, limits, { cost, dryrun });
      got = await limitAll(lua, limits, { cost, dryrun });
      what = `seed ${seed} call ${step} at ${now}: RL.ALL ${chosen} COST ${cost} DRYRUN ${dryrun}`;
    } else {
      const key = r.pick(KEYS);
      const spec = SPECS[key];
      const top = spec.params[0];
      const cost = r.pick([0, 1, 1, 1, 1, 2, 3, top, top + 1, r.int(top + 1)]);
      want = await limit(redis, key, spec, { cost, dryrun });
      got = await limit(lua, key, spec, { cost, dryrun });
      what = `seed ${seed} call ${step} at ${now}: ${key} COST ${cost} DRYRUN ${dryrun}`;
    }
    assert.deepEqual(fields(got), fields(want), what);
    compared += JSON.stringify(fields(want)).split(',').length;
  }
  return compared;
}

test('generated traces agree field for field with the module', async () => {
  let compared = 0;
  for (const [seed, steps] of [[1, STEPS], [2, STEPS], [3, [0, 0, 1, 2, 5, 10, 40]], [4, [0, 1, 3, 20]]]) {
    await redis.flushall();
    await plain.redis.flushall();
    compared += await trace(seed, 500, steps);
  }
  assert.ok(compared > 10000, `${compared} fields compared`);
});
