// RateLimiterModule (lib/adapters/rate-limiter-flexible.js) against a real redis-server with the module:
// every method and option as docs/migrating.md describes it, with exact fields under the frozen test clock,
// then side by side with rate-limiter-flexible's own RateLimiterRedis on the same server, the same calls in
// the same order: the fields that agree are compared, and each listed difference is shown by both.
//
// The idea: the module's clock is frozen 15 s into a minute (support.js), so a window of 60 s has 45 s
// left and every msBeforeNext of the module is exact; RateLimiterRedis counts with real Redis TTLs, which
// the frozen clock does not touch, so its msBeforeNext is only checked to lie within its window.
'use strict';

const { test, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { RateLimiterRedis, RateLimiterRes: LibraryRes } = require('rate-limiter-flexible');
const { RateLimiterModule, RateLimiterRes, lockinfo } = require('..');
const { client, fresh } = require('./support');

let redis;
before(() => { redis = client(); });
after(async () => { await redis.call('RL.CLOCK', 'REAL'); redis.disconnect(); });
beforeEach(() => fresh(redis));

const advance = (ms) => redis.call('RL.CLOCK', 'ADVANCE', ms);
const fields = (res) => (res === null ? null : res.toJSON());
const res = (remainingPoints, msBeforeNext, consumedPoints, isFirstInDuration = false) =>
  ({ remainingPoints, msBeforeNext, consumedPoints, isFirstInDuration });

// The call's outcome: ['ok', fields] when it resolved, ['rejected', fields] when it rejected with a
// RateLimiterRes; an Error is thrown on.
async function outcome(promise) {
  try {
    return ['ok', fields(await promise)];
  } catch (err) {
    if (!(err instanceof LibraryRes)) throw err;
    return ['rejected', fields(err)];
  }
}

function limiter(opts = {}) {
  return new RateLimiterModule({ storeClient: redis, points: 5, duration: 60, ...opts });
}

test('the result class is the library\'s RateLimiterRes when it is installed', () => {
  assert.equal(RateLimiterRes, LibraryRes);
});

test('consume: admitted until the points are used, then rejected with a RateLimiterRes; nothing counted when rejected', async () => {
  const rl = limiter();
  assert.deepEqual(await outcome(rl.consume('u')), ['ok', res(4, 45000, 1, true)]);
  assert.deepEqual(await outcome(rl.consume('u', 2)), ['ok', res(2, 45000, 3)]);
  assert.deepEqual(await outcome(rl.consume('u', '2')), ['ok', res(0, 45000, 5)]);
  assert.deepEqual(await outcome(rl.consume('u')), ['rejected', res(0, 45000, 5)]);
  assert.deepEqual(await outcome(rl.consume('u', 0)), ['ok', res(0, 45000, 5)]);
  await advance(44999);
  assert.deepEqual(await outcome(rl.consume('u')), ['rejected', res(0, 1, 5)]);
  await advance(1); // the epoch-aligned window ends
  assert.deepEqual(await outcome(rl.consume('u', 3)), ['ok', res(2, 60000, 3, true)]);
  // 3 do not fit where 2 remain: rejected, and remainingPoints says what still fits.
  assert.deepEqual(await outcome(rl.consume('u', 3)), ['rejected', res(2, 60000, 3)]);
  // More than points never fits: -1, as the module's retry_after_ms.
  assert.deepEqual(await outcome(rl.consume('v', 6)), ['rejected', res(5, -1, 0)]);
  assert.equal(await redis.exists('rlflxm:v'), 0);
});

test('penalty counts past points (a debt until the window ends); reward gives back, never below 0', async () => {
  const rl = limiter();
  await rl.consume('u', 2);
  assert.deepEqual(fields(await rl.penalty('u', 2)), res(1, 45000, 4));
  assert.deepEqual(fields(await rl.penalty('u', 4)), res(0, 45000, 5)); // 8 counted: 3 of debt
  assert.deepEqual(await outcome(rl.consume('u', 0)), ['rejected', res(0, 45000, 5)]); // in debt even 0 is refused
  assert.deepEqual(fields(await rl.reward('u', 3)), res(0, 45000, 5)); // back to 5 of 5
  assert.deepEqual(fields(await rl.reward('u', 2)), res(2, 45000, 3));
  assert.deepEqual(fields(await rl.reward('u', 10)), res(5, 0, 0)); // not below 0: the key goes
  assert.equal(await redis.exists('rlflxm:u'), 0);
  assert.deepEqual(fields(await rl.reward('w', 2)), res(5, 0, 0)); // nothing to give back: nothing written
  assert.equal(await redis.exists('rlflxm:w'), 0);
  assert.deepEqual(fields(await rl.penalty('p')), res(4, 45000, 1, true));
});

test('get looks without counting; null when nothing is counted', async () => {
  const rl = limiter();
  assert.equal(await rl.get('u'), null);
  assert.equal(await redis.exists('rlflxm:u'), 0);
  await rl.consume('u', 2);
  assert.deepEqual(fields(await rl.get('u')), res(3, 45000, 2));
  assert.deepEqual(fields(await rl.get('u')), res(3, 45000, 2));
  await advance(45000);
  assert.equal(await rl.get('u'), null);
});

test('blockDuration: a rejection blocks the key (LOCKOUT); after the block a full window still rejects', async () => {
  const rl = limiter({ blockDuration: 10 });
  await rl.consume('u', 5);
  // The rejection starts a block of 10 s; its msBeforeNext is the later of the block and the window's end.
  assert.deepEqual(await outcome(rl.consume('u')), ['rejected', res(0, 45000, 5)]);
  assert.deepEqual(await lockinfo(redis, 'rlflxm:u'), { lockMs: 10000, strikes: 1, locked: true });
  assert.deepEqual(fields(await rl.get('u')), res(0, 10000, 5));
  await advance(10000);
  // The window (45 s) outlasts the block: rejected again, and blocked again.
  assert.deepEqual(await outcome(rl.consume('u')), ['rejected', res(0, 35000, 5)]);
  assert.deepEqual(await lockinfo(redis, 'rlflxm:u'), { lockMs: 10000, strikes: 2, locked: true });
  await advance(35000);
  assert.deepEqual(await outcome(rl.consume('u')), ['ok', res(4, 60000, 1, true)]);
  // A block longer than the window holds past its end.
  const long = limiter({ blockDuration: 120, keyPrefix: 'long' });
  await long.consume('u', 5);
  assert.deepEqual(await outcome(long.consume('u')), ['rejected', res(0, 120000, 5)]);
  await advance(60000);
  assert.deepEqual(await outcome(long.consume('u')), ['rejected', res(0, 60000, 5)]);
  await advance(60000);
  assert.deepEqual(await outcome(long.consume('u')), ['ok', res(4, 60000, 1, true)]);
  // Without blockDuration a rejection blocks nothing.
  const plain = limiter({ keyPrefix: 'plain' });
  await plain.consume('u', 5);
  await outcome(plain.consume('u'));
  assert.deepEqual(await lockinfo(redis, 'plain:u'), { lockMs: 0, strikes: 0, locked: false });
});

test('block: RL.BLOCK for secDuration, keeping the count; 0 blocks for 10^12 ms', async () => {
  const rl = limiter();
  await rl.consume('u', 2);
  assert.deepEqual(fields(await rl.block('u', 5)), res(0, 5000, 5));
  assert.deepEqual(fields(await rl.get('u')), res(0, 5000, 5));
  assert.deepEqual(await outcome(rl.consume('u')), ['rejected', res(0, 5000, 5)]);
  await advance(5000);
  assert.deepEqual(await outcome(rl.consume('u')), ['ok', res(2, 40000, 3)]); // the 2 counted before are kept
  assert.deepEqual(fields(await rl.block('f', 0)), res(0, -1, 5));
  assert.deepEqual(await lockinfo(redis, 'rlflxm:f'), { lockMs: 1e12, strikes: 0, locked: true });
  assert.deepEqual(fields(await rl.block('h', 0.5)), res(0, 500, 5));
});

test('set: the count of the current window, atomically, forgetting any block', async () => {
  const rl = limiter();
  assert.deepEqual(fields(await rl.set('u', 3)), res(2, 45000, 3));
  assert.deepEqual(fields(await rl.get('u')), res(2, 45000, 3));
  assert.deepEqual(fields(await rl.set('u', 1, 60)), res(4, 45000, 1));
  assert.deepEqual(fields(await rl.set('u', 7, -1)), res(0, 45000, 5)); // past points: a debt
  assert.deepEqual(await outcome(rl.consume('u', 0)), ['rejected', res(0, 45000, 5)]);
  await rl.block('u', 100);
  assert.deepEqual(fields(await rl.set('u', 0)), res(5, 0, 0));
  assert.equal(await rl.get('u'), null);
  assert.deepEqual(await lockinfo(redis, 'rlflxm:u'), { lockMs: 0, strikes: 0, locked: false });
});

test('delete: RL.RESET, true if the key held something', async () => {
  const rl = limiter();
  await rl.consume('u');
  assert.equal(await rl.delete('u'), true);
  assert.equal(await rl.delete('u'), false);
  assert.equal(await rl.get('u'), null);
  await rl.block('b', 10);
  assert.equal(await rl.delete('b'), true);
  assert.deepEqual(await outcome(rl.consume('b')), ['ok', res(4, 45000, 1, true)]);
});

test('keyPrefix: keys are prefix:key, the default rlflxm, none with an empty prefix', async () => {
  assert.equal(limiter().keyPrefix, 'rlflxm');
  await limiter().consume('a');
  await limiter({ keyPrefix: 'app' }).consume('a');
  await limiter({ keyPrefix: '' }).consume('a');
  assert.deepEqual((await redis.keys('*')).sort(), ['a', 'app:a', 'rlflxm:a']);
  assert.equal(limiter({ keyPrefix: 'app' }).parseKey('app:a'), 'a');
  // Limiters of other points or duration on the same key share its count (the key holds no parameters).
  assert.deepEqual(fields(await limiter({ points: 10 }).get('a')), res(9, 45000, 1));
});

test('options and arguments: every bad one is an error naming it, and changes nothing', async () => {
  const bad = [
    [{ points: 0 }, /^TypeError: points: must be an integer between 1 and 1000000000000, not 0$/],
    [{ points: 2.5 }, /^TypeError: points: /],
    [{ points: undefined }, /^TypeError: points: /],
    [{ duration: 0 }, /^TypeError: duration: must be a number of seconds/],
    [{ duration: 0.0005 }, /^TypeError: duration: /],
    [{ duration: '60' }, /^TypeError: duration: /],
    [{ duration: 2e9 }, /^TypeError: duration: /],
    [{ blockDuration: -1 }, /^TypeError: blockDuration: /],
    [{ keyPrefix: 5 }, /^TypeError: keyPrefix: must be a string/],
    [{ execEvenly: true }, /^TypeError: execEvenly: not supported by RateLimiterModule/],
    [{ insuranceLimiter: {} }, /^TypeError: insuranceLimiter: not supported/],
    [{ inMemoryBlockOnConsumed: 10 }, /^TypeError: inMemoryBlockOnConsumed: not supported/],
    [{ blockOnConsumed: 10 }, /^TypeError: blockOnConsumed: not supported/],
    [{ rejectIfRedisNotReady: true }, /^TypeError: rejectIfRedisNotReady: not supported/],
    [{ point: 5 }, /^TypeError: point: not an option of RateLimiterModule$/],
    [{ storeClient: undefined }, /^TypeError: storeClient: /],
  ];
  for (const [opts, message] of bad) assert.throws(() => limiter(opts), message, JSON.stringify(opts));
  assert.doesNotThrow(() => limiter({ execEvenly: false, blockDuration: 0, storeType: 'redis' }));
  const rl = limiter();
  await rl.consume('u', 2);
  const calls = [
    [() => rl.consume('u', -1), /^TypeError: points: must be an integer between 0 and/],
    [() => rl.consume('u', 1.5), /^TypeError: points: /],
    [() => rl.consume('u', 'abc'), /^TypeError: points: /],
    [() => rl.consume('u', 1e13), /^TypeError: points: /],
    [() => rl.consume('u', 1, { customDuration: 10 }), /^TypeError: customDuration: not supported/],
    [() => rl.penalty('u', -2), /^TypeError: points: /],
    [() => rl.reward('u', 0.5), /^TypeError: points: /],
    [() => rl.block('u', -5), /^TypeError: secDuration: /],
    [() => rl.block('u', 'x'), /^TypeError: secDuration: /],
    [() => rl.set('u', 3, 10), /^TypeError: secDuration: RateLimiterModule sets a count until the current window ends/],
    [() => rl.set('u', 3, 0), /^TypeError: secDuration: /],
    [() => rl.set('u', -3), /^TypeError: points: /],
  ];
  for (const [call, message] of calls) await assert.rejects(call(), message);
  assert.deepEqual(fields(await rl.get('u')), res(3, 45000, 2));
  assert.deepEqual(await lockinfo(redis, 'rlflxm:u'), { lockMs: 0, strikes: 0, locked: false });
});

test('a key the library left (a string) answers WRONGTYPE: an Error, not a RateLimiterRes', async () => {
  await redis.set('rlflx:u', '3', 'EX', 60);
  const rl = limiter({ keyPrefix: 'rlflx' });
  await assert.rejects(rl.consume('u'), (err) => err instanceof Error && /WRONGTYPE/.test(err.message));
  await assert.rejects(rl.get('u'), /WRONGTYPE/);
  assert.equal(await redis.get('rlflx:u'), '3');
  assert.deepEqual(await outcome(limiter().consume('u')), ['ok', res(4, 45000, 1, true)]); // the default prefix differs
});

test('without rate-limiter-flexible installed, RateLimiterRes is the package\'s own class with the same fields', () => {
  const adapter = path.join(__dirname, '..', 'lib', 'adapters', 'rate-limiter-flexible.js');
  const script = `
    const Module = require('module');
    const resolve = Module._resolveFilename;
    Module._resolveFilename = function (request, ...rest) {
      if (request === 'rate-limiter-flexible') {
        const err = new Error("Cannot find module 'rate-limiter-flexible'"); err.code = 'MODULE_NOT_FOUND'; throw err;
      }
      return resolve.call(this, request, ...rest);
    };
    const { RateLimiterRes } = require(${JSON.stringify(adapter)});
    const r = new RateLimiterRes(3, 45000, 2, true);
    process.stdout.write(JSON.stringify({ name: RateLimiterRes.name, json: r, text: String(r),
      empty: new RateLimiterRes(), fields: [r.remainingPoints, r.msBeforeNext, r.consumedPoints, r.isFirstInDuration] }));`;
  const out = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  const seen = JSON.parse(out.stdout);
  assert.equal(seen.name, 'ModuleRateLimiterRes');
  assert.deepEqual(seen.json, res(3, 45000, 2, true));
  assert.deepEqual(JSON.parse(seen.text), res(3, 45000, 2, true));
  assert.deepEqual(seen.empty, res(0, 0, 0, false));
  assert.deepEqual(seen.fields, [3, 45000, 2, true]);
});

// Side by side: rate-limiter-flexible's RateLimiterRedis (keys lib:*, counted with real TTLs) and
// RateLimiterModule (keys mod:*, the frozen clock) on the same server, the same calls in the same order.
function pair(opts = {}) {
  return {
    lib: new RateLimiterRedis({ storeClient: redis, points: 5, duration: 60, keyPrefix: 'lib', ...opts }),
    mod: new RateLimiterModule({ storeClient: redis, points: 5, duration: 60, keyPrefix: 'mod', ...opts }),
  };
}

// The library's msBeforeNext is its key's TTL: within its window, never exact under real time.
function withinWindow(ms, windowMs = 60000) {
  assert.ok(ms > 0 && ms <= windowMs, `library msBeforeNext ${ms} not within (0, ${windowMs}]`);
}

// Both outcomes, the library's msBeforeNext checked and set aside (the module's stays in, exact).
async function both(call) {
  const { lib, mod } = await call();
  const [libKind, libFields] = await lib;
  const [modKind, modFields] = await mod;
  if (libFields !== null) {
    withinWindow(libFields.msBeforeNext);
    delete libFields.msBeforeNext;
  }
  return { lib: [libKind, libFields], mod: [modKind, modFields] };
}

const bare = (remainingPoints, consumedPoints, isFirstInDuration = false) =>
  ({ remainingPoints, consumedPoints, isFirstInDuration });

// A small deterministic generator, so that a failing trace can be replayed.
function generator(seed) {
  let state = seed >>> 0;
  return (n) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
}

test('side by side: random traces agree on every field but the window\'s start, up to the first rejection', async () => {
  const { lib, mod } = pair();
  const random = generator(30);
  let steps = 0;
  for (let trace = 0; trace < 40; trace++) {
    const key = `t${trace}`;
    let count = 0;
    for (;;) {
      const op = random(4);
      const n = 1 + random(3);
      let out;
      let counting = false;
      if (op === 0 || op === 3) {
        out = await both(() => ({ lib: outcome(lib.consume(key, n)), mod: outcome(mod.consume(key, n)) }));
        counting = true;
      } else if (op === 1 && count + n <= 5) {
        out = await both(() => ({ lib: outcome(lib.penalty(key, n)), mod: outcome(mod.penalty(key, n)) }));
        counting = true;
      } else if (op === 1 && n < count) {
        out = await both(() => ({ lib: outcome(lib.reward(key, n)), mod: outcome(mod.reward(key, n)) }));
        count -= n;
      } else {
        out = await both(() => ({ lib: outcome(lib.get(key)), mod: outcome(mod.get(key)) }));
      }
      steps++;
      if (counting && count + n > 5) {
        // The rejection: the library counts it (and reports nothing remaining), the module does not.
        assert.deepEqual(out.lib, ['rejected', bare(0, count + n)], `${key} step ${steps}`);
        assert.deepEqual(out.mod, ['rejected', res(5 - count, 45000, count)], `${key} step ${steps}`);
        break;
      }
      if (counting) count += n;
      const [kind, modFields] = out.mod;
      if (modFields !== null) {
        assert.equal(modFields.msBeforeNext, 45000);
        delete modFields.msBeforeNext;
      }
      assert.deepEqual(out.lib, [kind, modFields], `${key} step ${steps}`);
    }
  }
  assert.ok(steps > 100, `${steps} steps`);
});

test('side by side: each listed difference, shown by both', async () => {
  const { lib, mod } = pair();
  const rejectedBoth = async (key, n = 1) => both(() => ({ lib: outcome(lib.consume(key, n)), mod: outcome(mod.consume(key, n)) }));

  // A rejected consume: counted by the library (6 of 5), not by the module; a reward of 1 then admits one
  // more on the module only.
  await lib.consume('a', 5);
  await mod.consume('a', 5);
  assert.deepEqual(await rejectedBoth('a'), { lib: ['rejected', bare(0, 6)], mod: ['rejected', res(0, 45000, 5)] });
  assert.deepEqual((await both(() => ({ lib: outcome(lib.reward('a')), mod: outcome(mod.reward('a')) }))),
    { lib: ['ok', bare(0, 5)], mod: ['ok', res(1, 45000, 4)] });
  assert.deepEqual(await rejectedBoth('a'), { lib: ['rejected', bare(0, 6)], mod: ['ok', res(0, 45000, 5)] });

  // A reward on a new key: the library's count goes below 0 (7 remaining of 5), the module's stays at 0.
  assert.deepEqual(await both(() => ({ lib: outcome(lib.reward('b', 2)), mod: outcome(mod.reward('b', 2)) })),
    { lib: ['ok', bare(7, -2, true)], mod: ['ok', res(5, 0, 0)] });
  assert.deepEqual(await rejectedBoth('b'), { lib: ['ok', bare(6, -1)], mod: ['ok', res(4, 45000, 1, true)] });

  // A penalty past points: the library reports 7 consumed, the module points (5): its reply says remaining 0.
  assert.deepEqual(await both(() => ({ lib: outcome(lib.penalty('c', 7)), mod: outcome(mod.penalty('c', 7)) })),
    { lib: ['ok', bare(0, 7, true)], mod: ['ok', res(0, 45000, 5)] });

  // More than points at once: the library counts it, the module rejects it with -1 (it never fits).
  assert.deepEqual(await rejectedBoth('d', 6), { lib: ['rejected', bare(0, 6, true)], mod: ['rejected', res(5, -1, 0)] });

  // get after everything was given back: the library's key holds 0 (a result), the module's is gone (null).
  await lib.consume('e', 2);
  await mod.consume('e', 2);
  await lib.reward('e', 2);
  await mod.reward('e', 2);
  assert.deepEqual(await both(() => ({ lib: outcome(lib.get('e')), mod: outcome(mod.get('e')) })),
    { lib: ['ok', bare(5, 0, true)], mod: ['ok', null] });

  // block: the library writes points + 1 (6) for the block; the module keeps the count and reports points.
  const blockLib = fields(await lib.block('f', 5));
  assert.deepEqual(blockLib, res(0, 5000, 6));
  assert.deepEqual(fields(await mod.block('f', 5)), res(0, 5000, 5));
  assert.deepEqual(fields(await lib.block('g', 0)), res(0, -1, 6));
  assert.deepEqual(fields(await mod.block('g', 0)), res(0, -1, 5));

  // set: the library answers remainingPoints 0 and the duration; the module the window's state.
  assert.deepEqual(fields(await lib.set('h', 3)), res(0, 60000, 3));
  assert.deepEqual(fields(await mod.set('h', 3)), res(2, 45000, 3));
  assert.deepEqual(fields(await lib.set('i', 3, 0)), res(0, -1, 3)); // never expires
  await assert.rejects(mod.set('i', 3, 0), /^TypeError: secDuration: /);

  // delete: the same.
  assert.deepEqual([await lib.delete('h'), await lib.delete('h')], [true, false]);
  assert.deepEqual([await mod.delete('h'), await mod.delete('h')], [true, false]);
});

test('side by side: blockDuration', async () => {
  const { lib, mod } = pair({ blockDuration: 10 });
  await lib.consume('u', 5);
  await mod.consume('u', 5);
  // The library answers the block's length; the module the later of the block and the window's end.
  const [libKind, libFields] = await outcome(lib.consume('u'));
  assert.deepEqual([libKind, libFields], ['rejected', res(0, 10000, 6)]);
  assert.deepEqual(await outcome(mod.consume('u')), ['rejected', res(0, 45000, 5)]);
  // During the block: the library's key holds points + 1 for 10 s (then it is gone: a new window), the
  // module's lock holds 10 s over the window's count (after it, the full window rejects again).
  const during = fields(await lib.get('u'));
  withinWindow(during.msBeforeNext, 10000);
  assert.deepEqual({ ...during, msBeforeNext: 0 }, res(0, 0, 6));
  assert.deepEqual(fields(await mod.get('u')), res(0, 10000, 5));
  assert.ok((await redis.pttl('lib:u')) <= 10000);
});

test('the declarations type-check as an application uses them (tsc --strict), and refuse the wrong uses', () => {
  const types = path.join(__dirname, 'types');
  const file = 'rate-limiter-flexible.mts';
  const directives = require('node:fs').readFileSync(path.join(types, file), 'utf8').match(/@ts-expect-error/g);
  assert.equal(directives.length, 4);
  const tsc = path.join(__dirname, '..', 'node_modules', '.bin', 'tsc');
  const out = spawnSync(tsc, ['--noEmit', '--strict', '--module', 'node16', '--moduleResolution', 'node16',
    '--target', 'es2022', '--types', 'node', file], { cwd: types, encoding: 'utf8' });
  assert.equal(out.status, 0, `${out.stdout}${out.stderr}`);
});
