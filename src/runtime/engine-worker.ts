import type { Logger } from '@temporalio/common';
import { Worker, type CompiledWorkerOptions } from '@temporalio/worker';
import type { WorkflowCreator } from '@temporalio/worker/lib/workflow/interface';
import type { WorkflowBundleWithSourceMapAndFilename } from '@temporalio/worker/lib/workflow/workflow-worker-thread/input';
import { createWorkflowThreads } from './workflow-threads';

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
 * ({@link sandboxOptions}), in workflow threads without the SDK's per-promise stack traces
 * (workflow-threads.ts; `createWorker`'s `workflowStackTraces` brings them back: {@link EngineWorkerWithStackTraces}).
 * Everything else is the SDK's own; in `debugMode` (no workflow threads) the SDK's sandbox as it is.
 */
export class EngineWorker extends Worker {
  /** Whether the workflow threads keep the SDK's per-promise stack traces (the `__stack_trace` query). */
  protected static readonly workflowStackTraces: boolean = false;

  protected static override async createWorkflowCreator(
    workflowBundle: WorkflowBundleWithSourceMapAndFilename,
    compiledOptions: CompiledWorkerOptions,
    logger: Logger,
  ): Promise<WorkflowCreator> {
    const options = sandboxOptions(compiledOptions);
    if (options.debugMode || this.workflowStackTraces) {
      return await super.createWorkflowCreator(workflowBundle, options, logger);
    }
    return await createWorkflowThreads(workflowBundle, options, logger);
  }
}

/** {@link EngineWorker} with the SDK's per-promise stack traces in its workflow threads (`workflowStackTraces`). */
export class EngineWorkerWithStackTraces extends EngineWorker {
  protected static override readonly workflowStackTraces: boolean = true;
}
