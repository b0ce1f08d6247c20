// A redis-server of the resilience tests' own, with the module and its test clock, on a port of
// 127.0.0.1 that stays the same across restarts, so that a client reconnects to it as to a server that
// came back. Started by run-resilience.sh's tests only (RL_MODULE, REDIS_SERVER, RL_RESILIENCE_PIDS).
//
// The idea: the tests break the server in each way an application meets (stopped, killed, asleep, paused)
// and bring it back. Every pid goes into RL_RESILIENCE_PIDS while the process lives, so the script's trap
// can kill what a crashed test left; the file goes once the process has exited.
'use strict';

const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { setTimeout: sleep } = require('node:timers/promises');
const Redis = require('ioredis');

const MODULE = process.env.RL_MODULE;
const PIDS = process.env.RL_RESILIENCE_PIDS;
const REDIS_SERVER = process.env.REDIS_SERVER || 'redis-server';

// A port nothing listens on now (the kernel's pick; a server started there retries if it was taken).
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

// Until `ready()` is true, polling every 20 ms, at most `tries` times (a bound on waiting for a server or a
// reconnection, not a timing being asserted).
async function until(ready, what, tries = 500) {
  for (let i = 0; i < tries; i++) {
    if (await ready()) return;
    await sleep(20);
  }
  throw new Error(`gave up waiting for ${what}`);
}

class TestServer {
  constructor() {
    if (!MODULE || !PIDS) throw new Error('RL_MODULE and RL_RESILIENCE_PIDS are not set (run clients/node/run-resilience.sh)');
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-resilience-'));
    this.port = 0;
    this.child = null;
  }

  // Start (again, on the same port), then freeze the module's clock at `clockMs`: a server that comes back
  // has lost its limiters (nothing is persisted) and decides from the same instant.
  async start(clockMs) {
    if (!this.port) this.port = await freePort();
    const child = spawn(REDIS_SERVER, ['--bind', '127.0.0.1', '--port', String(this.port), '--dir', this.dir,
      '--save', '', '--appendonly', 'no', '--enable-debug-command', 'yes', '--loadmodule', MODULE, 'test-clock'],
    { stdio: 'ignore' });
    const pidFile = path.join(PIDS, `${child.pid}.pid`);
    fs.writeFileSync(pidFile, String(child.pid));
    child.exited = new Promise((resolve) => child.once('exit', () => { fs.rmSync(pidFile, { force: true }); resolve(); }));
    this.child = child;
    const probe = new Redis({ host: '127.0.0.1', port: this.port, lazyConnect: true, enableOfflineQueue: false,
      maxRetriesPerRequest: 0, retryStrategy: () => null }).on('error', () => {});
    try {
      await until(async () => {
        if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}): port ${this.port} taken?`);
        try {
          if (probe.status !== 'ready') await probe.connect();
          return (await probe.ping()) === 'PONG';
        } catch {
          probe.disconnect();
          return false;
        }
      }, `redis-server on port ${this.port}`);
      await probe.call('RL.CLOCK', 'SET', clockMs);
    } finally {
      probe.disconnect();
    }
  }

  // A client for the tests' own commands (DEBUG SLEEP, CLIENT PAUSE...): fails at once while the server is down.
  control() {
    return new Redis({ host: '127.0.0.1', port: this.port, enableOfflineQueue: false, maxRetriesPerRequest: 0,
      retryStrategy: () => 20 }).on('error', () => {});
  }

  // SHUTDOWN NOSAVE, as an operator stops it.
  async shutdown() {
    const ctl = new Redis({ host: '127.0.0.1', port: this.port, maxRetriesPerRequest: 0, retryStrategy: () => null })
      .on('error', () => {});
    await ctl.call('SHUTDOWN', 'NOSAVE').catch(() => {}); // the connection closes instead of a reply
    ctl.disconnect();
    await this.child.exited;
  }

  // SIGKILL, as a crash.
  async kill() {
    this.child.kill('SIGKILL');
    await this.child.exited;
  }

  async stop() {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) await this.kill();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

// Until an ioredis client has reconnected.
const reconnected = (client) => until(() => client.status === 'ready', 'the client to reconnect');

module.exports = { TestServer, until, reconnected };
