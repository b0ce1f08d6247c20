// A concurrency lease held for the length of a block of work: taken with RL.ACQUIRE, renewed with RL.RENEW
// while the work runs, given back with RL.RELEASE when it ends, however it ends.
//
//   await withLease(redis, 'jobs', 5, 30000, async (held) => { ... });       // any Node version
//   await using held = await lease(redis, 'jobs', 5, 30000);                  // TypeScript 5.2+, `await using`
//
// The idea: a lease expires leaseMs after it was taken or renewed, so that a crashed worker's slot comes back
// by itself; a worker that is alive must renew it for as long as it works. A timer renews it every leaseMs/3
// (two renewals can fail before it lapses). When RL.RENEW answers that the lease is no longer held (it
// expired while Redis was unreachable, or RL.RESET removed it), the lease is lost: `held.lost` turns true,
// `held.signal` aborts (hand it to fetch() and the like to stop the work) and renewing stops. A renewal that
// fails on the way (a network error) is kept in `held.renewError` and tried again at the next tick. A denied
// acquire is a LeaseDeniedError carrying the result (its retryAfterMs), and the work never starts.
'use strict';

const { acquire, renew, release } = require('./limits');

// Node 20 has Symbol.asyncDispose; Node 18.18 only under this registered name.
const asyncDispose = Symbol.asyncDispose || Symbol.for('nodejs.asyncDispose');

class LeaseDeniedError extends Error {
  constructor(key, result) {
    super(`lease on ${key}: denied (retry after ${result.retryAfterMs} ms, ${result.remaining} of ${result.limit} free)`);
    this.name = 'LeaseDeniedError';
    this.key = key;
    this.result = result;
  }
}

// A lease that is held: its key and id, the RL.ACQUIRE result, and whether it was lost. release() (or
// disposing it) stops the renewals and gives it back, once.
class HeldLease {
  constructor(redis, key, leaseMs, result, renewEveryMs) {
    this.redis = redis;
    this.key = key;
    this.leaseMs = leaseMs;
    this.result = result;
    this.lease = result.lease;
    this.lost = false;
    this.renewals = 0;
    this.renewError = null;
    this.released = false;
    this.settling = false;
    this.controller = new AbortController();
    this.signal = this.controller.signal;
    this.pending = Promise.resolve();
    // unref: a lease nobody released must not keep the process alive (it expires by itself).
    this.timer = setInterval(() => this.tick(), renewEveryMs);
    this.timer.unref();
  }

  // One renewal; the next waits for it, so renewals never overlap (a slow Redis delays them instead).
  tick() {
    if (this.settling) return;
    this.settling = true;
    this.pending = this.renewOnce().finally(() => { this.settling = false; });
  }

  async renewOnce() {
    try {
      if (await renew(this.redis, this.key, this.lease, this.leaseMs)) {
        this.renewals += 1;
        this.renewError = null;
      } else if (!this.released) {
        this.markLost();
      }
    } catch (err) {
      this.renewError = err;
    }
  }

  markLost() {
    this.lost = true;
    clearInterval(this.timer);
    this.controller.abort(new Error(`lease ${this.lease} on ${this.key}: lost (it expired or was removed)`));
  }

  // Stop renewing and give the lease back: true if it was still held (false once lost, or released
  // before). An error from Redis is thrown (the lease then ends by itself, leaseMs after its last renewal).
  async release() {
    if (this.released) return false;
    this.released = true;
    clearInterval(this.timer);
    await this.pending;
    if (this.lost) return false;
    return release(this.redis, this.key, this.lease);
  }

  async [asyncDispose]() {
    await this.release();
  }
}

const renewPeriod = (leaseMs, renewEveryMs) => renewEveryMs ?? Math.max(1, Math.floor(leaseMs / 3));

// Take a lease of `cost` units on `key` (at most `limit` units held at once), renewed every leaseMs/3 (or
// renewEveryMs) until released: a HeldLease, usable with `await using`. Denied: a LeaseDeniedError. opts
// are acquire()'s (cost, leaseId, waitMs: wait server-side for a slot) and renewEveryMs.
async function lease(redis, key, limit, leaseMs, { renewEveryMs, ...acquireOpts } = {}) {
  const { dryrun, readonly } = acquireOpts;
  if (dryrun || readonly) throw new TypeError('lease: dryrun and readonly take no lease (use acquire())');
  const result = await acquire(redis, key, limit, leaseMs, acquireOpts);
  if (!result.allowed) throw new LeaseDeniedError(key, result);
  return new HeldLease(redis, key, leaseMs, result, renewPeriod(leaseMs, renewEveryMs));
}

// Run fn(held) while holding a lease on `key`, renewed as it runs and released when fn's promise settles;
// resolves to what fn resolves to. Denied: a LeaseDeniedError, and fn is not called. If fn throws, its
// error is the one thrown (a failed release then goes unreported: the lease expires by itself).
async function withLease(redis, key, limit, leaseMs, fn, opts = {}) {
  const held = await lease(redis, key, limit, leaseMs, opts);
  let value;
  try {
    value = await fn(held);
  } catch (err) {
    await held.release().catch(() => {});
    throw err;
  }
  await held.release();
  return value;
}

module.exports = { lease, withLease, LeaseDeniedError, HeldLease };
