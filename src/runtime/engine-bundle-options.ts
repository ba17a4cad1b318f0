import type { BundleOptions } from '@temporalio/worker';
import { withSandboxGlobals } from './sandbox-globals';
import { sharedWorkflowModulePaths } from './shared-workflow-modules';

/**
 * How the engine's workflows are bundled, wherever they are (`createWorker`, its bundle cache, the replayer,
 * the tests and benches): their pure modules shared by every run (shared-workflow-modules.ts) and the sandbox's
 * globals read once (sandbox-globals.ts). For `bundleWorkflowCode({ workflowsPath, ...engineBundleOptions() })`
 * or a worker's `bundlerOptions`. Both modules live in the package's sources, so a change of either changes
 * the bundle cache's key (workflow-bundle-cache.ts).
 */
export function engineBundleOptions(): Required<Pick<BundleOptions, 'preloadModules' | 'webpackConfigHook'>> {
  return { preloadModules: sharedWorkflowModulePaths(), webpackConfigHook: withSandboxGlobals };
}
