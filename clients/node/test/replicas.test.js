// withReplicas (lib/replicas.js) on real servers: the test server as the primary, first alone, then with a
// replica started here (the same binary, the module loaded, --replicaof 127.0.0.1). Proven: alone, a grant
// rejects with NotReplicatedError (its raw reply and acked) while a denial, a release and a reset resolve, and
// createLimiter with onFailure 'deny' answers a failed decision; with the replica, an admitted call resolves
// once the replica holds the grant (the key read on the replica right after: the same DUMP and expiry, no
// sleep), the Redis WAIT follows a reply the module held (RL.ACQUIRE WAIT), each writing call sends exactly
// one WAIT and a read-only or DRYRUN call none (the primary's commandstats); bad options are refused by name.
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const Redis = require('ioredis');
const {
  token, slidingLog, limit, limitAll, acquire, release, renew, reset, throttle, check, policySet, createLimiter,
  withReplicas, NotReplicatedError,
} = require('..');
const { client, fresh, waitBlocked, PORT } = require('./support');

const FULL = token(2, 1, 60000); // two admissions, then denials (the clock is frozen: no refill)

let redis; // the module's test server, the primary
let replica = null; // { proc, dir, redis }, once started

const freePort = () => new Promise((resolve, reject) => {
  const server = net.createServer();
  server.on('error', reject);
  server.listen(0, '127.0.0.1', () => { const { port } = server.address(); server.close(() => resolve(port)); });
});

// The module's test server's binary; one started from PATH is reported as if in its working directory.
async function executable() {
  const exe = /executable:(.*)\r?\n/.exec(await redis.info('server'))[1].trim();
  if (fs.existsSync(exe)) return exe;
  const found = (process.env.PATH || '').split(':').map((dir) => path.join(dir, path.basename(exe)))
    .find((p) => fs.existsSync(p));
  return found || exe;
}

// The path of the module the test server loaded (MODULE LIST), for the replica to load it too.
async function modulePath() {
  for (const entry of await redis.call('MODULE', 'LIST')) {
    const fields = Object.fromEntries(entry.reduce((pairs, v, i) => (i % 2 ? pairs : [...pairs, [v, entry[i + 1]]]), []));
    if (fields.name === 'ratelimit') return fields.path;
  }
  throw new Error('the test server has no ratelimit module');
}

// A replica of the test server, once its link is up (a bound on the polling, not a timing being asserted).
async function startReplica() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-replica-'));
  const port = await freePort();
  const proc = spawn(await executable(), ['--bind', '127.0.0.1', '--port', String(port), '--dir', dir, '--save', '',
    '--appendonly', 'no', '--loadmodule', await modulePath(), '--replicaof', '127.0.0.1', String(PORT)],
  { stdio: 'ignore' });
  const r = new Redis({ host: '127.0.0.1', port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  r.on('error', () => {}); // refused until it listens: asked again below
  const started = { proc, dir, redis: r };
  for (let i = 0; i < 500 && proc.exitCode === null; i++) {
    try {
      if (r.status !== 'ready') await r.connect();
      if (/master_link_status:up/.test(await r.info('replication'))) return started;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 20));
  }
  await stopReplica(started);
  throw new Error('the replica never linked to the test server');
}

async function stopReplica(started) {
  started.redis.disconnect();
  if (started.proc.exitCode === null) {
    await new Promise((done) => { started.proc.once('exit', done); started.proc.kill('SIGTERM'); });
  }
  fs.rmSync(started.dir, { recursive: true, force: true });
}

// WAIT commands the primary has run (INFO commandstats: cmdstat_wait).
async function waits() {
  const found = /cmdstat_wait:calls=(\d+)/.exec(await redis.info('commandstats'));
  return found ? Number(found[1]) : 0;
}

// The key as the primary holds it, read on the replica at once.
async function assertOnReplica(key) {
  const dump = await redis.dumpBuffer(key);
  assert.ok(dump, `${key} is on the primary`);
  assert.deepEqual(await replica.redis.dumpBuffer(key), dump, key);
  assert.equal(await replica.redis.call('PEXPIRETIME', key), await redis.call('PEXPIRETIME', key), key);
}

before(async () => {
  redis = client();
});
after(async () => {
  if (replica) await stopReplica(replica);
  await redis.call('RL.CLOCK', 'REAL');
  redis.disconnect();
});

test('bad options are refused by name', () => {
  for (const replicas of [0, -1, 1.5, '1', true, null, NaN]) {
    assert.throws(() => withReplicas(redis, { replicas }), /^TypeError: replicas: must be an integer >= 1, not /);
  }
  for (const timeoutMs of [-1, 0.5, '100', false, null, Infinity]) {
    assert.throws(() => withReplicas(redis, { timeoutMs }), /^TypeError: timeoutMs: must be an integer >= 0, not /);
  }
  assert.equal(withReplicas(redis, { replicas: 2, timeoutMs: 0 }).timeoutMs, 0);
});

