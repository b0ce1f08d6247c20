// The README's code blocks for the tests that run them (test/readme.test.js, test/cluster/cluster.test.js):
// each fenced block with its info string, and a runner that makes a block the body of an async function
// whose require() gives the package for 'redis-ratelimit' and a test's stand-in for 'ioredis'.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const README = fs.readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');

// [info string, code] of each fenced block.
function blocks(text) {
  return [...text.matchAll(/^```([^\n]*)\n([\s\S]*?)^```$/gm)].map(([, info, code]) => [info.trim(), code]);
}

// A require() for a README block: ioredis's clients are made for the test (and closed after the block).
function readmeRequire(made, overrides) {
  return (name) => {
    if (name === 'redis-ratelimit') return require('..');
    if (name === 'ioredis') return overrides;
    return require(name);
  };
}

const AsyncFunction = (async () => {}).constructor;

async function runBlock(code, overrides, made) {
  try {
    await new AsyncFunction('require', code)(readmeRequire(made, overrides));
  } finally {
    for (const redis of made) redis.disconnect();
  }
}

module.exports = { README, blocks, runBlock };
