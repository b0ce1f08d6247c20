// The package on a real 3-primary Redis Cluster (run-cluster-tests.sh starts it) through an ioredis Cluster:
// each call reaches the primary that owns its key's slot directly (no MOVED answered anywhere), RL.ALL and
// RL.RESET run on keys sharing a hash tag (and other keys are the server's CROSSSLOT), the leases and the
// lease helper, the locks, CL.THROTTLE, and the stored policies: set on every primary, checked on keys of
// each primary, read back alike from all, and a primary that disagrees named; withReplicas on keys of every
// shard (each primary has a replica: the WAIT on the key's own primary). The module's real clock runs:
// only fields that no elapsed time changes are compared.
'use strict';

const { test, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const Redis = require('ioredis');
const calculateSlot = require('cluster-key-slot');
const rl = require('../..');

const PORTS = (process.env.RL_CLUSTER_PORTS || '').split(' ').filter(Boolean).map(Number);
const REPLICA_PORTS = (process.env.RL_CLUSTER_REPLICA_PORTS || '').split(' ').filter(Boolean).map(Number);
let cluster;
let direct; // one plain client per primary
before(async () => {
  assert.equal(PORTS.length, 3, 'RL_CLUSTER_PORTS: run clients/node/run-cluster-tests.sh');
  cluster = new Redis.Cluster(PORTS.map((port) => ({ host: '127.0.0.1', port })));
  direct = PORTS.map((port) => new Redis({ host: '127.0.0.1', port }));
});
after(async () => {
  await cluster.quit();
  for (const node of direct) node.disconnect();
});
beforeEach(async () => {
  for (const node of direct) {
    await node.call('FLUSHALL');
    await node.call('RL.POLICY', 'FLUSH');
    await node.call('CONFIG', 'RESETSTAT');
  }
});

// The plain client of the primary that owns key's slot.
async function owner(key) {
  const slot = calculateSlot(key);
  for (const node of direct) {
    const ranges = await node.call('CLUSTER', 'SLOTS');
    const me = await node.call('CLUSTER', 'MYID');
    if (ranges.some(([from, to, master]) => slot >= from && slot <= to && master[2] === me)) return node;
  }
  throw new Error(`no primary owns slot ${slot}`);
}

// MOVED and ASK answers on every primary since the last CONFIG RESETSTAT.
async function redirections() {
  let count = 0;
  for (const node of direct) {
    const info = await node.info('errorstats');
    for (const m of info.matchAll(/errorstat_(?:MOVED|ASK):count=(\d+)/g)) count += Number(m[1]);
  }
  return count;
}

test('limit() reaches each key\'s own primary, with no redirection', async () => {
  const keys = Array.from({ length: 30 }, (_, i) => `user:${i}`);
  for (const key of keys) {
    assert.deepEqual(await rl.limit(cluster, key, rl.token(10, 1, 1000), { cost: 3 }),
      { allowed: true, limit: 10, remaining: 7, retryAfterMs: -1, resetAfterMs: 3000, waitMs: 0 });
  }
  for (const key of keys) assert.equal(await (await owner(key)).exists(key), 1, key);
  const sizes = await Promise.all(direct.map((node) => node.dbsize()));
  assert.equal(sizes.reduce((a, b) => a + b, 0), keys.length);
  assert.ok(sizes.every((n) => n > 0), `keys per primary: ${sizes}`);
  for (const spec of [rl.window(5, 60000), rl.quota(100, 'DAY'), rl.slidingLog(5, 60000), rl.leaky(5, 1, 1000),
    rl.smooth(5)]) {
    for (const key of keys.slice(0, 6)) assert.equal((await rl.limit(cluster, `${key}:${spec.kind}`, spec)).allowed, true);
  }
  assert.equal(await redirections(), 0);
});

test('RL.ALL and RL.RESET on one hash tag; keys of other slots are CROSSSLOT', async () => {
  for (const user of ['u1', 'u2', 'u3', 'u4']) {
    const out = await rl.limitAll(cluster, [[`{${user}}:s`, rl.token(10, 1, 1000)], [`{${user}}:h`, rl.window(100, 3600000)],
      [`{${user}}:jobs`, rl.concurrency(2, 30000)]], { cost: 2 });
    assert.equal(out.allowed, true);
    assert.deepEqual(out.limits.map((r) => r.remaining), [8, 98, 0]);
    assert.equal(typeof out.limits[2].lease, 'string');
    assert.equal((await rl.check(cluster, 'none', `{${user}}:x`).catch((e) => e)).message.includes('policy'), true);
    assert.equal(await rl.reset(cluster, `{${user}}:s`, `{${user}}:h`, `{${user}}:jobs`), 3);
  }
  await assert.rejects(rl.limitAll(cluster, [['{a}:s', rl.token(10, 1, 1000)], ['{b}:s', rl.token(10, 1, 1000)]]),
    /CROSSSLOT/);
  assert.equal(await redirections(), 0);
});

test('leases, the lease helper, locks and CL.THROTTLE', async () => {
  const got = await rl.acquire(cluster, 'jobs:7', 1, 30000);
  assert.deepEqual([got.allowed, got.remaining], [true, 0]);
  assert.equal((await rl.acquire(cluster, 'jobs:7', 1, 30000)).allowed, false);
  assert.equal(await rl.renew(cluster, 'jobs:7', got.lease, 30000), true);
  assert.deepEqual((await rl.leases(cluster, 'jobs:7')).map((l) => l.leaseId), [got.lease]);
  assert.equal(await rl.release(cluster, 'jobs:7', got.lease), true);
  const seen = await rl.withLease(cluster, 'jobs:8', 1, 30000, async (held) => {
    assert.equal((await (await owner('jobs:8')).call('RL.LEASES', 'jobs:8')).length, 1);
    return held.lease;
  });
  assert.equal(typeof seen, 'string');
  assert.deepEqual(await rl.leases(cluster, 'jobs:8'), []);
  await rl.block(cluster, 'login:mallory', 60000);
  assert.equal((await rl.lockinfo(cluster, 'login:mallory')).locked, true);
  assert.equal(await rl.unblock(cluster, 'login:mallory'), true);
  assert.deepEqual(await rl.throttle(cluster, 'cell:1', 15, 30, 60),
    { limited: false, allowed: true, limit: 16, remaining: 15, retryAfterS: -1, resetAfterS: 2 });
  assert.equal(await redirections(), 0);
});

test('a stored policy is set on every primary and checked on keys of each', async () => {
  const limits = [['burst', rl.token(10, 10, 1000)], ['jobs', rl.concurrency(3, 30000)]];
  await rl.policySet(cluster, 'api', limits, { shadow: false });
  for (const node of direct) assert.notEqual(await node.call('RL.POLICY', 'GET', 'api'), null);
  assert.deepEqual(await rl.policyGet(cluster, 'api'), { name: 'api', shadow: false, limits });
  assert.deepEqual(await rl.policyList(cluster), ['api']);
  const owners = new Set();
  for (let i = 0; i < 12; i++) {
    const key = `user:${i}`;
    const out = await rl.check(cluster, 'api', key, { cost: 2 });
    assert.deepEqual([out.allowed, out.limits[0].remaining, out.limits[1].remaining], [true, 8, 1]);
    assert.equal(typeof out.limits[1].lease, 'string');
    assert.equal(await rl.release(cluster, key, out.limits[1].lease), true);
    owners.add(PORTS[direct.indexOf(await owner(key))]);
  }
  assert.equal(owners.size, 3, 'the keys checked fall on every primary');
  assert.equal(await redirections(), 0);
});

test('primaries that disagree are named; DEL and FLUSH reach every primary', async () => {
  await rl.policySet(cluster, 'api', [['burst', rl.token(10, 10, 1000)]]);
  await direct[1].call('RL.POLICY', 'SET', 'stray', 'LIMIT', 'w', 'WINDOW', 5, 1000);
  await assert.rejects(rl.policyList(cluster), new RegExp(`RL.POLICY LIST: the cluster's primaries answer differently .*127.0.0.1:${PORTS[1]}`));
  await direct[2].call('RL.POLICY', 'SET', 'api', 'LIMIT', 'burst', 'TOKEN', 20, 10, 1000);
  await assert.rejects(rl.policyGet(cluster, 'api'), /RL.POLICY GET api: the cluster's primaries answer differently/);
  assert.equal(await rl.policyDel(cluster, 'stray'), true);
  assert.equal(await rl.policyDel(cluster, 'stray'), false);
  await rl.policyFlush(cluster);
  for (const node of direct) assert.deepEqual(await node.call('RL.POLICY', 'LIST'), []);
  assert.deepEqual(await rl.policyList(cluster), []);
});

test('the README\'s Cluster example runs as written', async () => {
  const { README, blocks, runBlock } = require('../readme-blocks');
  const [[, code]] = blocks(README).filter(([info]) => info === 'js cluster');
  const made = [];
  // `new Cluster([...7000])` in the README: the startup nodes become this test's.
  class Cluster extends Redis.Cluster {
    constructor() {
      super(PORTS.map((port) => ({ host: '127.0.0.1', port })));
      made.push(this);
    }
  }
  await runBlock(code, { Cluster, Redis: Redis.Redis }, made);
  assert.equal(made.length, 1);
  assert.notEqual(await (await owner('user:42')).exists('user:42'), 0);
  for (const node of direct) assert.deepEqual(await node.call('RL.POLICY', 'LIST'), ['api']);
});

// The key's DUMP on its primary's replica (as the primary's INFO replication names it), READONLY first: a
// cluster's replica redirects reads of its slots otherwise.
async function dumpOnReplica(primary, key) {
  const port = Number(/slave0:ip=[^,]*,port=(\d+)/.exec(await primary.info('replication'))[1]);
  assert.ok(REPLICA_PORTS.includes(port), `the replica ${port} is one run-cluster-tests.sh started`);
  const replica = new Redis({ host: '127.0.0.1', port });
  try {
    await replica.call('READONLY');
    return await replica.dumpBuffer(key);
  } finally {
    replica.disconnect();
  }
}

test('withReplicas on keys of every shard: acknowledged, the WAIT on the key\'s own primary, the grant on its replica', async () => {
  const w = rl.withReplicas(cluster, { replicas: 1, timeoutMs: 10000 });
  await rl.policySet(w, 'api', [['burst', rl.token(3, 1, 60000)]]); // no key's: every primary, as without it
  for (const node of direct) assert.deepEqual(await node.call('RL.POLICY', 'LIST'), ['api']);
  const byOwner = new Map();
  for (let i = 0; byOwner.size < direct.length; i++) {
    const key = `acked:${i}`;
    const node = await owner(key);
    if (!byOwner.has(node)) byOwner.set(node, key);
  }
  for (const [node, key] of byOwner) {
    const waits = async () => Number((/cmdstat_wait:calls=(\d+)/.exec(await node.info('commandstats')) || [0, 0])[1]);
    const before = await waits();
    assert.equal((await rl.limit(w, key, rl.token(2, 1, 60000))).allowed, true);
    assert.equal((await rl.check(w, 'api', `{${key}}`)).allowed, true);
    assert.equal(await waits(), before + 2);
    const dump = await node.dumpBuffer(key);
    assert.ok(dump);
    assert.deepEqual(await dumpOnReplica(node, key), dump);
    assert.deepEqual(await dumpOnReplica(node, `{${key}}`), await node.dumpBuffer(`{${key}}`));
  }
  assert.equal(await redirections(), 0);
});
