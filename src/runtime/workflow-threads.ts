import type { Logger } from '@temporalio/common';
import type { CompiledWorkerOptions } from '@temporalio/worker';
import type { WorkflowCreator } from '@temporalio/worker/lib/workflow/interface';
import type { WorkflowBundleWithSourceMapAndFilename } from '@temporalio/worker/lib/workflow/workflow-worker-thread/input';
import { createRequire } from 'node:module';
import { Worker as NodeWorker } from 'node:worker_threads';

type ThreadedVm = typeof import('@temporalio/worker/lib/workflow/threaded-vm');

/** The SDK's own modules, resolved from `@temporalio/worker` (the very files its worker loads). */
const fromTemporalWorker = createRequire(require.resolve('@temporalio/worker'));

/** Why a workflow thread would not start if a Temporal SDK other than the one this engine pins changed its internals. */
const SDK_CHANGED =
  "durable-tools: @temporalio/worker's workflow thread no longer has globalHandlers.setPromiseHook " +
  "(lib/workflow/vm-shared.js); createWorker({ workflowStackTraces: true }) uses the SDK's threads as they are.";

/**
 * The script each workflow thread starts with: the SDK's thread (`workflow-worker-thread.js`), after its shared
 * sandbox handlers are told to install no promise hook. The SDK's hook captures and formats a stack trace for
 * every promise a workflow creates, for the `__stack_trace` query only (a `Function` compiled per promise, then
 * the trace through the bundle's source map: ~12% of a 10-step fast-path run, docs/benchmarks.md, "Stack traces
 * of workflow promises"). Without it the SDK's sandbox says so itself: `stackTracesEnabled` is false and the
 * query answers "Workflow stack traces are not enabled on this worker". Error stack traces keep their source
 * map (`Error.prepareStackTrace` is installed as before).
 */
export function workflowThreadScript(): string {
  const vmShared = fromTemporalWorker.resolve('./workflow/vm-shared');
  const thread = fromTemporalWorker.resolve('./workflow/workflow-worker-thread');
  return [
    `const { globalHandlers } = require(${JSON.stringify(vmShared)});`,
    "if (typeof globalHandlers?.setPromiseHook !== 'function') {",
    `  throw new Error(${JSON.stringify(SDK_CHANGED)});`,
    '}',
    'globalHandlers.setPromiseHook = function setNoPromiseHook() {};',
    `require(${JSON.stringify(thread)});`,
  ].join('\n');
}

/**
 * The SDK's threaded workflow creator (`ThreadedVMWorkflowCreator.create`, the same steps and messages), with
 * each thread started from {@link workflowThreadScript}.
 */
export async function createWorkflowThreads(
  workflowBundle: WorkflowBundleWithSourceMapAndFilename,
  options: CompiledWorkerOptions,
  logger: Logger,
): Promise<WorkflowCreator> {
  const { ThreadedVMWorkflowCreator, WorkerThreadClient } = fromTemporalWorker('./workflow/threaded-vm') as ThreadedVm;
  const script = workflowThreadScript();
  const clients = Array.from(
    { length: options.workflowThreadPoolSize },
    () => new WorkerThreadClient(new NodeWorker(script, { eval: true }), logger, options.patchActivationCallback),
  );
  await Promise.all(
    clients.map((client) =>
      client.send({
        type: 'init',
        workflowBundle,
        isolateExecutionTimeoutMs: options.isolateExecutionTimeoutMs,
        reuseV8Context: options.reuseV8Context ?? true,
        registeredActivityNames: new Set(options.activities.keys()),
        hasPatchActivationCallback: options.patchActivationCallback !== undefined,
      }),
    ),
  );
  return new ThreadedVMWorkflowCreator(clients);
}
