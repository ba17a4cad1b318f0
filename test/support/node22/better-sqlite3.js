/**
 * better-sqlite3 as the Node 22 line loads it: the same JavaScript from node_modules, with the native addon built
 * for Node 22 (DT_NODE22_SQLITE_BINDING, set by jest.node22.config.js) as the default `nativeBinding`. Jest maps
 * `better-sqlite3` here (moduleNameMapper); child processes get it through preload.js.
 */
const { join } = require('node:path');

const Database = require(join(__dirname, '..', '..', '..', 'node_modules', 'better-sqlite3'));
const bindingPath = process.env.DT_NODE22_SQLITE_BINDING;
if (!bindingPath)
  throw new Error('DT_NODE22_SQLITE_BINDING is not set: run the Node 22 line with `npm run test:node22`');
const addon = require(bindingPath);

class Node22Database extends Database {
  constructor(filename, options = {}) {
    super(filename, { nativeBinding: addon, ...options });
  }
}

module.exports = Node22Database;
module.exports.default = Node22Database;
module.exports.SqliteError = Database.SqliteError;
