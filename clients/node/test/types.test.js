// The TypeScript declarations (index.d.ts, index.d.mts, lib/*.d.ts) checked by the pinned TypeScript:
// `tsc --noEmit --strict` on test/types (every export used as the README shows, as an ES module and through
// require(), with `// @ts-expect-error` lines that must fail: tsc reports a directive whose line type-checks),
// and `await using` on a lease compiled and run against the test server.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync, spawnSync } = require('node:child_process');
const { PORT } = require('./support');

const tsc = path.join(__dirname, '..', 'node_modules', '.bin', 'tsc');
const types = path.join(__dirname, 'types');

function run(args) {
  const out = spawnSync(tsc, args, { cwd: types, encoding: 'utf8' });
  assert.equal(out.status, 0, `tsc ${args.join(' ')}:\n${out.stdout}${out.stderr}`);
}

test('tsc --noEmit --strict accepts the uses and refuses every @ts-expect-error line', () => {
  const directives = fs.readFileSync(path.join(types, 'usage.mts'), 'utf8').match(/@ts-expect-error/g) || [];
  assert.ok(directives.length >= 10, `${directives.length} @ts-expect-error lines`);
  run(['--noEmit', '--strict', '-p', 'tsconfig.json']);
});

test('await using releases the lease at the end of the block (compiled and run)', () => {
  // Inside the package, so that the compiled file imports 'redis-ratelimit' by its own name.
  const out = fs.mkdtempSync(path.join(types, '.out-'));
  try {
    run(['-p', 'tsconfig.emit.json', '--outDir', out]);
    const seen = JSON.parse(execFileSync(process.execPath, [path.join(out, 'dispose.mjs')],
      { env: { ...process.env, RL_REDIS_PORT: String(PORT) }, encoding: 'utf8' }));
    assert.deepEqual(seen, { inside: 1, after: 0, insideThrowing: 2, afterThrow: 0 });
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});
