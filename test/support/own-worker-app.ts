/**
 * Apps with their own Temporal worker and workflows on the packed durable-tools, one per supported
 * `@temporalio/*` version (test/integration/own-worker-package.test.ts).
 *
 * - {@link supportedTemporalVersions}: the lowest and the highest version of the package's peer range (at which
 *   every pinned package is published).
 * - {@link packForApps}: `npm pack` once (it builds through `prepack`).
 * - {@link installOwnWorkerApp}: a fresh app (`npm init -y`) that installs the tarball with
 *   `@temporalio/{client,worker,workflow,activity,common,plugin}` and the package's other `@temporalio` peers
 *   pinned at one version, zod, TypeScript and Node's types from the registry, like a team adding the package to
 *   its app would; the app's files are copied
 *   from test/fixtures/own-worker-app and its tsconfig.json is the one docs/quickstart.md shows. The first app
 *   installs everything (npm compiles better-sqlite3 when no prebuilt binary can be downloaded: minutes); the
 *   app of another version starts as a copy of it and changes its Temporal pins with `npm install`, as a team
 *   moving to another SDK version would, so the native build is done once per test run.
 * - {@link compileApp}, {@link startAppWorker} (spawn, SIGKILL, stop), {@link runAppCli} (the app's installed
 *   `durable-tools`), {@link temporalPackagesOf} (every copy of an `@temporalio` package in the app).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { codeBlocks, packInto, REPO } from './packed-app';
import { testServer } from './temporal-test-env';

/** The `@temporalio` packages an app with its own worker uses directly (pinned at one version). */
export const APP_TEMPORAL_PACKAGES = ['client', 'worker', 'workflow', 'activity', 'common', 'plugin'] as const;

/** The package's peer dependencies (package.json). */
function peerDependencies(): Record<string, string> {
  const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
    peerDependencies?: Record<string, string>;
  };
  return pkg.peerDependencies ?? {};
}

/**
 * What an app pins at one version: the `@temporalio` packages it uses directly and every `@temporalio` peer
 * dependency of the package (npm would otherwise install the newest version of a peer the app does not name).
 */
export function pinnedTemporalPackages(): string[] {
  const peers = Object.keys(peerDependencies()).filter((name) => name.startsWith('@temporalio/'));
  return [...new Set([...APP_TEMPORAL_PACKAGES.map((name) => `@temporalio/${name}`), ...peers])].sort();
}

/** The app's sources: tools, workflows and worker (test/fixtures/own-worker-app). */
export const APP_SOURCES = join(REPO, 'test', 'fixtures', 'own-worker-app');

/** The line the app's worker prints once it polls. */
export const APP_WORKER_READY = 'app worker ready';

/**
 * The `@temporalio/*` versions the package supports, as the package test pins them: the lowest and the highest
 * version of the `@temporalio/worker` peer range in package.json at which every package of
 * {@link pinnedTemporalPackages} is published (asked of the registry: not every package has every patch). The
 * variable `DT_PACKAGE_TEMPORAL_VERSIONS` (comma-separated) replaces them, e.g. to try one version locally.
 */
export function supportedTemporalVersions(): string[] {
  const chosen = process.env.DT_PACKAGE_TEMPORAL_VERSIONS?.split(',')
    .map((version) => version.trim())
    .filter(Boolean);
  if (chosen?.length) return chosen;
  const range = peerDependencies()['@temporalio/worker'];
  if (!range) {
    throw new Error('package.json declares no peerDependencies["@temporalio/worker"]: no supported range to pin.');
  }
  const published = pinnedTemporalPackages().map((name) => new Set(publishedVersions(name, range)));
  const versions = [...published[0]!].filter((version) => published.every((set) => set.has(version)));
  if (versions.length === 0) throw new Error(`No version in ${range} has every one of ${pinnedTemporalPackages()}.`);
  versions.sort(compareVersions);
  return [...new Set([versions[0]!, versions[versions.length - 1]!])];
}

/** The published versions (no prereleases) of `name` within `range`. */
function publishedVersions(name: string, range: string): string[] {
  const answer = JSON.parse(
    execFileSync('npm', ['view', `${name}@${range}`, 'version', '--json'], { encoding: 'utf8' }),
  ) as string | string[];
  return (Array.isArray(answer) ? answer : [answer]).filter((version) => /^\d+\.\d+\.\d+$/.test(version));
}

function compareVersions(a: string, b: string): number {
  const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return 0;
}

/** The packed package: where apps are made, and the tarball they install. */
export interface PackedForApps {
  /** The temporary directory holding the tarball and every app (remove it when done). */
  root: string;
  tarball: string;
  /** The app each version got, by version. */
  apps: Map<string, string>;
}

/** `npm pack` of the repository (building it) into a new temporary directory. */
export function packForApps(): PackedForApps {
  const root = mkdtempSync(join(tmpdir(), 'durable-tools-own-worker-'));
  return { root, tarball: packInto(root), apps: new Map() };
}

const NPM_FLAGS = ['--save-exact', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];

/** `<name>@<version>` for every package of {@link pinnedTemporalPackages}. */
function temporalSpecs(version: string): string[] {
  return pinnedTemporalPackages().map((name) => `${name}@${version}`);
}

