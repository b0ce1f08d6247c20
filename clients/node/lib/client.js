// How the package's calls reach Redis: through the client's call() on a single server (an ioredis Redis, or
// anything with call(command, ...args) returning a promise of the RESP2 reply), and on an ioredis Cluster
// straight to the primary that owns the key's slot, or to every primary for what is not kept in keys.
//
// The idea: ioredis routes a command by the key positions its command table knows, and it knows none of the
// module's commands: it would send each RL.* call to a random node and follow the MOVED answer (a round trip
// and a slot-map refresh per call). Here the key is named outright: a Command whose keys are the one given,
// so ioredis's own routing (and its MOVED, ASK and retry handling) takes it to the right node. RL.ALL and
// RL.RESET route by their first key; all their keys must share a slot (one hash tag: {user42}:a, {user42}:b),
// or the server answers CROSSSLOT. Stored policies are per server, not keys: RL.POLICY's writes go to every
// primary, and its reads ask every primary and refuse to answer when they disagree. A withReplicas wrapper
// (lib/replicas.js) sends the calls about a key itself (a writing one with its WAIT, through the same keyed
// command); what is no key's goes to the client it wraps.
'use strict';

const isCluster = (redis) => Boolean(redis && redis.isCluster);

// The mark of a withReplicas wrapper (a symbol: no client has it by chance), and the client it wraps.
const REPLICATED = Symbol.for('redis-ratelimit.replicated');
const unwrapped = (redis) => (redis && redis[REPLICATED] ? redis.redis : redis);

let KeyedCommand = null;

// An ioredis Command routed by the key given (ioredis's Command is taken from the application's ioredis,
// the package's peer dependency, only when a Cluster is used).
function keyedCommand(command, args, key) {
  if (KeyedCommand === null) {
    const { Command } = require('ioredis');
    KeyedCommand = class extends Command {
      constructor(name, commandArgs, routingKey) {
        super(name, commandArgs, { replyEncoding: 'utf8' });
        this.routingKey = routingKey;
      }

      // ioredis computes the slot from the first of these.
      getKeys() {
        return [this.routingKey];
      }
    };
  }
  return new KeyedCommand(command, args, key);
}

// One command about `key` (it is among args too): the reply as ioredis's call() gives it (strings, not
// Buffers).
function send(redis, key, command, args) {
  if (redis && redis[REPLICATED]) return redis.send(key, command, args);
  if (!isCluster(redis)) return redis.call(command, ...args);
  const keyed = keyedCommand(command, args, key);
  redis.sendCommand(keyed);
  return keyed.promise;
}

// The cluster's primaries, once its slot map is loaded (the PING waits for it).
async function primaries(cluster) {
  if (cluster.status !== 'ready') await cluster.call('PING');
  const nodes = cluster.nodes('master');
  if (nodes.length === 0) throw new Error('redis-ratelimit: the cluster has no primary to send RL.POLICY to');
  return nodes;
}

const nodeName = (node) => `${node.options.host}:${node.options.port}`;

// A command that is no key's (RL.POLICY SET, DEL, FLUSH): sent to every primary of a cluster, and the
// replies, one per primary (one reply on a single server).
async function sendEverywhere(wrapped, command, args) {
  const redis = unwrapped(wrapped);
  if (!isCluster(redis)) return [await redis.call(command, ...args)];
  return Promise.all((await primaries(redis)).map((node) => node.call(command, ...args)));
}

// A read that is no key's (RL.POLICY GET, LIST): on a cluster every primary must answer the same, since an
// RL.CHECK runs on the primary of its key; when they differ (a primary added, or missed by a write), the
// error names the primaries, so that the policy can be set again.
async function readEverywhere(wrapped, command, args) {
  const redis = unwrapped(wrapped);
  if (!isCluster(redis)) return redis.call(command, ...args);
  const nodes = await primaries(redis);
  const replies = await Promise.all(nodes.map((node) => node.call(command, ...args)));
  const first = JSON.stringify(replies[0]);
  const differ = nodes.filter((node, i) => JSON.stringify(replies[i]) !== first);
  if (differ.length > 0) {
    throw new Error(`${command} ${args.join(' ')}: the cluster's primaries answer differently (${nodeName(nodes[0])} `
      + `and ${differ.map(nodeName).join(', ')}): set the policies again (policySet, policyDel) to align them`);
  }
  return replies[0];
}

module.exports = { send, sendEverywhere, readEverywhere, isCluster, keyedCommand, REPLICATED };
