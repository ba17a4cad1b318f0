/**
 * Keeps repository-only scripts out of the packed package.json. `prepare` (unshadow-node.js) serves this
 * repository's own `npm ci`; in a package installed from git it would run a file the package does not hold.
 *
 * `strip` (the start of `prepack`) saves package.json beside it and writes it without those scripts; `restore`
 * (`postpack`) puts the saved one back. The saved copy doubles as a lock: a second `npm pack` waits for the first
 * to restore, and a copy left by a pack that died (its process is gone) is restored first.
 */
const {
  existsSync,
  readFileSync,
  renameSync,
  writeFileSync,
  openSync,
  closeSync,
  writeSync,
  unlinkSync,
} = require('node:fs');
const { join } = require('node:path');

const REPO = join(__dirname, '..', '..');
const MANIFEST = join(REPO, 'package.json');
const SAVED = join(REPO, '.package.json.before-pack');
const OWNER = `${SAVED}.pid`;
/** Scripts that only this repository's checkout can run. */
const REPOSITORY_ONLY_SCRIPTS = ['prepare'];

/** The `npm pack` process: the parent of the shell npm runs `prepack` in (that shell ends before `postpack`). */
function packProcess() {
  try {
    const stat = readFileSync(`/proc/${process.ppid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return process.ppid;
  }
}

/** Whether the pack that saved the manifest still runs. */
function ownerAlive() {
  try {
    process.kill(Number(readFileSync(OWNER, 'utf8')), 0);
    return true;
  } catch {
    return false;
  }
}

function restore() {
  if (!existsSync(SAVED)) return;
  renameSync(SAVED, MANIFEST);
  removeOwner();
}

function removeOwner() {
  try {
    unlinkSync(OWNER);
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
  }
}

/** Takes the saved copy's place, waiting for another pack; restores what a dead pack left. */
async function takeLock() {
  for (let waited = 0; ; waited += 200) {
    try {
      const fd = openSync(OWNER, 'wx');
      writeSync(fd, String(packProcess()));
      closeSync(fd);
      return;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
    if (!ownerAlive()) {
      restore();
      removeOwner();
      continue;
    }
    if (waited > 600_000) throw new Error(`another npm pack holds ${OWNER} for over 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function strip() {
  await takeLock();
  const text = readFileSync(MANIFEST, 'utf8');
  const manifest = JSON.parse(text);
  for (const script of REPOSITORY_ONLY_SCRIPTS) delete manifest.scripts[script];
  writeFileSync(SAVED, text);
  writeFileSync(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
}

const command = process.argv[2];
if (command === 'strip') {
  strip().catch((error) => {
    process.exitCode = 1;
    console.error(error.message);
  });
} else if (command === 'restore') {
  restore();
} else {
  process.exitCode = 2;
  console.error('usage: packed-manifest.js strip | restore');
}
