/**
 * What the bench harnesses (bench/chaos.ts, bench/chaos-cluster.ts, bench/limits.ts) read from their command line
 * and environment, and the workflow bundle they give their worker processes.
 */
import { bundleWorkflowCode } from '@temporalio/worker';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { engineBundleOptions } from '../src/runtime/engine-bundle-options';

/** A non-negative number from the environment variable `name`, or `fallback` when it is unset or empty. */
export function fromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got "${raw}".`);
  return value;
}

/** The value of `--<name> X` or `--<name>=X` among `args` (the last one given), or undefined. */
export function flag(args: readonly string[], name: string): string | undefined {
  let value: string | undefined;
  args.forEach((arg, i) => {
    if (arg === `--${name}`) value = args[i + 1];
    else if (arg.startsWith(`--${name}=`)) value = arg.slice(name.length + 3);
  });
  return value;
}

/** Bundles the engine's workflows once into `workDir/workflow-bundle.js`, for every worker process; its path. */
export async function writeWorkflowBundle(workDir: string): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../src/workflows'),
    ...engineBundleOptions(),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } as never,
  });
  const bundlePath = join(workDir, 'workflow-bundle.js');
  writeFileSync(bundlePath, code);
  return bundlePath;
}
