/**
 * Whether a command should stop when the process that started it goes away, and which process that is.
 *
 * Only an `npm run` / `npx` wrapper needs watching: killed with SIGKILL (or SIGTERM, which npm relays only to
 * its `sh -c`), it leaves the command running on its own. A command started any other way — a terminal, a
 * service manager (systemd, Docker), `nohup … &`, `setsid`, `disown` — keeps running when its starter exits,
 * as such tools expect; terminals send SIGHUP themselves. `DURABLE_TOOLS_PARENT_WATCH=off` or
 * `--no-parent-watch` turns the watch off, `=on` watches the parent process whoever it is.
 */
import { readFileSync } from 'node:fs';

/** The environment variable: `auto` (default), `on` or `off`. */
export const PARENT_WATCH_ENV = 'DURABLE_TOOLS_PARENT_WATCH';

/** `--no-parent-watch` for the commands that run until stopped. */
export const PARENT_WATCH_OPTION_SPEC = { 'no-parent-watch': { type: 'boolean' } } as const;

/** `--no-parent-watch` in a subcommand's help. */
export const PARENT_WATCH_OPTION_HELP = `  --no-parent-watch  keep running when the npm/npx that started this command goes away (also
                  ${PARENT_WATCH_ENV}=off); without npm/npx there is no watch (systemd, Docker, nohup)`;

/** The npm or npx process that started this one. */
export interface NpmWrapper {
  pid: number;
  /**
   * True when npm is this process's own parent: it relays the SIGINT/SIGTERM a terminal already sent to the
   * whole process group, so each Ctrl-C arrives twice. (With npm's default script shell `sh` = dash, npm's child
   * is `sh -c`, and only the shell gets the relay.)
   */
  parent: boolean;
}

/** What the lifecycle watches. */
export interface ParentWatchPlan {
  /** The npm/npx wrapper, when the command was started through one. */
  npm?: NpmWrapper;
  /** Whether to stop when the parent (or the npm wrapper) goes away. */
  watch: boolean;
}

/** A process as /proc shows it. */
export interface ProcessInfo {
  ppid: number;
  /** Its command name (`comm`: npm sets it to its title, as `npm run dev`). */
  name: string;
  /** Its command line, arguments joined by spaces. */
  commandLine: string;
}

/** The mode of {@link PARENT_WATCH_ENV}: anything but on/off (or their synonyms) is `auto`. */
export function parentWatchMode(env: NodeJS.ProcessEnv): 'auto' | 'on' | 'off' {
  const value = (env[PARENT_WATCH_ENV] ?? '').trim().toLowerCase();
  if (['off', '0', 'false', 'no'].includes(value)) return 'off';
  if (['on', '1', 'true', 'yes'].includes(value)) return 'on';
  return 'auto';
}

/**
 * What to watch, from the environment and the process tree: the npm/npx wrapper when npm's variables are set
 * and npm is the parent (or the parent's parent, through its `sh -c`); nothing otherwise, unless the
 * environment says `on`.
 */
export function planParentWatch(
  env: NodeJS.ProcessEnv = process.env,
  ppid: number = process.ppid,
  readInfo: (pid: number) => ProcessInfo | undefined = processInfo,
): ParentWatchPlan {
  const npm = findNpmWrapper(env, ppid, readInfo);
  const mode = parentWatchMode(env);
  return { ...(npm ? { npm } : {}), watch: mode === 'on' || (mode === 'auto' && npm !== undefined) };
}

function findNpmWrapper(
  env: NodeJS.ProcessEnv,
  ppid: number,
  readInfo: (pid: number) => ProcessInfo | undefined,
): NpmWrapper | undefined {
  if (!env.npm_execpath && !env.npm_lifecycle_event) return undefined;
  const parent = readInfo(ppid);
  // No /proc (macOS, Windows): npm's variables are all there is; npm's shell there runs the command itself.
  if (!parent) return { pid: ppid, parent: true };
  if (isNpm(parent)) return { pid: ppid, parent: true };
  if (isShell(parent) && parent.ppid > 1) {
    const grandparent = readInfo(parent.ppid);
    if (grandparent && isNpm(grandparent)) return { pid: parent.ppid, parent: false };
  }
  // npm's variables were inherited by something else (a script, nohup from a script): not npm's child.
  return undefined;
}

function isNpm(info: ProcessInfo): boolean {
  return /^(npm|npx)(\s|$)/.test(info.name) || /(^|[\s/])(npm|npx)(-cli\.js)?(\s|$)/.test(info.commandLine);
}

function isShell(info: ProcessInfo): boolean {
  return ['sh', 'dash', 'bash', 'zsh', 'ash', 'ksh', 'busybox'].includes(info.name);
}

/** A process's parent, name and command line from /proc (Linux); undefined elsewhere or when it is gone. */
export function processInfo(pid: number): ProcessInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const name = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0+/g, ' ').trim();
    return { ppid: Number(fields[1]), name, commandLine };
  } catch {
    return undefined;
  }
}

/** Whether a process still runs (a zombie does not count). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return true; // no /proc: kill(0) is all we know
  }
}
