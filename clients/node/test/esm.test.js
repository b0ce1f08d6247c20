// The ES module entry (index.mjs) against the CommonJS one (index.js): `import` gives every export that
// `require` gives, by name, and the very same objects (one copy of the code); the default export is
// module.exports. Imported by the package's own name, as an application imports it (the package's
// "exports" resolve it to index.mjs; test/pack.test.js does the same from an installed tarball).
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');

test('import and require give the same exports', async () => {
  const cjs = require('redis-ratelimit');
  const esm = await import('redis-ratelimit');
  const named = Object.keys(esm).filter((name) => name !== 'default').sort();
  assert.deepEqual(named, Object.keys(cjs).sort(), 'index.mjs must name every export of index.js');
  for (const name of named) assert.equal(esm[name], cjs[name], name);
  assert.equal(esm.default, cjs);
  assert.equal(require.resolve('redis-ratelimit'), require.resolve('..'));
});