test('alone: a grant rejects with NotReplicatedError, a denial, a release and a reset resolve', async () => {
  await fresh(redis);
  const w = withReplicas(redis, { timeoutMs: 10 });
  const short = await limit(w, 'u:1', FULL).then(() => null, (err) => err);
  assert.ok(short instanceof NotReplicatedError);
  assert.deepEqual([short.acked, short.replicas, short.reply.slice(0, 3)], [0, 1, [1, 2, 1]]);
  assert.match(short.message, /^RL\.TOKEN: the grant reached 0 of 1 replica\(s\)/);
  await assert.rejects(limit(w, 'u:1', FULL), NotReplicatedError);
  assert.equal((await limit(w, 'u:1', FULL)).allowed, false); // the denial
  await assert.rejects(throttle(w, 'u:cell', 0, 1, 60), NotReplicatedError);
  assert.equal((await throttle(w, 'u:cell', 0, 1, 60)).limited, true);
  const got = await acquire(w, 'u:jobs', 1, 30000).then(() => null, (err) => err);
  assert.ok(got instanceof NotReplicatedError);
  const lease = got.reply[6];
  assert.equal((await acquire(w, 'u:jobs', 1, 30000)).allowed, false);
  await assert.rejects(renew(w, 'u:jobs', lease, 30000), NotReplicatedError);
  assert.equal(await renew(w, 'u:jobs', 'no-such-lease', 30000), false);
  assert.equal(await release(w, 'u:jobs', lease), true);
  assert.equal(await reset(w, 'u:1'), 1);
  assert.equal((await limit(w, 'u:1', FULL, { dryrun: true })).allowed, true); // no WAIT: nothing to reject
});

test("alone: createLimiter with onFailure 'deny' takes it as a failure", async () => {
  await fresh(redis);
  const limiter = createLimiter({ redis: withReplicas(redis, { timeoutMs: 10 }), policies: [{ name: 'api', spec: FULL }],
    onFailure: 'deny', timeoutMs: 1000, logger: { warn() {}, info() {} } });
  const decision = await limiter.check('u:7');
  assert.deepEqual([decision.allowed, decision.source], [false, 'failure']);
  // the grant was written (its WAIT came short): the read-only form, after it, leaves none
  assert.equal((await limit(redis, 'rl:{u:7}:api', FULL, { readonly: true })).remaining, 0);
});

test('with a replica: a grant is on the replica when the call resolves', async () => {
  replica = await startReplica();
  await fresh(redis);
  const w = withReplicas(redis, { timeoutMs: 5000 });
  assert.equal((await limit(w, 'u:1', FULL)).allowed, true);
  await assertOnReplica('u:1');
  const pair = [['{u:2}:a', token(5, 1, 1000)], ['{u:2}:b', slidingLog(3, 60000)]];
  assert.equal((await limitAll(w, pair)).allowed, true);
  for (const [key] of pair) await assertOnReplica(key);
  assert.equal((await throttle(w, 'u:cell', 5, 10, 60)).limited, false);
  await assertOnReplica('u:cell');
  const got = await acquire(w, 'u:jobs', 2, 30000);
  assert.equal(got.allowed, true);
  await assertOnReplica('u:jobs');
  assert.equal(await renew(w, 'u:jobs', got.lease, 60000), true);
  await assertOnReplica('u:jobs');
  await policySet(w, 'api', [['burst', token(3, 1, 1000)]]);
  assert.equal((await check(w, 'api', 'u:3')).allowed, true);
  await assertOnReplica('u:3');
  assert.equal(await w.call('RL.TOKEN', 'u:4', 3, 1, 1000).then((reply) => reply[0]), 1); // call() as ioredis's
  await assertOnReplica('u:4');
});

test('with a replica: one WAIT per writing call, none for reads and DRYRUN', async () => {
  await fresh(redis);
  const w = withReplicas(redis, { timeoutMs: 5000 });
  const writing = [
    () => limit(w, 'u:4', FULL), () => limit(w, 'u:4', FULL), () => limit(w, 'u:4', FULL), // the denial too
    () => limitAll(w, [['{u:5}:a', FULL]]), () => throttle(w, 'u:cell', 5, 10, 60), () => reset(w, 'u:4'),
  ];
  for (const call of writing) {
    const before = await waits();
    await call();
    assert.equal(await waits(), before + 1);
  }
  const reading = [
    () => limit(w, 'u:4', FULL, { readonly: true }), () => limit(w, 'u:4', FULL, { dryrun: true }),
    () => limitAll(w, [['{u:5}:a', FULL]], { dryrun: true }), () => acquire(w, 'u:jobs', 2, 30000, { dryrun: true }),
    () => acquire(w, 'DRYRUN', 2, 30000, { leaseId: 'DRYRUN', readonly: true }),
  ];
  for (const call of reading) {
    const before = await waits();
    await call();
    assert.equal(await waits(), before);
  }
  // a key or a lease id spelled DRYRUN is not the DRYRUN option: the call writes, and waits
  const before = await waits();
  assert.equal((await acquire(w, 'DRYRUN', 2, 30000, { leaseId: 'DRYRUN' })).allowed, true);
  assert.equal(await waits(), before + 1);
  await assertOnReplica('DRYRUN');
});

test('with a replica: the WAIT follows a reply the module held', async () => {
  await fresh(redis);
  const other = client();
  try {
    const held = await acquire(redis, 'u:slot', 1, 60000);
    const waiting = acquire(withReplicas(other, { timeoutMs: 5000 }), 'u:slot', 1, 60000, { waitMs: 60000 });
    assert.equal(await waitBlocked(redis, 1), true);
    assert.equal(await release(redis, 'u:slot', held.lease), true);
    assert.equal((await waiting).allowed, true);
    await assertOnReplica('u:slot');
    await assert.rejects(withReplicas(other).call('RL.TOKEN', 'u:bad', 0, 1, 1000), /capacity/); // the error as is
    assert.equal((await limit(withReplicas(other), 'u:after', FULL)).allowed, true); // the connection is clean
  } finally {
    other.disconnect();
  }
});
