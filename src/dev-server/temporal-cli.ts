import { mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { buildStaged, durableToolsCacheRoot, findGo, findOnPath, goBuild, isExecutable } from './go-build';
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
  return join(durableToolsCacheRoot(env), `temporal-${TEMPORAL_CLI.version}`);
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

  const onPath = findOnPath('temporal', env);
  if (onPath) return { path: onPath, source: 'PATH' };

  const cached = join(temporalCliCacheDir(env), 'temporal');
  if (isExecutable(cached)) return { path: cached, source: 'cache' };

  if (options.build === false) {
    throw notFound();
  }
  const go = findGo(env);
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

/** Builds the CLI with `go install` into `cacheDir`, through a staging directory (see {@link buildStaged}). */
async function buildTemporalCli(
  go: string,
  cacheDir: string,
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Promise<void> {
  const fail = (message: string, cause?: Error) => new TemporalCliError(message, 'BUILD_FAILED', { cause });
  await buildStaged(cacheDir, { what: `the Temporal CLI v${TEMPORAL_CLI.version}`, log }, async (staging) => {
    const target = `${TEMPORAL_CLI.module}@v${TEMPORAL_CLI.version}`;
    await goBuild(go, ['install', target], { env: { ...env, GOBIN: staging }, fail, what: 'the Temporal CLI', log });
    mkdirSync(cacheDir, { recursive: true });
    renameSync(join(staging, 'temporal'), join(cacheDir, 'temporal'));
  });
}
