/**
 * State at rest is private to the user who runs the engine: the stores hold tool outputs (the transcript WAL
 * in plain text), callback secrets and Temporal task tokens (async-job records), approved arguments (the
 * audit trail). Every directory the engine creates for state is 0700 and every store file 0600, SQLite's
 * `-wal`, `-shm` and `-journal` files included (SQLite creates those with the mode of their database file, so
 * a database file that is 0600 before SQLite opens it gives them 0600 too).
 *
 * Existing state with looser modes: the files are the engine's own and are tightened to 0600 whenever a
 * store opens them; the default state directory `.data` is tightened to 0700 (earlier versions made it 755);
 * any other existing directory is the user's choice and is left as it is (the files in it are 0600 anyway).
 * What cannot be tightened (owned by another user) is said once per path on stderr.
 */
import { chmodSync, closeSync, existsSync, fstatSync, fchmodSync, mkdirSync, openSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';

/** The modes of state at rest. */
export const PRIVATE_MODES = { directory: 0o700, file: 0o600 } as const;

/** The name of the engine's default state directory, tightened to 0700 even when it exists already. */
export const STATE_DIRECTORY_NAME = '.data';

/** The companion files SQLite keeps next to a database file. */
export const SQLITE_COMPANION_SUFFIXES = ['-wal', '-shm', '-journal'] as const;

const warned = new Set<string>();

/** Writes a warning once per path (stderr by default). Exposed for tests through {@link setPrivateStateWarn}. */
let warn: (message: string) => void = (message) => process.stderr.write(`durable-tools: ${message}\n`);

/** Replaces where warnings about modes go (tests); returns the previous sink. */
export function setPrivateStateWarn(sink: (message: string) => void): (message: string) => void {
  const previous = warn;
  warn = sink;
  return previous;
}

function warnOnce(path: string, message: string): void {
  if (warned.has(path)) return;
  warned.add(path);
  warn(message);
}

/**
 * Creates `dir` (and missing parents) with mode 0700. An existing directory named `.data` is tightened to
 * 0700; any other existing directory is left as it is.
 */
export function ensurePrivateDirectory(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_MODES.directory });
  if (basename(dir) === STATE_DIRECTORY_NAME) tighten(dir, PRIVATE_MODES.directory);
}

/**
 * Makes a state file private before anything writes to it: its directory as {@link ensurePrivateDirectory},
 * the file created empty with mode 0600 when missing, tightened to 0600 when it exists, and so are its SQLite
 * companions that exist already (new ones inherit the file's mode). Nothing for `:memory:` or an empty path
 * (SQLite's temporary database).
 */
export function preparePrivateStateFile(path: string): void {
  if (path === '' || path === ':memory:' || path.startsWith('file:')) return;
  ensurePrivateDirectory(dirname(path));
  // 'a' creates the file without truncating one another process is using; the mode applies on creation only.
  const fd = openSync(path, 'a', PRIVATE_MODES.file);
  try {
    if ((fstatSync(fd).mode & 0o777) !== PRIVATE_MODES.file) {
      try {
        fchmodSync(fd, PRIVATE_MODES.file);
      } catch (error) {
        warnOnce(path, cannotTighten(path, PRIVATE_MODES.file, error));
      }
    }
  } finally {
    closeSync(fd);
  }
  tightenCompanions(path);
}

/** Tightens to 0600 the SQLite companion files of `path` that exist. */
export function tightenCompanions(path: string): void {
  for (const suffix of SQLITE_COMPANION_SUFFIXES) {
    const companion = `${path}${suffix}`;
    if (existsSync(companion)) tighten(companion, PRIVATE_MODES.file);
  }
}

/** Tightens a file or directory to `mode` when it is looser; says once when it cannot. */
export function tighten(path: string, mode: number): void {
  let current: number;
  try {
    current = statSync(path).mode & 0o777;
  } catch {
    return; // gone meanwhile
  }
  if ((current & ~mode) === 0) return;
  try {
    chmodSync(path, mode);
  } catch (error) {
    warnOnce(path, cannotTighten(path, mode, error));
  }
}

function cannotTighten(path: string, mode: number, error: unknown): string {
  const reason = error instanceof Error ? error.message : String(error);
  return `${path} is readable by other users and could not be made private (mode ${mode.toString(8)}): ${reason}. Run: chmod ${mode.toString(8)} ${path}`;
}

/**
 * Runs `fn` (which starts a process, such as the Temporal dev server) with the file-creation mask 077, so the
 * files that process creates are private; restores the mask after. Where the mask cannot be set (a worker
 * thread), runs `fn` as it is and the caller tightens the files afterwards.
 */
export function withPrivateUmask<T>(fn: () => T): T {
  let previous: number | undefined;
  try {
    previous = process.umask(0o077);
  } catch {
    previous = undefined;
  }
  try {
    return fn();
  } finally {
    if (previous !== undefined) process.umask(previous);
  }
}
