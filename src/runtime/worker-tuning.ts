import { getHeapStatistics } from 'node:v8';
import type { Duration } from '@temporalio/common';
import type { WorkerOptions } from '@temporalio/worker';

/**
 * Worker settings sized for many concurrent agent runs (`createWorker` uses them unless `workerOptions`
 * says otherwise). Measured with `npm run bench:throughput`; see docs/operations.md, "Worker sizing".
 *
 * - `maxCachedWorkflows`: a run evicted from the cache replays its whole history on its next task (about x6
 *   per step measured with the cache off), so the cache must hold every run in flight on this worker. At
 *   least {@link WORKER_TUNING.minCachedWorkflows}, more when the heap allows (the SDK's own formula: ~600 per
 *   GiB of heap above 200 MiB). A cached agent run holds its state and step records: tens of KiB.
 * - `maxConcurrentActivityTaskExecutions`, `maxConcurrentLocalActivityExecutions`: model and tool calls wait on
 *   the network, not on this CPU: one slot of each per run the cache holds (`maxCachedWorkflows`), so that every
 *   run in flight can wait on its model at once (`npm run bench:scale`).
 * - `maxConcurrentWorkflowTaskExecutions`: as many as the cache holds (the SDK's upper bound). A fast-path run
 *   keeps its workflow task, and the task's slot, open while its model turn runs as a local activity: with the
 *   SDK's 40, 40 runs waiting on their models took every slot, and every other run's task — a new run's first —
 *   waited on the server (`bench:scale`, 200 runs of 0.5–3 s turns: p99 113 s added per turn). A slot costs
 *   nothing while its task waits. The cost: a worker whose CPU cannot keep up takes more tasks than it finishes
 *   within their timeout, and the runs replay (docs/benchmarks.md, `bench:scale`); give it the cores it needs, or
 *   `workerOptions: { maxConcurrentWorkflowTaskExecutions }`.
 * - `isolateExecutionTimeout`: the SDK's workflow deadlock detector (default 5 s) is switched off, because it
 *   kills the worker process after a pause (docs/pauses.md). The SDK runs each activation in
 *   `vm.runInContext` with this wall-clock timeout; a process stopped (SIGSTOP, a frozen container, a
 *   starved or migrated VM) during an activation for longer than it finds the timeout expired when it
 *   resumes, V8 terminates the activation inside a promise reaction, and Node's async-hook stack is left
 *   corrupted: the worker dies (`async hook stack has become corrupted`), taking every run and tool call it
 *   held with it. The same happens when the detector fires for a real deadlock, so it never was a
 *   recoverable error. The cost: workflow code stuck in a synchronous loop would block the workflow thread
 *   instead of failing its task; the workflows here are the engine's own (no user code runs in them).
 *   `workerOptions.isolateExecutionTimeout` brings the detector back.
 * - `stickyQueueScheduleToStartTimeout`: 2 s instead of the SDK's 10 s, for recovery after a crash (below).
 */
export const WORKER_TUNING = {
  minCachedWorkflows: 1_000,
  /** The largest timeout Node's vm accepts (2^32 - 1 ms, ~49.7 days): the SDK's own value in `debugMode`. */
  isolateExecutionTimeout: '4294967295 ms',
  /**
   * How long a workflow task waits on a worker's sticky queue before the server gives it to any worker of the
   * task queue (the SDK's default: 10 s). After a worker is SIGKILLed its runs' next tasks wait this long for
   * the dead worker; 2 s lets a restarted or another worker go on quickly. The cost: a worker that is too busy
   * to take a task from its sticky queue within 2 s sees it go to the normal queue, and the run replays its
   * history on the worker that takes it.
   */
  stickyQueueScheduleToStartTimeout: '2 seconds',
} as const;

/**
 * The workflow deadlock timeout: an option Temporal's Worker reads (`WorkerOptionsWithDefaults`) but does not
 * declare in `WorkerOptions` ("not exposed at the moment"); see {@link WORKER_TUNING}.
 */
export interface DeadlockTimeoutOption {
  /** How long one call into the workflow sandbox may take, wall clock (the SDK's default: 5 s). */
  isolateExecutionTimeout?: Duration;
}

/** The worker options {@link WORKER_TUNING} describes, for this process's heap. */
export function tunedWorkerOptions(): Pick<
  WorkerOptions,
  | 'maxCachedWorkflows'
  | 'maxConcurrentActivityTaskExecutions'
  | 'maxConcurrentLocalActivityExecutions'
  | 'maxConcurrentWorkflowTaskExecutions'
  | 'stickyQueueScheduleToStartTimeout'
> &
  Required<DeadlockTimeoutOption> {
  const heapMiB = getHeapStatistics().heap_size_limit / 1024 / 1024;
  const sdkDefault = Math.floor((Math.max(heapMiB - 200, 0) * 600) / 1024);
  const cached = Math.max(WORKER_TUNING.minCachedWorkflows, sdkDefault);
  return {
    maxCachedWorkflows: cached,
    maxConcurrentActivityTaskExecutions: cached,
    maxConcurrentLocalActivityExecutions: cached,
    maxConcurrentWorkflowTaskExecutions: cached,
    isolateExecutionTimeout: WORKER_TUNING.isolateExecutionTimeout,
    stickyQueueScheduleToStartTimeout: WORKER_TUNING.stickyQueueScheduleToStartTimeout,
  };
}
