/**
 * `--require`d into every process of the Node 22 line (NODE_OPTIONS, set by jest.node22.config.js), so that child
 * processes a test spawns (workers, the CLI) load better-sqlite3 with the Node 22 addon too: the request
 * `better-sqlite3` resolves to better-sqlite3.js, except from that file itself.
 */
const Module = require('node:module');
const { join } = require('node:path');

const WRAPPER = join(__dirname, 'better-sqlite3.js');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (request === 'better-sqlite3' && parent?.filename !== WRAPPER) return WRAPPER;
  return resolve.call(this, request, parent, ...rest);
};
