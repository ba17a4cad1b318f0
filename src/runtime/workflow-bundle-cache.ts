import { bundleWorkflowCode, type BundleOptions } from '@temporalio/worker';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** Options of {@link cachedWorkflowBundle}: what goes into the bundle, and where bundles are kept. */
export interface WorkflowBundleCacheOptions {
  /** The workflows module (as for `Worker.create({ workflowsPath })`). */
  workflowsPath: string;
  /** Workflow interceptor modules bundled with it (e.g. the tracing ones). */
  workflowInterceptorModules?: readonly string[];
  payloadConverterPath?: string;
  failureConverterPath?: string;
  /** Modules every run of the worker shares (`preloadModules`; the engine's: shared-workflow-modules.ts). */
  preloadModules?: readonly string[];
  /** Changes webpack's configuration (the engine's: sandbox-globals.ts); its source is part of the key. */
  webpackConfigHook?: BundleOptions['webpackConfigHook'];
  /** Directory of the cached bundles (default {@link workflowBundleCacheDir}). */
  cacheDir?: string;
}

/**
 * Directory of cached workflow bundles: `$DURABLE_TOOLS_CACHE_DIR` or `$XDG_CACHE_HOME/durable-tools` or
 * `~/.cache/durable-tools` (where the Temporal CLI build is cached too), then `workflow-bundles`.
 */
export function workflowBundleCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const root = env.DURABLE_TOOLS_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'durable-tools');
  return join(root, 'workflow-bundles');
}

const SOURCE_FILE = /\.(ts|js|cjs|mjs|json)$/;

/**
 * The cache key of a bundle: a SHA-256 of every source file of the package the workflows module lives in
 * (its `src` or `dist` directory, all files, so any module the workflows import is covered), the interceptor
 * and converter modules, the modules shared by every run and the webpack hook, the versions of the Temporal SDK packages that build and run it, and the state of the
 * installed packages (`node_modules/.package-lock.json`, rewritten by every install).
 */
export function workflowBundleKey(options: WorkflowBundleCacheOptions): string {
  const hash = createHash('sha256');
  const add = (label: string, value: string | Buffer): void => {
    hash.update(`${label}\0`);
    hash.update(value);
    hash.update('\0');
  };
  const sourceRoot = dirname(dirname(require.resolve(options.workflowsPath)));
  for (const file of listFiles(sourceRoot)) add(file.slice(sourceRoot.length), readFileSync(file));
  add('workflows', options.workflowsPath);
  for (const path of [
    ...(options.workflowInterceptorModules ?? []),
    options.payloadConverterPath,
    options.failureConverterPath,
  ]) {
    if (path === undefined) continue;
    add('module', path);
    const resolved = safeResolve(path);
    if (resolved) add('module-source', readFileSync(resolved));
  }
  for (const path of options.preloadModules ?? []) add('preload', path);
  if (options.webpackConfigHook) add('webpack-config-hook', String(options.webpackConfigHook));
  for (const pkg of ['@temporalio/workflow', '@temporalio/worker', '@temporalio/common']) {
    const manifest = safeResolve(`${pkg}/package.json`);
    add(pkg, manifest ? String((JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string }).version) : 'none');
  }
  const installed = installedPackagesStamp();
  if (installed) add('installed', installed);
  return hash.digest('hex').slice(0, 32);
}

/**
 * A workflow bundle for `Worker.create({ workflowBundle })`, built once per {@link workflowBundleKey} and kept
 * in {@link workflowBundleCacheDir}: a worker that starts again (after a crash, a deploy of the same code)
 * reads the file instead of bundling for seconds. Written to a temporary file and renamed, so a concurrent
 * start or a crash mid-write never leaves a partial bundle under the key.
 *
 * @example
 * ```ts
 * const workflowBundle = await cachedWorkflowBundle({ workflowsPath: require.resolve('./workflows') });
 * console.log(workflowBundle.codePath); // ~/.cache/durable-tools/workflow-bundles/<key>.js
 * ```
 */
export async function cachedWorkflowBundle(options: WorkflowBundleCacheOptions): Promise<{ codePath: string }> {
  const dir = options.cacheDir ?? workflowBundleCacheDir();
  const codePath = join(dir, `${workflowBundleKey(options)}.js`);
  if (existsSync(codePath)) return { codePath };
  const { code } = await bundleWorkflowCode({
    workflowsPath: options.workflowsPath,
    ...(options.workflowInterceptorModules
      ? { workflowInterceptorModules: [...options.workflowInterceptorModules] }
      : {}),
    ...(options.payloadConverterPath ? { payloadConverterPath: options.payloadConverterPath } : {}),
    ...(options.failureConverterPath ? { failureConverterPath: options.failureConverterPath } : {}),
    ...(options.preloadModules?.length ? { preloadModules: [...options.preloadModules] } : {}),
    ...(options.webpackConfigHook ? { webpackConfigHook: options.webpackConfigHook } : {}),
    logger: SILENT_BUNDLER_LOGGER,
  });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const partial = `${codePath}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(partial, code, { mode: 0o600 });
  renameSync(partial, codePath);
  return { codePath };
}

const SILENT_BUNDLER_LOGGER = {
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error: (message: string, meta?: unknown) => console.error(message, meta ?? ''),
  log() {},
} as never;

function listFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') files.push(...listFiles(path));
    } else if (SOURCE_FILE.test(entry.name)) {
      files.push(path);
    }
  }
  return files;
}

function safeResolve(path: string): string | undefined {
  try {
    return require.resolve(path);
  } catch {
    return undefined;
  }
}

function installedPackagesStamp(): string | undefined {
  const manifest = safeResolve('@temporalio/workflow/package.json');
  if (!manifest) return undefined;
  // <node_modules>/@temporalio/workflow/package.json → <node_modules>/.package-lock.json
  const lock = join(dirname(dirname(dirname(manifest))), '.package-lock.json');
  try {
    const { size, mtimeMs } = statSync(lock);
    return `${size}/${mtimeMs}`;
  } catch {
    return undefined;
  }
}
