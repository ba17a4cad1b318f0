import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Who holds an idempotency key, precisely enough to tell on the same Linux kernel whether that process is
 * still alive: the kernel's boot id, the pid namespace, the user id, the pid and the process's start time
 * (clock ticks since boot, field 22 of `/proc/<pid>/stat`). A pid alone is reused; a pid with its start time
 * names one process of one boot.
 */
export interface HolderIdentity {
  /** `/proc/sys/kernel/random/boot_id`: differs after every boot and between machines. */
  bootId: string;
  /** The inode of the pid namespace (`readlink /proc/self/ns/pid` → `pid:[inode]`). */
  pidNamespace: string;
  /** The process's real user id (`/proc` may hide other users' processes: `hidepid`). */
  uid: number;
  pid: number;
  /** Start time of the process in clock ticks since boot. */
  startTime: string;
}

/**
 * How the holder check reads `/proc`, injectable so a test can say "dead", "alive", "paused" or "other
 * namespace". `readFile` returns `undefined` when the file does not exist (ENOENT, ESRCH) and throws on any
 * other error; `readDir` likewise.
 */
export interface ProcReader {
  readFile(path: string): string | undefined;
  readLink(path: string): string;
  readDir(path: string): string[] | undefined;
  /** This process's pid and real uid. */
  self(): { pid: number; uid: number | undefined };
}

/** What {@link holderLiveness} can say of a key's holder. */
export type HolderLiveness =
  /** The holder process no longer exists (or is a zombie with no thread left): it can send nothing any more. */
  | 'dead'
  /** The process exists (running, sleeping or stopped by SIGSTOP): it may still send. */
  | 'alive'
  /** Not checkable from here (another machine, boot, namespace or user, no identity, `/proc` unreadable). */
  | 'unknown';

/** The `/proc` of this machine. */
export const LINUX_PROC: ProcReader = {
  readFile: (path) => missingAsUndefined(() => readFileSync(path, 'utf8')),
  readLink: (path) => readlinkSync(path),
  readDir: (path) => missingAsUndefined(() => readdirSync(path)),
  self: () => ({ pid: process.pid, uid: process.getuid?.() }),
};

function missingAsUndefined<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ESRCH') return undefined;
    throw error;
  }
}

/** The fields of `/proc/<pid>/stat` after the command name (which may contain spaces and parentheses). */
function statFields(stat: string): string[] | undefined {
  const end = stat.lastIndexOf(')');
  if (end < 0) return undefined;
  const head = stat.slice(0, stat.indexOf(' ')).trim();
  // fields[0] is field 1 (pid), fields[1] field 3 (state), fields[n] field n + 2 from there on.
  return [
    head,
    ...stat
      .slice(end + 1)
      .trim()
      .split(/\s+/),
  ];
}

/** Field 22 (start time) and field 3 (state) of a `/proc/<pid>/stat` line. */
function parseStat(stat: string): { pid: string; state: string; startTime: string } | undefined {
  const fields = statFields(stat);
  const state = fields?.[1];
  const startTime = fields?.[20];
  if (fields === undefined || state === undefined || startTime === undefined || !/^\d+$/.test(startTime)) {
    return undefined;
  }
  return { pid: fields[0]!, state, startTime };
}

/**
 * This process's identity, or `undefined` where death cannot be checked (not Linux, `/proc` unreadable or
 * mounted for another pid namespace). Never throws.
 */
export function currentHolderIdentity(proc: ProcReader = LINUX_PROC): HolderIdentity | undefined {
  try {
    const { pid, uid } = proc.self();
    if (uid === undefined) return undefined;
    const bootId = proc.readFile('/proc/sys/kernel/random/boot_id')?.trim();
    const namespace = /^pid:\[(\d+)\]$/.exec(proc.readLink('/proc/self/ns/pid'))?.[1];
    const stat = proc.readFile('/proc/self/stat');
    const parsed = stat === undefined ? undefined : parseStat(stat);
    // /proc must show this process under its own pid: else it is another namespace's /proc.
    if (!bootId || !BOOT_ID.test(bootId) || !namespace || !parsed || parsed.pid !== String(pid)) return undefined;
    return { bootId, pidNamespace: namespace, uid, pid, startTime: parsed.startTime };
  } catch {
    return undefined;
  }
}

