// The npm package as an application gets it: `npm pack` makes a tarball (into a temp dir) that holds the
// code and its TypeScript declarations and nothing from test/ or example/; a new project installs it with
// `npm install --offline ./that.tgz`, then requires it AND imports it and runs a call against the test
// server. The temp dir is removed.
//
// Nothing leaves the machine: the project brings its client, ioredis (the package's peer dependency), pinned
// in its own lockfile at the versions of this package's lockfile, whose tarballs `npm ci` put in the npm
// cache; npm reads ioredis's registry entry to check the peer range, which mk/clients.mk caches beside
// (`npm cache add`).
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { PORT, client, fresh } = require('./support');

const PACKAGE_DIR = path.join(__dirname, '..');
let tmp;
let packed;
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-node-pack-'));
  const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', tmp], PACKAGE_DIR));
  const app = path.join(tmp, 'app');
  fs.mkdirSync(app);
  writeProject(app);
  npm(['install', '--offline', '--no-audit', '--no-fund', path.join(tmp, packed.filename)], app);
});

// A project that depends on ioredis only, its lockfile the subtree of ioredis in this package's lockfile.
function writeProject(dir) {
  const lock = require('../package-lock.json');
  const packages = {};
  const todo = ['ioredis'];
  while (todo.length > 0) {
    const where = `node_modules/${todo.pop()}`;
    if (packages[where]) continue;
    const { dev, peer, ...entry } = lock.packages[where];
    packages[where] = entry;
    todo.push(...Object.keys(entry.dependencies || {}));
  }
  const root = { name: 'app', version: '1.0.0', dependencies: { ioredis: packages['node_modules/ioredis'].version } };
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ ...root, private: true }, null, 2));
  fs.writeFileSync(path.join(dir, 'package-lock.json'),
    JSON.stringify({ name: 'app', version: '1.0.0', lockfileVersion: 3, requires: true, packages: { '': root, ...packages } }, null, 2));
}
after(() => { fs.rmSync(tmp, { recursive: true, force: true }); });

test('the tarball holds the code and the declarations, nothing from test/ or example/', () => {
  assert.equal(packed.name, 'redis-ratelimit');
  assert.equal(packed.version, '1.5.0');
  const files = packed.files.map((f) => f.path).sort();
  for (const needed of ['package.json', 'index.js', 'index.mjs', 'index.d.ts', 'index.d.mts', 'lib/limits.js',
    'lib/limits.d.ts', 'lib/policies.d.ts', 'lib/headers.d.ts', 'lib/express.d.ts', 'lib/lease.d.ts', 'lib/commands.d.ts']) {
    assert.ok(files.includes(needed), `${needed} missing from ${files.join(' ')}`);
  }
  assert.deepEqual(files.filter((f) => /^(test|example|node_modules)\//.test(f) || f.endsWith('.sh')), []);
  // Every library file has its declarations, and every declaration file its code (but fastify-types.d.ts,
  // types only: fastify's interfaces augmented, the 'redis-ratelimit/fastify-types' entry).
  const libJs = files.filter((f) => /^lib\/.*\.js$/.test(f) && f !== 'lib/client.js');
  assert.ok(files.includes('lib/fastify-types.d.ts'));
  assert.deepEqual(libJs.map((f) => f.replace(/\.js$/, '.d.ts')),
    files.filter((f) => /^lib\/.*\.d\.ts$/.test(f) && f !== 'lib/fastify-types.d.ts'));
});

test('the project installs it beside its ioredis, without the optional peers', () => {
  const modules = path.join(tmp, 'app', 'node_modules');
  assert.ok(fs.existsSync(path.join(modules, 'redis-ratelimit', 'index.d.ts')));
  assert.ok(fs.existsSync(path.join(modules, 'ioredis', 'package.json')));
  assert.equal(fs.existsSync(path.join(modules, 'express')), false);
  assert.equal(fs.existsSync(path.join(modules, 'fastify')), false);
  const manifest = JSON.parse(fs.readFileSync(path.join(tmp, 'app', 'package.json'), 'utf8'));
  assert.match(manifest.dependencies['redis-ratelimit'], /^file:.*redis-ratelimit-1\.5\.0\.tgz$/);
});

test('the installed package works through require and import, against the server', async () => {
  const redis = client();
  try {
    await fresh(redis);
    const app = path.join(tmp, 'app');
    const body = (load) => `${load}
const { Redis } = require_('ioredis');
const redis = new Redis({ host: '127.0.0.1', port: ${PORT} });
const res = await rl.limit(redis, process.argv[2], rl.token(10, 1, 1000), { cost: 4 });
console.log(JSON.stringify(res));
redis.disconnect();`;
    fs.writeFileSync(path.join(app, 'cjs.js'), `(async () => {${body("const rl = require('redis-ratelimit'); const require_ = require;")}})();`);
    fs.writeFileSync(path.join(app, 'esm.mjs'), body(`import * as rl from 'redis-ratelimit';
import { createRequire } from 'node:module';
const require_ = createRequire(import.meta.url);`));
    const run = (file) => JSON.parse(execFileSync(process.execPath, [file, `pack:${file}`], { cwd: app, encoding: 'utf8' }));
    const expected = { allowed: true, limit: 10, remaining: 6, retryAfterMs: -1, resetAfterMs: 4000, waitMs: 0 };
    assert.deepEqual(run('cjs.js'), expected);
    assert.deepEqual(run('esm.mjs'), expected);
    // The call was recorded on the server: 6 tokens left, of which a look at one more leaves 5.
    assert.deepEqual(await redis.call('RL.TOKEN_RO', 'pack:cjs.js', 10, 1, 1000), [1, 10, 5, -1, 5000, 0]);
  } finally {
    redis.disconnect();
  }
});
