import { chmodSync, existsSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevServer } from '../../src/dev-server/dev-server';
import { LOCAL_TEMPORAL } from '../../src/dev-server/local-temporal';

/**
 * The local Temporal dev server keeps its histories (every payload of every run) in a SQLite file under
 * `.data/`: the directory is 0700, the file, its -wal and -shm files and the server's log 0600 — also when an
 * earlier version left them 755 and 644.
 */

function modeOf(path: string): string {
  return (statSync(path).mode & 0o777).toString(8);
}

test("the dev server's state directory is 0700 and its SQLite files and log are 0600, tightened from 755 and 644", async () => {
  const root = mkdtempSync(join(tmpdir(), 'at-rest-server-'));
  const dir = join(root, LOCAL_TEMPORAL.dataDir);
  mkdirSync(dir, { mode: 0o755 });
  chmodSync(dir, 0o755);
  const dbFile = join(dir, LOCAL_TEMPORAL.dbFile);
  const logFile = join(dir, LOCAL_TEMPORAL.logFile);
  writeFileSync(logFile, 'an earlier run\n');
  chmodSync(logFile, 0o644);
  const umask = process.umask(0o022);
  let server: Awaited<ReturnType<typeof startDevServer>> | undefined;
  try {
    server = await startDevServer({ dbFile, logFile, ui: false });
    expect(modeOf(dir)).toBe('700');
    const files = [dbFile, `${dbFile}-wal`, `${dbFile}-shm`, logFile];
    // The server opened its database in WAL mode: the companion files exist while it runs.
    expect(files.map((file) => [file, existsSync(file)])).toEqual(files.map((file) => [file, true]));
    expect(files.map((file) => [file, modeOf(file)])).toEqual(files.map((file) => [file, '600']));
  } finally {
    process.umask(umask);
    await server?.stop();
  }
});
