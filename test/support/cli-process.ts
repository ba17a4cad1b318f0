/**
 * Runs the `durable-tools` command line as a real process (as `node --import tsx src/cli/main.ts`, or through
 * `npm run`), captures its output and finds every process it started.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from './wait-for';

/** The repository root: the working directory of the command. */
export const REPO_ROOT = join(__dirname, '..', '..');

/** A started command line process and its output so far. */
export interface CliProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or 128 + signal number) once the process has exited. */
  exited: Promise<number>;
}

/**
 * How to start the command line (`npm-start`: `npm start -- <args>`, the demo). `{ bin, cwd }` runs a built
 * `durable-tools` (an installed package's `node_modules/.bin/durable-tools`) with plain `node`, no tsx, in `cwd`.
 */
export type CliLauncher = 'node' | 'npm' | 'npm-start' | { bin: string; cwd: string };

/** Starts `durable-tools <args>` in its own process group, with `env` added to this process's environment. */
export function startCli(args: string[], env: NodeJS.ProcessEnv, launcher: CliLauncher = 'node'): CliProcess {
  const [command, prefix] =
    typeof launcher === 'object'
      ? [process.execPath, [launcher.bin]]
      : {
          node: [process.execPath, ['--import', 'tsx', 'src/cli/main.ts']] as const,
          npm: ['npm', ['run', '-s', 'durable-tools', '--']] as const,
          'npm-start': ['npm', ['start', '-s', '--']] as const,
        }[launcher];
  const child = spawn(command, [...prefix, ...args], {
    cwd: typeof launcher === 'object' ? launcher.cwd : REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number>((resolve) =>
    child.once('exit', (code, signal) =>
      resolve(code ?? 128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 9)),
    ),
  );
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Runs `durable-tools <args>` to its end. */
export async function runCliToEnd(
  args: string[],
  env: NodeJS.ProcessEnv,
  launcher: CliLauncher = 'node',
): Promise<{ code: number; stdout: string; stderr: string }> {
  const cli = startCli(args, env, launcher);
  const code = await cli.exited;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

/** The parent pid of every live process on this machine (Linux /proc). */
function parentsByPid(): Map<number, number> {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] !== 'Z') parents.set(Number(entry), Number(fields[1]));
    } catch {
      // gone meanwhile
    }
  }
  return parents;
}

/** The live descendants of a process (children, grandchildren, ...). */
export function descendants(pid: number): number[] {
  const parents = parentsByPid();
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const current = queue.shift()!;
    for (const [child, parent] of parents) {
      if (parent === current && !found.includes(child)) {
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
}

/** Whether a process is alive (and not a zombie). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Waits until every one of the processes has exited. */
export function waitAllGone(pids: number[], timeoutMs = 60_000): Promise<true> {
  return waitFor(`processes ${pids.join(', ')} to exit`, () => pids.every((pid) => !isAlive(pid)), { timeoutMs });
}

/** The command line of a process, for messages. */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return '(gone)';
  }
}

/** Waits for a line in a process's output (stdout or stderr), failing with its output if it exits first. */
export async function waitForCliOutput(cli: CliProcess, pattern: RegExp, timeoutMs = 90_000): Promise<void> {
  const seen = () => pattern.test(cli.stdout()) || pattern.test(cli.stderr());
  let exitCode: number | undefined;
  const exited = cli.exited.then((code) => (exitCode = code));
  await waitFor(`output ${pattern}`, () => seen() || exitCode !== undefined, { timeoutMs });
  await Promise.race([exited, Promise.resolve()]);
  if (!seen()) throw new Error(`exited ${exitCode} before ${pattern}:\n${cli.stdout()}\n${cli.stderr()}`);
}

/** The parent pid of a live process (Linux /proc), or undefined when it is gone. */
export function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}
