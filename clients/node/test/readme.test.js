// The README's examples (clients/node/README.md), run as written: each ```js block is the body of an async
// function whose require() gives the package for 'redis-ratelimit' and, for 'ioredis', a Redis that
// connects to the test server when the block says `new Redis()` (the README's default, 127.0.0.1:6379).
// Each block runs on an empty database with the clock frozen, and must complete without error. The block
// marked `js cluster` needs a cluster: test/cluster/cluster.test.js runs it.
'use strict';

const { test, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const ioredis = require('ioredis');
const { client, fresh, PORT } = require('./support');

const { README, blocks, runBlock } = require('./readme-blocks');

function testRedis(made) {
  class Redis extends ioredis.Redis {
    constructor(...args) {
      super(...(args.length === 0 ? [{ host: '127.0.0.1', port: PORT }] : args));
      made.push(this);
    }
  }
  return { Redis, default: Redis, Cluster: ioredis.Cluster };
}

let redis;
before(() => { redis = client(); });
after(async () => { await redis.call('RL.CLOCK', 'REAL'); redis.disconnect(); });
beforeEach(() => fresh(redis));

const examples = blocks(README).filter(([info]) => info === 'js');

test('the README has its examples', () => {
  assert.ok(examples.length >= 5, `${examples.length} js blocks`);
  assert.equal(blocks(README).filter(([info]) => info === 'js cluster').length, 1);
});

examples.forEach(([, code], i) => {
  const title = code.split('\n').find((line) => /await|app\.use/.test(line)) || code.split('\n')[0];
  test(`README example ${i + 1}: ${title.trim().slice(0, 70)}`, async () => {
    const made = [];
    await runBlock(code, testRedis(made), made);
    assert.ok(made.length > 0, 'the block made no client');
  });
});
