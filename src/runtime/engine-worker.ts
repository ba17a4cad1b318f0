import type { Logger } from '@temporalio/common';
import { Worker, type CompiledWorkerOptions } from '@temporalio/worker';
import type { WorkflowCreator } from '@temporalio/worker/lib/workflow/interface';
import type { WorkflowBundleWithSourceMapAndFilename } from '@temporalio/worker/lib/workflow/workflow-worker-thread/input';

/** The tuned `isolateExecutionTimeout` (worker-tuning.ts) in ms: the largest Node accepts, the detector off. */
export const DEADLOCK_DETECTOR_OFF_MS = 2 ** 32 - 1;

/**
 * The compiled worker options the workflow sandbox is created with: with the deadlock detector off
 * (`isolateExecutionTimeout` of {@link DEADLOCK_DETECTOR_OFF_MS}, the tuned default), no timeout at all.
 *
 * The SDK enters the sandbox with `vm.runInContext(..., { timeout })` several times per activation, and Node
 * starts a watchdog thread for each call that has a timeout: ~75 µs each here against ~4 µs without (about a
 * fifth of the workflow thread's time on the fast path, docs/benchmarks.md). A timeout of ~49.7 days detects
 * nothing, so it is left out; any shorter one (the detector brought back) is kept as given.
 */
export function sandboxOptions(options: CompiledWorkerOptions): CompiledWorkerOptions {
  if (options.isolateExecutionTimeoutMs < DEADLOCK_DETECTOR_OFF_MS) return options;
  // The SDK passes it on to `vm.runInContext` only, where undefined means no watchdog.
  return { ...options, isolateExecutionTimeoutMs: undefined as unknown as number };
}

/**
 * Temporal's Worker, whose workflow sandbox runs without Node's vm watchdog when the deadlock detector is off
 * ({@link sandboxOptions}). Everything else is the SDK's own.
 */
export class EngineWorker extends Worker {
  protected static override async createWorkflowCreator(
    workflowBundle: WorkflowBundleWithSourceMapAndFilename,
    compiledOptions: CompiledWorkerOptions,
    logger: Logger,
  ): Promise<WorkflowCreator> {
    return await super.createWorkflowCreator(workflowBundle, sandboxOptions(compiledOptions), logger);
  }
}