/**
 * An app (in `packed.root`) with the tarball installed and `@temporalio/*` pinned at `version`, its sources
 * and tsconfig.json written (not compiled). Made once per version; the first app installs from scratch, the
 * others start as a copy of it and re-pin Temporal.
 */
export function installOwnWorkerApp(packed: PackedForApps, version: string): string {
  const made = packed.apps.get(version);
  if (made) return made;
  const dir = join(packed.root, `app-temporal-${version}`);
  const [first] = packed.apps.values();
  const npm = (args: string[]) => execFileSync('npm', args, { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  if (first) {
    // Not the first app's build or state (.data): only what npm installed.
    const skipped = new Set([join(first, 'out'), join(first, '.data')]);
    cpSync(first, dir, { recursive: true, verbatimSymlinks: true, filter: (source) => !skipped.has(source) });
    npm(['install', ...temporalSpecs(version), ...NPM_FLAGS]);
  } else {
    mkdirSync(dir);
    npm(['init', '-y']);
    npm([
      'install',
      relative(dir, packed.tarball),
      ...temporalSpecs(version),
      'zod@4',
      'typescript@5.9',
      '@types/node@20',
      ...NPM_FLAGS,
    ]);
  }
  for (const file of readdirSync(APP_SOURCES)) cpSync(join(APP_SOURCES, file), join(dir, file));
  writeFileSync(join(dir, 'tsconfig.json'), quickstartTsconfig());
  packed.apps.set(version, dir);
  return dir;
}

/** The tsconfig.json docs/quickstart.md shows (its first `json` block). */
function quickstartTsconfig(): string {
  const tsconfig = codeBlocks(readFileSync(join(REPO, 'docs', 'quickstart.md'), 'utf8'), 'json')[0];
  if (!tsconfig) throw new Error('docs/quickstart.md has no tsconfig.json block');
  return tsconfig;
}

/** Compiles the app with its own TypeScript (`tsc -p .` into `out/`): what tsc printed, and its exit status. */
export function compileApp(dir: string): Promise<{ output: string; status: number | null }> {
  const tsc = spawn(process.execPath, [join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], { cwd: dir });
  let output = '';
  tsc.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  tsc.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => tsc.once('close', (status) => resolve({ output, status })));
}

/** One copy of an `@temporalio` package found in an app: its path (relative to the app) and version. */
export interface FoundPackage {
  path: string;
  version: string;
}

/** Every copy of every `@temporalio/*` package under the app's `node_modules`, nested ones included. */
export function temporalPackagesOf(dir: string): FoundPackage[] {
  const found: FoundPackage[] = [];
  const visit = (modules: string): void => {
    if (!existsSync(modules)) return;
    for (const entry of readdirSync(modules)) {
      if (entry.startsWith('.')) continue;
      const packages = entry.startsWith('@') ? readdirSync(join(modules, entry)).map((n) => join(entry, n)) : [entry];
      for (const name of packages) {
        const path = join(modules, name);
        if (entry === '@temporalio') {
          const { version } = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) as { version: string };
          found.push({ path: relative(dir, path), version });
        }
        visit(join(path, 'node_modules'));
      }
    }
  };
  visit(join(dir, 'node_modules'));
  return found;
}

/** The environment of the app's programs: the test server, the app's task queue and the ledger. */
export function appEnv(settings: { taskQueue: string; ledgerUrl: string }): NodeJS.ProcessEnv {
  return {
    ...process.env,
    TEMPORAL_ADDRESS: testServer().address,
    TEMPORAL_NAMESPACE: testServer().namespace,
    TEMPORAL_CONFIG_FILE: join(tmpdir(), 'durable-tools-no-temporal.toml'),
    APP_TASK_QUEUE: settings.taskQueue,
    APP_LEDGER_URL: settings.ledgerUrl,
    NODE_OPTIONS: '',
  };
}

/** The app's worker process (`node out/worker.js` in the app). */
export interface AppWorker {
  child: ChildProcess;
  /** Everything it printed so far. */
  output(): string;
  /** SIGKILL, resolved once it exited. */
  kill(): Promise<void>;
  /** SIGTERM (a worker's graceful shutdown), resolved once it exited. */
  stop(): Promise<void>;
}

/** Starts the app's compiled worker; resolves once it prints {@link APP_WORKER_READY}, rejects if it exits first. */
export async function startAppWorker(dir: string, env: NodeJS.ProcessEnv): Promise<AppWorker> {
  const child = spawn(process.execPath, [join(dir, 'out', 'worker.js')], {
    cwd: dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Ready once it says so; an exit before that (a bundle that does not build, a bad option) is the failure.
  const ready = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(APP_WORKER_READY)) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code, signal) => reject(new Error(`the app worker exited (${code ?? signal}):\n${output}`)));
    child.once('error', reject);
  });
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  const worker: AppWorker = { child, output: () => output, kill: () => end('SIGKILL'), stop: () => end('SIGTERM') };
  await ready;
  return worker;
}

/** Runs the app's installed `durable-tools` (node_modules/.bin) with plain node in the app, to its end. */
export function runAppCli(
  dir: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cli = spawn(process.execPath, [join(dir, 'node_modules', '.bin', 'durable-tools'), ...args], {
    cwd: dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  cli.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  cli.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => cli.once('close', (code) => resolve({ code, stdout, stderr })));
}