const BOOT_ID = /^[0-9a-f-]{36}$/;
const HOLDER_TAG = /(?:^|\/)holder=linux:([0-9a-f-]{36}):(\d+):(\d+):(\d+):(\d+)(?=\/|$)/;

/** The part of an owner label that carries `identity`: `holder=linux:<boot>:<pidns>:<uid>:<pid>:<start>`. */
export function holderTag(identity: HolderIdentity): string {
  const { bootId, pidNamespace, uid, pid, startTime } = identity;
  return `holder=linux:${bootId}:${pidNamespace}:${uid}:${pid}:${startTime}`;
}

/**
 * The owner label of this process's claims: `host:pid`, and the holder tag when the identity is known
 * (`host:pid/holder=linux:…`). Attempts append `/attempt-N`.
 */
export function processOwner(host: string, identity: HolderIdentity | undefined, pid: number = process.pid): string {
  return identity === undefined ? `${host}:${pid}` : `${host}:${pid}/${holderTag(identity)}`;
}

/** The holder identity recorded in an owner label, or `undefined` (an old-format or foreign owner). */
export function parseHolder(owner: string): HolderIdentity | undefined {
  const match = HOLDER_TAG.exec(owner);
  if (match === null) return undefined;
  const [, bootId, pidNamespace, uid, pid, startTime] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  return { bootId, pidNamespace, uid: Number(uid), pid: Number(pid), startTime };
}

/**
 * The holder identity in `owner` when this process (`self`) can check it: same boot, pid namespace and user
 * (`/proc` may hide other users' processes). Undefined otherwise, or without an identity on either side.
 */
export function checkableHolder(owner: string, self: HolderIdentity | undefined): HolderIdentity | undefined {
  const holder = parseHolder(owner);
  if (self === undefined || holder === undefined) return undefined;
  const same = holder.bootId === self.bootId && holder.pidNamespace === self.pidNamespace && holder.uid === self.uid;
  return same ? holder : undefined;
}

/**
 * Whether the process that wrote `owner` still exists, seen from this process (`self`). `dead` only when it is
 * provable: same boot, same pid namespace and same user as this process, and `/proc/<pid>` is gone, shows
 * another process (another start time), or shows a zombie without threads. A stopped (SIGSTOPped) or busy
 * process is `alive`. Any doubt is `unknown`. Never throws.
 */
export function holderLiveness(
  owner: string,
  self: HolderIdentity | undefined,
  proc: ProcReader = LINUX_PROC,
): HolderLiveness {
  const holder = checkableHolder(owner, self);
  if (self === undefined || holder === undefined) return 'unknown';
  if (holder.pid === self.pid) return holder.startTime === self.startTime ? 'alive' : 'dead';
  try {
    const stat = proc.readFile(`/proc/${holder.pid}/stat`);
    if (stat === undefined) return 'dead';
    const parsed = parseStat(stat);
    if (parsed === undefined) return 'unknown';
    if (parsed.startTime !== holder.startTime) return 'dead';
    if (parsed.state === 'Z' || parsed.state === 'X') {
      // A zombie leader may still have running threads; with none left, nothing of it can send.
      const tasks = proc.readDir(`/proc/${holder.pid}/task`);
      return tasks === undefined || tasks.length <= 1 ? 'dead' : 'alive';
    }
    return 'alive';
  } catch {
    return 'unknown';
  }
}

let thisProcess: { identity: HolderIdentity | undefined; owner: string } | undefined;

/** This process's identity and owner label (`host:pid/holder=…`), read from `/proc` once. */
export function thisProcessHolder(): { identity: HolderIdentity | undefined; owner: string } {
  if (thisProcess === undefined) {
    const identity = currentHolderIdentity();
    thisProcess = { identity, owner: processOwner(hostname(), identity) };
  }
  return thisProcess;
}

/** Whether the process that wrote `owner` (an owner label, or anything else) is provably dead, seen from here. */
export function isDeadHolder(owner: unknown): boolean {
  return typeof owner === 'string' && holderLiveness(owner, thisProcessHolder().identity) === 'dead';
}
