import { getHeapStatistics } from 'node:v8';
import type { WorkerOptions } from '@temporalio/worker';

/**
 * Worker settings sized for many concurrent agent runs (`createWorker` uses them unless `workerOptions`
 * says otherwise). Measured with `npm run bench:throughput`; see the README, "Worker sizing".
 *
 * - `maxCachedWorkflows`: a run evicted from the cache replays its whole history on its next task (about x6
 *   per step measured with the cache off), so the cache must hold every run in flight on this worker. At
 *   least {@link WORKER_TUNING.minCachedWorkflows}, more when the heap allows (the SDK's own formula: ~600 per
 *   GiB of heap above 200 MiB). A cached agent run holds its state and step records: tens of KiB.
 * - `maxConcurrentActivityTaskExecutions`: tool calls wait on the network, not on this CPU: 200 slots.
 * - `maxConcurrentLocalActivityExecutions`: read-only tools declared `execution: 'local'` run here: 200.
 * - `maxConcurrentWorkflowTaskExecutions`: workflow tasks are CPU work; the SDK's 40 already exceeds the cores.
 */
export const WORKER_TUNING = {
  minCachedWorkflows: 1_000,
  maxConcurrentActivityTaskExecutions: 200,
  maxConcurrentLocalActivityExecutions: 200,
  maxConcurrentWorkflowTaskExecutions: 40,
} as const;

/** The worker options {@link WORKER_TUNING} describes, for this process's heap. */
export function tunedWorkerOptions(): Pick<
  WorkerOptions,
  | 'maxCachedWorkflows'
  | 'maxConcurrentActivityTaskExecutions'
  | 'maxConcurrentLocalActivityExecutions'
  | 'maxConcurrentWorkflowTaskExecutions'
> {
  const heapMiB = getHeapStatistics().heap_size_limit / 1024 / 1024;
  const sdkDefault = Math.floor((Math.max(heapMiB - 200, 0) * 600) / 1024);
  return {
    maxCachedWorkflows: Math.max(WORKER_TUNING.minCachedWorkflows, sdkDefault),
    maxConcurrentActivityTaskExecutions: WORKER_TUNING.maxConcurrentActivityTaskExecutions,
    maxConcurrentLocalActivityExecutions: WORKER_TUNING.maxConcurrentLocalActivityExecutions,
    maxConcurrentWorkflowTaskExecutions: WORKER_TUNING.maxConcurrentWorkflowTaskExecutions,
  };
}
