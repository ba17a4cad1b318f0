import { cpSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { TemporalClusterError } from './cluster-error';
import { buildStaged, durableToolsCacheRoot, findGo, goBuild, isExecutable, runGo } from './go-build';

/**
 * The Temporal server we build: the `go.temporal.io/server` version the Temporal CLI v1.5.1 embeds (its go.mod),
 * so the cluster runs the same server code as the dev server the tests use.
 */
export const TEMPORAL_SERVER = {
  version: '1.29.1',
  module: 'go.temporal.io/server',
  /** The server's main package: frontend, history, matching and worker services, chosen with `--service`. */
  serverPackage: 'go.temporal.io/server/cmd/server',
  /** Temporal's SQL schema tool (`temporal-sql-tool`). */
  sqlToolPackage: 'go.temporal.io/server/cmd/tools/sql',
  /** The PostgreSQL schema directories inside the module, copied next to the binaries. */
  schemaDir: 'schema/postgresql/v12',
} as const;

/** The built server, schema tool and schema files, ready to run. */
export interface TemporalServerInstall {
  /** The server executable (`temporal-server`). */
  serverPath: string;
  /** The schema tool (`temporal-sql-tool`). */
  sqlToolPath: string;
  /** The PostgreSQL v12 schema directory, with `temporal/versioned` and `visibility/versioned`. */
  schemaDir: string;
  /** `cache` (built before) or `built` (just now). */
  source: 'cache' | 'built';
}

/** Options of {@link resolveTemporalServer}. */
export interface ResolveTemporalServerOptions {
  /** Environment to read (defaults to `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Build with Go when the cache is empty (default true). */
  build?: boolean;
  /** One-line progress messages (default: stderr). */
  log?: (line: string) => void;
  /** How often a running build says it is still running (default 30 s). */
  progressIntervalMs?: number;
}

/**
 * Directory holding the cached server build for this version:
 * `$DURABLE_TOOLS_CACHE_DIR` or `$XDG_CACHE_HOME/durable-tools` or `~/.cache/durable-tools`, then
 * `temporal-server-<version>`.
 */
export function temporalServerCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(durableToolsCacheRoot(env), `temporal-server-${TEMPORAL_SERVER.version}`);
}

/**
 * Finds the cached Temporal server build, or builds it: `go install` of the server and of the SQL schema tool at
 * {@link TEMPORAL_SERVER}'s version into the cache directory (several minutes, once per machine, under `nice`),
 * with the module's PostgreSQL schema files copied beside them. Throws a {@link TemporalClusterError} saying what
 * to do when Go is missing or the build fails.
 *
 * @example
 * ```ts
 * const install = await resolveTemporalServer();
 * console.log(install.serverPath); // ~/.cache/durable-tools/temporal-server-1.29.1/temporal-server
 * ```
 */
export async function resolveTemporalServer(
  options: ResolveTemporalServerOptions = {},
): Promise<TemporalServerInstall> {
  const env = options.env ?? process.env;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const cached = findCachedTemporalServer(env);
  if (cached) return cached;
  const dir = temporalServerCacheDir(env);
  const go = findGo(env);
  if (options.build === false || !go) {
    throw new TemporalClusterError(
      `The Temporal server v${TEMPORAL_SERVER.version} is not built in ${dir}. ` +
        (go
          ? 'Run `npm run install-cluster` (a few minutes, once per machine).'
          : 'Install Go (https://go.dev/dl), then run `npm run install-cluster` (a few minutes, once per machine).'),
      'NOT_FOUND',
    );
  }
  await buildTemporalServer(go, dir, env, log, options.progressIntervalMs ?? 30_000);
  return { ...installIn(dir), source: 'built' };
}

/** The cached build of {@link TEMPORAL_SERVER}'s version, when it is complete; never builds. */
export function findCachedTemporalServer(env: NodeJS.ProcessEnv = process.env): TemporalServerInstall | undefined {
  const cached: TemporalServerInstall = { ...installIn(temporalServerCacheDir(env)), source: 'cache' };
  const complete = isExecutable(cached.serverPath) && isExecutable(cached.sqlToolPath) && existsSync(cached.schemaDir);
  return complete ? cached : undefined;
}

function installIn(dir: string): Omit<TemporalServerInstall, 'source'> {
  return {
    serverPath: join(dir, 'temporal-server'),
    sqlToolPath: join(dir, 'temporal-sql-tool'),
    schemaDir: join(dir, TEMPORAL_SERVER.schemaDir),
  };
}

/**
 * `go install` of the server and the schema tool, with the module's PostgreSQL schema files copied beside them,
 * through a staging directory renamed into place (see {@link buildStaged}).
 */
async function buildTemporalServer(
  go: string,
  dir: string,
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
  progressIntervalMs: number,
): Promise<void> {
  const version = `v${TEMPORAL_SERVER.version}`;
  const what = `the Temporal server ${version} and its SQL schema tool`;
  const fail = (message: string, cause?: Error) => new TemporalClusterError(message, 'BUILD_FAILED', { cause });
  await buildStaged(dir, { what, log, progressIntervalMs }, async (staging) => {
    const targets = [`${TEMPORAL_SERVER.serverPackage}@${version}`, `${TEMPORAL_SERVER.sqlToolPackage}@${version}`];
    const buildEnv = { ...env, GOBIN: join(staging, 'bin'), GOFLAGS: env.GOFLAGS ?? '-buildvcs=false' };
    mkdirSync(join(staging, 'bin'));
    await goBuild(go, ['install', ...targets], { env: buildEnv, nice: true, fail, what: 'the Temporal server', log });
    // The schema files come from the same module version, which `go install` just put in the module cache.
    const located = await runGo(go, ['mod', 'download', '-json', `${TEMPORAL_SERVER.module}@${version}`], {
      env: buildEnv,
      nice: true,
      fail,
    });
    const moduleDir = located.code === 0 ? (JSON.parse(located.stdout) as { Dir?: string }).Dir : undefined;
    if (!moduleDir || !existsSync(join(moduleDir, TEMPORAL_SERVER.schemaDir))) {
      throw new TemporalClusterError(
        `The schema files of ${TEMPORAL_SERVER.module}@${version} were not found in Go's module cache:\n${located.output.trim()}`,
        'BUILD_FAILED',
      );
    }
    cpSync(join(moduleDir, TEMPORAL_SERVER.schemaDir), join(staging, TEMPORAL_SERVER.schemaDir), { recursive: true });
    renameSync(join(staging, 'bin', 'server'), join(staging, 'temporal-server'));
    renameSync(join(staging, 'bin', 'sql'), join(staging, 'temporal-sql-tool'));
    rmSync(join(staging, 'bin'), { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
    renameSync(staging, dir);
  });
}
