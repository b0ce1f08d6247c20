// Grants that survive a failover: withReplicas(redis, { replicas: 1, timeoutMs: 100 }) wraps an ioredis Redis
// or Cluster; every call of the package takes the wrapper in place of the client
// (limit(withReplicas(redis), key, token(...))).
//
// The idea: replication is asynchronous, so a primary killed before its replica received a grant leaves a
// promoted replica that never saw it, and that admits the same requests again. Redis's own `WAIT numreplicas
// timeout` answers how many replicas acknowledged every write the connection made so far. The wrapper sends
// each module command that may write and `WAIT replicas timeoutMs` together, in one pipeline on one
// connection (one round trip): the WAIT runs after the command's reply, whenever the module sends it (its own
// WAIT and BLOCK included). A grant (an admission, a lease acquired or renewed) that fewer than `replicas`
// replicas acknowledged rejects with NotReplicatedError: the caller decides, and createLimiter takes it as
// any failure (its onFailure answer). A denial, a release, a reset, a lock cannot over-admit: they resolve
// whatever WAIT answered. Read-only calls (the _RO forms, RL.LEASES, RL.LOCKINFO, RL.POLICY, and any call
// with DRYRUN) pass through untouched: they write nothing, so nothing is waited for.
//
// WAIT names no key: on a Cluster it must reach the node that ran the command. lib/client.js's keyed
// command names the call's key, and an ioredis Cluster pipeline goes to the node of its commands' keys (WAIT
// has none), so the pair reaches the key's primary, with ioredis's own MOVED handling and slot-map refresh.
'use strict';

const { keyedCommand, isCluster, send, REPLICATED } = require('./client');

// The module's commands that write, by how their grant shows in the reply.
const ADMITTING = ['RL.TOKEN', 'RL.LEAKY', 'RL.WINDOW', 'RL.SLIDINGLOG', 'RL.SMOOTH', 'RL.QUOTA', 'RL.ACQUIRE'];
const NEVER_GRANTING = ['RL.RELEASE', 'RL.RESET', 'RL.BLOCK', 'RL.UNBLOCK'];
const WRITING = new Set([...ADMITTING, ...NEVER_GRANTING, 'RL.ALL', 'RL.CHECK', 'CL.THROTTLE', 'RL.RENEW']);

// A grant that fewer replicas than asked acknowledged within the timeout: a failover now could lose it.
// `reply` is the command's raw reply, `acked` the replicas WAIT counted, `replicas` the number asked for.
class NotReplicatedError extends Error {
  constructor(command, reply, acked, replicas, timeoutMs) {
    super(`${command}: the grant reached ${acked} of ${replicas} replica(s) within ${timeoutMs} ms`);
    this.name = 'NotReplicatedError';
    this.reply = reply;
    this.acked = acked;
    this.replicas = replicas;
  }
}

// An integer option of withReplicas, at least `least`; else an error naming it.
function checkCount(name, value, least) {
  if (!Number.isSafeInteger(value) || value < least) {
    throw new TypeError(`${name}: must be an integer >= ${least}, not ${JSON.stringify(value)}`);
  }
  return value;
}

const word = (value) => String(value).toUpperCase();

// A command's option words, past its keys (a key or a policy may be spelled DRYRUN): RL.ALL's up to its first
// LIMIT clause (DRYRUN comes before them), and without the lease id that follows ID.
function optionsOf(name, args) {
  if (name === 'RL.ALL') {
    const words = args.slice(1 + Number(args[0])).map(word);
    const end = words.indexOf('LIMIT');
    return end < 0 ? words : words.slice(0, end);
  }
  const words = args.slice(name === 'RL.CHECK' ? 2 : 1).map(word);
  return words.filter((w, i) => i === 0 || words[i - 1] !== 'ID');
}

// Whether a call may write, and is therefore sent with a WAIT (args: after the command's name).
function writes(command, args) {
  const name = word(command);
  return WRITING.has(name) && !optionsOf(name, args).includes('DRYRUN');
}

// The key that places a call on a cluster (RL.ALL's keys share its slot; RL.CHECK's is after the policy).
const routingKey = (command, args) => (['RL.ALL', 'RL.CHECK'].includes(word(command)) ? args[1] : args[0]);

// Whether a writing call's reply is a grant: something a lost write would give away again.
function granted(command, reply) {
  const name = word(command);
  if (NEVER_GRANTING.includes(name)) return false;
  if (name === 'CL.THROTTLE') return Number(reply[0]) === 0; // its first field is "limited"
  if (name === 'RL.RENEW') return Number(reply) === 1;
  return Number(reply[0]) === 1;
}

// An ioredis Redis or Cluster whose writing module calls are each followed by a WAIT in the same round trip.
// Other commands pass through (lib/client.js routes the package's calls through send() here).
class ReplicaClient {
  constructor(redis, { replicas = 1, timeoutMs = 100 } = {}) {
    this.redis = redis;
    this.replicas = checkCount('replicas', replicas, 1);
    this.timeoutMs = checkCount('timeoutMs', timeoutMs, 0);
  }

  // lib/client.js's send() hands this wrapper the package's calls.
  get [REPLICATED]() {
    return true;
  }

  // One of the package's calls about `key` (lib/client.js's send() hands them here).
  async send(key, command, args) {
    if (!writes(command, args)) return send(this.redis, key, command, args);
    const pipeline = this.redis.pipeline();
    if (isCluster(this.redis)) pipeline.sendCommand(keyedCommand(command, args, key));
    else pipeline.call(command, ...args);
    pipeline.call('WAIT', this.replicas, this.timeoutMs);
    const [[error, reply], [waitError, acked]] = await pipeline.exec();
    if (error) throw error;
    if (waitError) throw waitError;
    if (Number(acked) < this.replicas && granted(command, reply)) {
      throw new NotReplicatedError(word(command), reply, Number(acked), this.replicas, this.timeoutMs);
    }
    return reply;
  }

  // Any command, as ioredis's call(): a writing module command gets its WAIT; others go to the client as
  // they are (its own routing).
  call(command, ...args) {
    if (!writes(command, args)) return this.redis.call(command, ...args);
    return this.send(routingKey(command, args), command, args);
  }
}

// redis for the package's calls, each grant acknowledged by at least `replicas` replicas (Redis's WAIT, up
// to timeoutMs; 0 waits without a limit, as WAIT does) before it resolves; NotReplicatedError otherwise.
function withReplicas(redis, options = {}) {
  return new ReplicaClient(redis, options);
}

module.exports = { withReplicas, ReplicaClient, NotReplicatedError };
