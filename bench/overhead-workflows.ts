/**
 * Workflows of the tool-call overhead benchmark: the same loop of activity calls, either through the
 * durable-tools wrapper (activity `noop`, a tool) or to a bare activity doing nothing (`bareNoop`).
 */
import { scheduleActivity, workflowInfo } from '@temporalio/workflow';

/** Which activity a loop calls. */
export type OverheadMode = 'tool' | 'bare';

const OPTIONS = { startToCloseTimeout: '10 seconds', retry: { maximumAttempts: 3 } } as const;

function call(mode: OverheadMode, i: number): Promise<unknown> {
  if (mode === 'bare') return scheduleActivity('bareNoop', [{ n: i }], OPTIONS);
  return scheduleActivity(
    'noop',
    [{ arguments: { n: i }, idempotencyKey: `${workflowInfo().workflowId}/${i}`, stepId: i }],
    { ...OPTIONS, summary: `noop {"n":${i}}` },
  );
}

/** Calls the activity `count` times, one after another. */
export async function sequentialCalls(mode: OverheadMode, count: number): Promise<void> {
  for (let i = 1; i <= count; i++) await call(mode, i);
}

/** Calls the activity `count` times, `concurrency` at a time. */
export async function concurrentCalls(mode: OverheadMode, count: number, concurrency: number): Promise<void> {
  for (let start = 1; start <= count; start += concurrency) {
    const batch: Promise<unknown>[] = [];
    for (let i = start; i < Math.min(start + concurrency, count + 1); i++) batch.push(call(mode, i));
    await Promise.all(batch);
  }
}
