// The Lua mode: the limiters without the module on the server (managed Redis and Valkey services, where
// MODULE LOAD is not allowed). withMode(redis, 'auto' | 'module' | 'lua') wraps an ioredis Redis; every call
// of the package takes the wrapper in place of the client (limit(withMode(redis), key, token(...))).
//
// The idea: the module's commands and the script take the same arguments after their keys and answer the
// same replies, so the wrapper only rewrites the words of a call: `RL.TOKEN key args` becomes `EVALSHA sha 1
// key RL.TOKEN "" args`, `RL.ALL numkeys keys args` becomes `EVALSHA sha numkeys keys RL.ALL "" args`, and the
// package's parsers read the reply as the module's. The script (ratelimit.lua, a copy of the project's one
// script) runs RL.TOKEN, RL.LEAKY, RL.WINDOW (FIXED, SLIDING), RL.SLIDINGLOG and RL.ALL over them, with COST
// and DRYRUN; anything else is refused by name. 'auto' asks the server once per wrapper whether it has the
// module (COMMAND INFO rl.token is empty without it). The script is sent by its SHA1 and loaded (SCRIPT
// LOAD) only when the server answers NOSCRIPT: once, and again after a restart or SCRIPT FLUSH.
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const SCRIPT = fs.readFileSync(path.join(__dirname, 'ratelimit.lua'), 'utf8');
const SHA = crypto.createHash('sha1').update(SCRIPT).digest('hex');
const MODES = ['auto', 'module', 'lua'];
const SINGLE = ['RL.TOKEN', 'RL.LEAKY', 'RL.WINDOW', 'RL.SLIDINGLOG'];

// A module command's words as EVALSHA's (EVALSHA_RO for a _RO form). nowMs is for tests only: the time the
// script decides at (the module's test clock), instead of the server's TIME.
function scriptArgs(command, args, nowMs) {
  const name = String(command).toUpperCase();
  const readonly = name.endsWith('_RO');
  const base = readonly ? name.slice(0, -3) : name;
  let numkeys;
  let keys;
  let rest;
  if (base === 'RL.ALL') {
    numkeys = Number(args[0]);
    keys = args.slice(1, 1 + numkeys);
    rest = args.slice(1 + numkeys);
  } else if (SINGLE.includes(base)) {
    [numkeys, keys, rest] = [1, [args[0]], args.slice(1)];
  } else {
    throw new Error(`${command}: the Lua mode runs RL.TOKEN, RL.LEAKY, RL.WINDOW, RL.SLIDINGLOG and RL.ALL (and their _RO `
      + 'forms); load the module for the others');
  }
  return [readonly ? 'EVALSHA_RO' : 'EVALSHA', [SHA, numkeys, ...keys, name, nowMs == null ? '' : nowMs, ...rest]];
}

const isNoscript = (err) => Boolean(err && /^NOSCRIPT/.test(err.message));

// An ioredis Redis (or anything with call(command, ...args)) whose limiter calls go to the module or to the
// script, by mode. Other commands pass through. testNowMs, null in use, is the time a test makes the script
// decide at (its equality tests follow the module's frozen clock with it).
class ModeClient {
  constructor(redis, mode = 'auto') {
    if (!MODES.includes(mode)) throw new Error(`mode: must be 'auto', 'module' or 'lua', not ${JSON.stringify(mode)}`);
    this.redis = redis;
    this.mode = mode;
    this.lua = mode === 'auto' ? null : mode === 'lua';
    this.testNowMs = null;
  }

  // Whether calls run as the script: asked of the server once, in auto mode.
  async usesLua() {
    if (this.lua === null) {
      const info = await this.redis.call('COMMAND', 'INFO', 'rl.token');
      this.lua = !(Array.isArray(info) && info[0]);
    }
    return this.lua;
  }

  async call(command, ...args) {
    if (!(await this.usesLua())) return this.redis.call(command, ...args);
    const [evalsha, words] = scriptArgs(command, args, this.testNowMs);
    try {
      return await this.redis.call(evalsha, ...words);
    } catch (err) {
      if (!isNoscript(err)) throw err;
      await this.redis.call('SCRIPT', 'LOAD', SCRIPT);
      return this.redis.call(evalsha, ...words);
    }
  }
}

// redis for the package's calls in a mode: 'module' (the RL.* commands), 'lua' (the script, on a server
// without the module) or 'auto' (the module when the server has it, else the script).
function withMode(redis, mode = 'auto') {
  return new ModeClient(redis, mode);
}

module.exports = { withMode, ModeClient, LUA_SCRIPT: SCRIPT, LUA_SHA: SHA };
