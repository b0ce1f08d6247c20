// The BLOCK option of RL.LEAKY and RL.SMOOTH through limit(..., { block: true }) against a real redis-server:
// an admitted request that must wait has its reply held by the server (the client is among the blocked
// ones) until the wait is over, or here until CLIENT UNBLOCK releases it early (the module's clock is
// frozen and the hold runs on real time, so the test ends the hold itself rather than timing it); a request
// with nothing to wait for answers at once; BLOCK where the module refuses it is the server's error, naming it.
'use strict';

const { test, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const { leaky, smooth, token, limit, commandArgs } = require('..');
const { client, fresh, waitBlocked } = require('./support');

let redis;
before(() => { redis = client(); });
after(async () => { await redis.call('RL.CLOCK', 'REAL'); redis.disconnect(); });
beforeEach(() => fresh(redis));

test('block: true sends BLOCK after the other options', () => {
  assert.deepEqual(commandArgs('q', leaky(3, 3, 1000), { block: true, cost: 2 }),
    ['RL.LEAKY', 'q', 3, 3, 1000, 'COST', 2, 'BLOCK']);
  assert.deepEqual(commandArgs('s', smooth(2), { block: true }), ['RL.SMOOTH', 's', '2', 'BLOCK']);
  assert.deepEqual(commandArgs('q', leaky(3, 3, 1000)), ['RL.LEAKY', 'q', 3, 3, 1000]);
});

// A held reply: the call is blocked on the server until CLIENT UNBLOCK sends the admission early.
async function heldUntilUnblocked(spec, key) {
  const holder = client();
  try {
    const id = await holder.client('ID');
    const answer = limit(holder, key, spec, { block: true });
    assert.equal(await waitBlocked(redis, 1), true, 'the reply was not held');
    assert.equal(await redis.call('CLIENT', 'UNBLOCK', id), 1);
    return await answer;
  } finally {
    holder.disconnect();
  }
}

test('RL.LEAKY BLOCK holds an admitted reply for its wait', async () => {
  const spec = leaky(3, 3, 1000);
  assert.deepEqual(await limit(redis, 'q', spec, { block: true }),
    { allowed: true, limit: 3, remaining: 2, retryAfterMs: -1, resetAfterMs: 334, waitMs: 0 });
  const held = await heldUntilUnblocked(spec, 'q');
  assert.deepEqual([held.allowed, held.waitMs, held.remaining], [true, 334, 1]);
  assert.equal(await waitBlocked(redis, 0), true);
});

test('RL.SMOOTH BLOCK holds a reservation until its permits are due', async () => {
  const spec = smooth(1);
  // A fresh limiter has stored a second's permits: the first two calls start at once (Guava's pay-ahead).
  for (let i = 0; i < 2; i++) assert.equal((await limit(redis, 's', spec, { block: true })).waitMs, 0);
  const held = await heldUntilUnblocked(spec, 's');
  assert.deepEqual([held.allowed, held.waitMs], [true, 1000]);
});

test('BLOCK where the module refuses it names BLOCK, and changes nothing', async () => {
  const refused = [
    [leaky(3, 3, 1000, { nodelay: true }), {}, /ERR BLOCK: cannot be combined with NODELAY/],
    [leaky(3, 3, 1000), { readonly: true }, /ERR 'BLOCK': not an option of rl.leaky_ro/],
    [smooth(1), { readonly: true }, /ERR 'BLOCK': not an option of rl.smooth_ro/],
    [token(3, 1, 1000), {}, /ERR 'BLOCK': not an option of rl.token/],
  ];
  for (const [spec, opts, error] of refused) {
    await assert.rejects(limit(redis, 'k', spec, { ...opts, block: true }), error);
  }
  assert.equal(await redis.exists('k'), 0);
});
