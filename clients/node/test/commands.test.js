// The package's command table (lib/commands.js) against the live server's COMMAND DOCS: every module command
// (COMMAND LIST FILTERBY MODULE ratelimit, RL.POLICY's subcommands each) is in the table or among the
// deliberate exclusions, and every option token of its argument tree has an example; no entry names a
// command or token the server does not document; and every example, run through a client that records the
// arguments of each call() and forwards them to the server, is accepted and really sends its command and
// its token. A module option the package lacks fails here, naming it.
'use strict';

const { test, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const { COMMAND_TABLE, EXCLUDED_COMMANDS } = require('..');
const { client, fresh } = require('./support');

let redis;
let docs;
before(async () => {
  redis = client();
  const names = await redis.call('COMMAND', 'LIST', 'FILTERBY', 'MODULE', 'ratelimit');
  docs = documented(await redis.call('COMMAND', 'DOCS', ...names));
});
after(async () => { await redis.call('RL.CLOCK', 'REAL'); redis.disconnect(); });
beforeEach(() => fresh(redis));

// COMMAND DOCS' RESP2 reply: a flat [name, doc, ...] list, each doc a flat [field, value, ...] list.
function fields(flat) {
  const out = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]] = flat[i + 1];
  return out;
}

// Every token in an argument tree.
function tokensOf(args, out = new Set()) {
  for (const arg of args || []) {
    const field = fields(arg);
    if (field.token !== undefined) out.add(String(field.token).toUpperCase());
    tokensOf(field.arguments, out);
  }
  return out;
}

// { 'RL.TOKEN': Set(tokens), 'RL.POLICY SET': ..., ... }: a container command counts through its
// subcommands (rl.policy|set is 'RL.POLICY SET').
function documented(reply) {
  const out = {};
  const add = (name, doc) => {
    const field = fields(doc);
    if (field.subcommands && field.subcommands.length > 0) {
      const subs = fields(field.subcommands);
      for (const [sub, subDoc] of Object.entries(subs)) add(sub, subDoc);
      return;
    }
    out[name.toUpperCase().replace('|', ' ')] = tokensOf(field.arguments);
  };
  const top = fields(reply);
  for (const [name, doc] of Object.entries(top)) add(name, doc);
  return out;
}

test('the server documents the module commands this test walks', () => {
  assert.ok(Object.keys(docs).length >= 30, Object.keys(docs).join(' '));
  assert.ok(docs['RL.TOKEN'].has('COST') && docs['RL.POLICY SET'].has('SHADOW'));
});

test('every module command and option token is in the table', () => {
  const missing = [];
  for (const [command, tokens] of Object.entries(docs)) {
    if (command in EXCLUDED_COMMANDS) continue;
    const entry = COMMAND_TABLE[command];
    if (!entry) {
      missing.push(command);
      continue;
    }
    for (const name of tokens) if (!(name in entry.tokens)) missing.push(`${command} ${name}`);
  }
  assert.deepEqual(missing, [], `the package lacks: ${missing.join(', ')}`);
});

test('the table names only what the server documents, and says why it leaves a command out', () => {
  const stale = [];
  for (const [command, entry] of Object.entries(COMMAND_TABLE)) {
    if (!docs[command]) stale.push(command);
    else for (const name of Object.keys(entry.tokens)) if (!docs[command].has(name)) stale.push(`${command} ${name}`);
  }
  assert.deepEqual(stale, []);
  assert.deepEqual(Object.keys(EXCLUDED_COMMANDS).sort(), ['RL.CLOCK', 'RL.SETSTATE']);
  for (const command of Object.keys(EXCLUDED_COMMANDS)) assert.ok(docs[command], `${command} is not a module command`);
});

// A client that records each call's words (upper-cased strings) and forwards the call to the server.
function recording() {
  const calls = [];
  return { calls, call: (...args) => { calls.push(args.map((a) => String(a).toUpperCase())); return redis.call(...args); } };
}

// Whether a recorded call is `command` (two words for a subcommand) and, given a token, carries it.
function sent(calls, command, name) {
  const words = command.split(' ');
  return calls.some((call) => words.every((w, i) => call[i] === w)
    && (name === undefined || call.slice(words.length).includes(name)));
}

for (const [command, entry] of Object.entries(COMMAND_TABLE)) {
  test(`${command}: ${entry.call} sends it, with each of its tokens`, async () => {
    const examples = [[undefined, entry.example], ...Object.entries(entry.tokens)];
    for (const [name, example] of examples) {
      const client = recording();
      await assert.doesNotReject(example(client), `${command} ${name || ''}`);
      assert.ok(sent(client.calls, command, name), `${command} ${name || ''}: sent ${JSON.stringify(client.calls)}`);
    }
  });
}
