import { spawn } from 'node:child_process';
import { accessSync, constants, mkdirSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

/**
 * What our Go builds share (the Temporal CLI, the Temporal server, the tests' OpenTelemetry Collector): one cache
 * root, finding Go, running it, the checksum-database fallback, and building into a staging directory so an
 * interrupted build never leaves a half cache.
 */

/** One-line progress messages. */
export type GoBuildLog = (line: string) => void;

/** Makes the error a failed build throws (each caller has its own error class). */
export type GoBuildFailure = (message: string, cause?: Error) => Error;

/** `$DURABLE_TOOLS_CACHE_DIR`, else `$XDG_CACHE_HOME/durable-tools`, else `~/.cache/durable-tools`. */
export function durableToolsCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.DURABLE_TOOLS_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'durable-tools');
}

/** True when `path` exists and may be executed. */
export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `command` in the directories of `PATH`. */
export function findOnPath(command: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutable(join(dir, command))) return join(dir, command);
  }
  return undefined;
}

/** The Go executable: `go` on PATH, else /usr/local/go/bin/go (where the official archive installs it). */
export function findGo(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return findOnPath('go', env) ?? (isExecutable('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : undefined);
}

/** How to run a Go command. */
export interface RunGoOptions {
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** Run at a lower priority (`nice -n 10` where `nice` exists), as the long builds do. */
  nice?: boolean;
  fail: GoBuildFailure;
}

/** What a Go command printed: `output` is stdout and stderr interleaved. */
export interface GoRunResult {
  code: number;
  output: string;
  stdout: string;
}

/** Runs `go <args>`, collecting its output; rejects only when it cannot be started. */
export function runGo(go: string, args: string[], options: RunGoOptions): Promise<GoRunResult> {
  const nice = options.nice && isExecutable('/usr/bin/nice') ? '/usr/bin/nice' : undefined;
  const [command, commandArgs] = nice ? [nice, ['-n', '10', go, ...args]] : [go, args];
  return new Promise((resolve, reject) => {
    const child = spawn(command, commandArgs, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (cause) => reject(options.fail(`Could not run ${go}: ${cause.message}`, cause)));
    child.on('close', (code) => resolve({ code: code ?? 1, output, stdout }));
  });
}

const CHECKSUM_DATABASE_UNREACHABLE = /sum\.golang\.org|checksum database|verifying .*: .*dial|SECURITY ERROR/i;

/**
 * Runs a Go build (`go install …` or `go build …`) with `GOFLAGS=-buildvcs=false` unless set. When Go's checksum
 * database cannot be reached, retries this one command with `GOSUMDB=off` (the module proxy still serves the
 * modules). Throws `fail(…)` with the last lines of Go's output when the build fails.
 */
export async function goBuild(
  go: string,
  args: string[],
  options: RunGoOptions & { what: string; log: GoBuildLog },
): Promise<void> {
  const env = { ...options.env, GOFLAGS: options.env.GOFLAGS ?? '-buildvcs=false' };
  let result = await runGo(go, args, { ...options, env });
  if (result.code !== 0 && CHECKSUM_DATABASE_UNREACHABLE.test(result.output)) {
    options.log('durable-tools: the Go checksum database is unreachable; retrying the build with GOSUMDB=off.');
    result = await runGo(go, args, { ...options, env: { ...env, GOSUMDB: 'off' } });
  }
  if (result.code !== 0) {
    throw options.fail(
      `Building ${options.what} failed (go ${args.join(' ')}, exit ${result.code}):\n` +
        result.output.trim().split('\n').slice(-15).join('\n'),
    );
  }
}

/** Options of {@link buildStaged}. */
export interface BuildStagedOptions {
  /** What is built, for the messages: `the Temporal CLI v1.5.1`. */
  what: string;
  /** One-line progress messages. */
  log: GoBuildLog;
  /** How often a running build says it is still running (default 30 s). */
  progressIntervalMs?: number;
}

/**
 * Runs `build` on an empty staging directory beside `dir` (`<dir>.building-<pid>`), saying when it starts, every
 * `progressIntervalMs` while it runs, and when it is done; the staging directory is removed afterwards, whatever
 * happens. `build` moves what it made into `dir` itself, as its last step, so an interrupted build leaves nothing.
 */
export async function buildStaged(
  dir: string,
  options: BuildStagedOptions,
  build: (staging: string) => Promise<void>,
): Promise<void> {
  const { what, log } = options;
  log(`durable-tools: building ${what} with Go into ${dir} (minutes, once per machine)...`);
  const staging = `${dir}.building-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const started = Date.now();
  const seconds = () => Math.round((Date.now() - started) / 1000);
  const ticker = setInterval(
    () => log(`durable-tools: still building ${what} (${seconds()} s)...`),
    options.progressIntervalMs ?? 30_000,
  );
  try {
    await build(staging);
  } finally {
    clearInterval(ticker);
    rmSync(staging, { recursive: true, force: true });
  }
  log(`durable-tools: built ${what} in ${seconds()} s.`);
}
