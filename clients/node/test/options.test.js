// The options beyond a spec's parameters, against a real redis-server with the module: ATMOST and its
// `granted` field, RL.WINDOW's SUBWINDOWS n, WAIT on RL.TOKEN, RL.WINDOW and RL.ALL (woken by the clock),
// a spec's own COST and FORCE (a clause's in RL.ALL); and the commands without a spec, RL.RESET and
// CL.THROTTLE. Replies are the documented values (docs/commands.md) at a frozen clock.
'use strict';

const { test, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const { token, window, slidingLog, limit, limitAll, reset, throttle, commandArgs, allArgs, throttleArgs,
  parseResult } = require('..');
const { T0, client, fresh, waitBlocked } = require('./support');

let redis;
before(() => { redis = client(); });
after(async () => { await redis.call('RL.CLOCK', 'REAL'); redis.disconnect(); });
beforeEach(() => fresh(redis));

const clock = (...args) => redis.call('RL.CLOCK', ...args);
const result = (allowed, lim, remaining, retryAfterMs, resetAfterMs, waitMs) =>
  ({ allowed, limit: lim, remaining, retryAfterMs, resetAfterMs, waitMs });
const granted = (allowed, lim, remaining, retryAfterMs, resetAfterMs, units) =>
  ({ ...result(allowed, lim, remaining, retryAfterMs, resetAfterMs, 0), granted: units });

test('argument lists and the granted field', () => {
  assert.deepEqual(commandArgs('k', window(6, 60000, { subwindows: 6 })), ['RL.WINDOW', 'k', 6, 60000, 'SUBWINDOWS', 6]);
  assert.deepEqual(commandArgs('k', window(6, 60000, { fixed: true, subwindows: 6 })),
    ['RL.WINDOW', 'k', 6, 60000, 'FIXED', 'SUBWINDOWS', 6]); // both: the module refuses the pair by name
  assert.deepEqual(commandArgs('k', token(10, 1, 1000), { cost: 5, atmost: true, waitMs: 100 }),
    ['RL.TOKEN', 'k', 10, 1, 1000, 'COST', 5, 'ATMOST', 'WAIT', 100]);
  assert.deepEqual(allArgs([['a', token(10, 1, 1000)]], { cost: 2, waitMs: 50 }),
    ['RL.ALL', 1, 'a', 'COST', 2, 'WAIT', 50, 'LIMIT', 'TOKEN', 10, 1, 1000]);
  assert.deepEqual(allArgs([['a', token(10, 1, 1000, { cost: 4 })], ['b', window(3, 60000, { fixed: true, force: true })]]),
    ['RL.ALL', 2, 'a', 'b', 'LIMIT', 'TOKEN', 10, 1, 1000, 'COST', 4, 'LIMIT', 'WINDOW', 3, 60000, 'FIXED', 'FORCE']);
  assert.deepEqual(commandArgs('k', slidingLog(5, 1000, { cost: 2 })), ['RL.SLIDINGLOG', 'k', 5, 1000, 'COST', 2]);
  assert.deepEqual(throttleArgs('k', 15, 30, 60), ['CL.THROTTLE', 'k', 15, 30, 60]);
  assert.deepEqual(throttleArgs('k', 15, 30, 60, 0), ['CL.THROTTLE', 'k', 15, 30, 60, 0]);
  assert.deepEqual(parseResult([1, 10, 0, -1, 10000, 0, 3]), granted(true, 10, 0, -1, 10000, 3));
  assert.throws(() => allArgs([['a', { kind: 'TOKEN' }]]), TypeError);
});

test('ATMOST takes what is there', async () => {
  const spec = token(10, 1, 1000);
  await limit(redis, 't', spec, { cost: 7 });
  assert.deepEqual(await limit(redis, 't', spec, { cost: 5, atmost: true }), granted(true, 10, 0, -1, 10000, 3));
  assert.deepEqual(await limit(redis, 't', spec, { cost: 5, atmost: true }), granted(false, 10, 0, 1000, 10000, 0));
  await clock('ADVANCE', 2000);
  assert.deepEqual(await limit(redis, 't', spec, { cost: 5, atmost: true, dryrun: true }),
    granted(true, 10, 0, -1, 10000, 2));
  assert.equal((await limit(redis, 't', spec, { cost: 0, readonly: true })).remaining, 2); // the dry run took nothing
  const w = window(5, 60000, { fixed: true });
  await limit(redis, 'w', w, { cost: 4 });
  assert.deepEqual(await limit(redis, 'w', w, { cost: 3, atmost: true }), granted(true, 5, 0, -1, 43000, 1)); // 2 s on
  assert.equal('granted' in await limit(redis, 'w', w), false); // without ATMOST, six fields
  await assert.rejects(limit(redis, 't', spec, { cost: 5, atmost: true, force: true }), /ATMOST/);
  await assert.rejects(limit(redis, 'l', slidingLog(10, 1000), { cost: 5, atmost: true }), /ATMOST/);
});

test('SUBWINDOWS n: cells', async () => {
  const spec = window(6, 60000, { subwindows: 6 }); // 6 per minute in cells of 10 s
  await clock('SET', T0);
  assert.deepEqual(await limit(redis, 's', spec, { cost: 3 }), result(true, 6, 3, -1, 60000, 0));
  await clock('SET', T0 + 25000);
  assert.deepEqual(await limit(redis, 's', spec, { cost: 3 }), result(true, 6, 0, -1, 55000, 0));
  assert.deepEqual(await limit(redis, 's', spec), result(false, 6, 0, 35000, 55000, 0)); // until cell 0 leaves
  await clock('SET', T0 + 60000); // cell 0 has left: 3 counted; the 3 taken now count until 120 s
  assert.deepEqual(await limit(redis, 's', spec, { cost: 5, atmost: true }), granted(true, 6, 0, -1, 60000, 3));
  await assert.rejects(limit(redis, 'b', window(6, 60000, { subwindows: 7 })), /ERR SUBWINDOWS: /);
  await assert.rejects(limit(redis, 'b', window(6, 60000, { subwindows: 61 })), /ERR SUBWINDOWS: /);
  await assert.rejects(limit(redis, 'b', window(6, 60000, { fixed: true, subwindows: 6 })),
    /ERR (FIXED|SUBWINDOWS): cannot be combined/);
  assert.equal(await redis.exists('b'), 0);
});

// Start call(a client of its own), wait until it blocks, advance the clock a second: what it got.
async function waited(call) {
  const waiter = client();
  try {
    const answer = call(waiter);
    assert.equal(await waitBlocked(redis, 1), true, 'the waiter never blocked');
    await clock('ADVANCE', 1000);
    return await answer;
  } finally {
    waiter.disconnect();
  }
}

test('WAIT on RL.TOKEN, RL.WINDOW and RL.ALL', async () => {
  const spec = token(1, 1, 1000);
  await limit(redis, 't', spec);
  assert.deepEqual(await waited((c) => limit(c, 't', spec, { waitMs: 600000 })), result(true, 1, 0, -1, 1000, 0));
  const w = window(1, 1000, { fixed: true });
  await limit(redis, 'w', w);
  assert.deepEqual(await waited((c) => limit(c, 'w', w, { waitMs: 600000 })), result(true, 1, 0, -1, 1000, 0));
  const limits = [['{u}:a', token(1, 1, 1000)], ['{u}:b', window(5, 60000, { fixed: true })]];
  await limitAll(redis, limits);
  const got = await waited((c) => limitAll(c, limits, { waitMs: 600000 }));
  assert.deepEqual([got.allowed, got.limits.map((r) => r.remaining)], [true, [0, 3]]);
  // A retry beyond the timeout is answered at once; the _RO form and WAIT 0 are refused by name.
  await limit(redis, 'n', spec);
  assert.deepEqual(await limit(redis, 'n', spec, { waitMs: 999 }), result(false, 1, 0, 1000, 1000, 0));
  await assert.rejects(limit(redis, 'n', spec, { waitMs: 100, readonly: true }), /WAIT/);
  await assert.rejects(limit(redis, 'n', spec, { waitMs: 0 }), /ERR WAIT: /);
});

test('a spec\'s own COST and FORCE', async () => {
  const limits = [['{u}:a', token(10, 1, 1000, { cost: 4 })], ['{u}:b', window(3, 60000, { fixed: true })]];
  let out = await limitAll(redis, limits);
  assert.deepEqual([out.allowed, out.limits.map((r) => r.remaining)], [true, [6, 2]]);
  out = await limitAll(redis, [['{u}:a', token(10, 1, 1000, { force: true })], limits[1]], { cost: 2 });
  assert.deepEqual([out.allowed, out.limits.map((r) => r.remaining)], [true, [4, 0]]);
  // The window denies: nothing is written, the forced bucket included (read at capacity 2, it holds 2).
  out = await limitAll(redis, [['{u}:a', token(2, 1, 1000, { force: true })], limits[1]]);
  assert.deepEqual([out.allowed, out.limits.map((r) => [r.allowed, r.remaining])], [false, [[true, 2], [false, 0]]]);
  assert.equal((await limit(redis, '{u}:a', token(10, 1, 1000), { cost: 0, readonly: true })).remaining, 4);
  assert.equal((await limit(redis, 't', token(10, 1, 1000, { cost: 4 }))).remaining, 6);
  await assert.rejects(limit(redis, 't', token(10, 1, 1000, { cost: 4 }), { cost: 2 }), /ERR COST: given more than once/);
});

test('RL.RESET deletes limiter keys, all or nothing', async () => {
  await limit(redis, 'a', token(10, 1, 1000));
  await limit(redis, 'b', slidingLog(5, 1000));
  assert.equal(await reset(redis, 'a', 'b', 'missing'), 2);
  assert.equal(await redis.exists('a', 'b'), 0);
  assert.equal((await limit(redis, 'a', token(10, 1, 1000))).remaining, 9); // a new bucket
  await redis.set('s', 'x');
  await assert.rejects(reset(redis, 'a', 's'), /WRONGTYPE/);
  assert.equal(await redis.exists('a', 's'), 2);
});

test('CL.THROTTLE answers as redis-cell', async () => {
  const fields = (limited, lim, remaining, retryAfterS, resetAfterS) =>
    ({ limited, allowed: !limited, limit: lim, remaining, retryAfterS, resetAfterS });
  assert.deepEqual(await throttle(redis, 'user123', 15, 30, 60), fields(false, 16, 15, -1, 2));
  assert.deepEqual(await throttle(redis, 'user123', 15, 30, 60, 16), fields(true, 16, 15, 2, 2));
  assert.deepEqual(await throttle(redis, 'user123', 15, 30, 60, 0), fields(false, 16, 15, -1, 2));
  await assert.rejects(throttle(redis, 'user123', 'x', 30, 60), /ERR max_burst: /);
});
