import { spawn } from 'node:child_process';
import { accessSync, constants, mkdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { TemporalCliError } from './temporal-cli-error';

/** The CLI version we build. Newer tags carry a `replace` directive that breaks `go install`. */
export const TEMPORAL_CLI = {
  version: '1.5.1',
  module: 'github.com/temporalio/cli/cmd/temporal',
} as const;

/** Where a resolved CLI came from. */
export type TemporalCliSource = 'TEMPORAL_CLI_PATH' | 'PATH' | 'cache' | 'built';

/** A Temporal CLI executable ready to run. */
export interface ResolvedTemporalCli {
  path: string;
  source: TemporalCliSource;
}

/** Options of {@link resolveTemporalCli}. */
export interface ResolveTemporalCliOptions {
  /** Environment to read (defaults to `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Build with Go when nothing else is found (default true). */
  build?: boolean;
  /** One-line progress messages (default: stderr). */
  log?: (line: string) => void;
}

/**
 * Directory holding the cached CLI build for this version:
 * `$DURABLE_TOOLS_CACHE_DIR` or `$XDG_CACHE_HOME/durable-tools` or `~/.cache/durable-tools`, then `temporal-<version>`.
 */
export function temporalCliCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const root = env.DURABLE_TOOLS_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'durable-tools');
  return join(root, `temporal-${TEMPORAL_CLI.version}`);
}

/**
 * Finds the Temporal CLI, in this order: `TEMPORAL_CLI_PATH`, `temporal` on `PATH`, the cached build,
 * a fresh build with `go install` (minutes, once per machine). Throws a {@link TemporalCliError} that
 * says how to install the CLI when none of these works.
 *
 * @example
 * ```ts
 * const cli = await resolveTemporalCli();
 * console.log(cli.path, cli.source); // ~/.cache/durable-tools/temporal-1.5.1/temporal cache
 * ```
 */
export async function resolveTemporalCli(options: ResolveTemporalCliOptions = {}): Promise<ResolvedTemporalCli> {
  const env = options.env ?? process.env;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));

  const explicit = env.TEMPORAL_CLI_PATH;
  if (explicit) {
    if (!isExecutable(explicit)) {
      throw new TemporalCliError(
        `TEMPORAL_CLI_PATH is set to ${explicit}, which is not an executable file. Fix the path or unset it.`,
        'NOT_EXECUTABLE',
      );
    }
    return { path: explicit, source: 'TEMPORAL_CLI_PATH' };
  }

  const onPath = findOnPath('temporal', env.PATH ?? '');
  if (onPath) return { path: onPath, source: 'PATH' };

  const cached = join(temporalCliCacheDir(env), 'temporal');
  if (isExecutable(cached)) return { path: cached, source: 'cache' };

  if (options.build === false) {
    throw notFound();
  }
  const go =
    findOnPath('go', env.PATH ?? '') ?? (isExecutable('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : undefined);
  if (!go) throw notFound();

  await buildTemporalCli(go, temporalCliCacheDir(env), env, log);
  return { path: cached, source: 'built' };
}

function notFound(): TemporalCliError {
  return new TemporalCliError(
    'The Temporal CLI was not found. Install Go (https://go.dev/dl) and run `npm run install-cli`, ' +
      `or build it yourself with \`go install ${TEMPORAL_CLI.module}@v${TEMPORAL_CLI.version}\` and put it on PATH, ` +
      'or set TEMPORAL_CLI_PATH to a temporal executable, or set TEMPORAL_ADDRESS to use a running server.',
    'NOT_FOUND',
  );
}

/**
 * Builds the CLI with `go install` into `cacheDir`. Builds into a temporary directory first and renames,
 * so an interrupted build never leaves a broken binary behind. When Go's checksum database cannot be
 * reached, retries this one command with `GOSUMDB=off` (the module proxy still serves the modules).
 */
async function buildTemporalCli(
  go: string,
  cacheDir: string,
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Promise<void> {
  log(
    `durable-tools: building the Temporal CLI v${TEMPORAL_CLI.version} with Go into ${cacheDir} (takes a few minutes, once per machine)...`,
  );
  const staging = `${cacheDir}.building-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const target = `${TEMPORAL_CLI.module}@v${TEMPORAL_CLI.version}`;
  const started = Date.now();
  let result = await runGo(go, ['install', target], {
    ...env,
    GOBIN: staging,
    GOFLAGS: env.GOFLAGS ?? '-buildvcs=false',
  });
  if (
    result.code !== 0 &&
    /sum\.golang\.org|checksum database|verifying .*: .*dial|SECURITY ERROR/i.test(result.output)
  ) {
    log('durable-tools: the Go checksum database is unreachable; retrying the build with GOSUMDB=off.');
    result = await runGo(go, ['install', target], { ...env, GOBIN: staging, GOSUMDB: 'off' });
  }
  if (result.code !== 0) {
    rmSync(staging, { recursive: true, force: true });
    throw new TemporalCliError(
      `Building the Temporal CLI failed (go install ${target}, exit ${result.code}):\n${result.output.trim().split('\n').slice(-15).join('\n')}`,
      'BUILD_FAILED',
    );
  }
  mkdirSync(cacheDir, { recursive: true });
  renameSync(join(staging, 'temporal'), join(cacheDir, 'temporal'));
  rmSync(staging, { recursive: true, force: true });
  log(`durable-tools: Temporal CLI built in ${Math.round((Date.now() - started) / 1000)} s.`);
}

function runGo(go: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(go, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (cause) =>
      reject(new TemporalCliError(`Could not run ${go}: ${cause.message}`, 'BUILD_FAILED', { cause })),
    );
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

function findOnPath(command: string, pathVariable: string): string | undefined {
  for (const dir of pathVariable.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, command);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
