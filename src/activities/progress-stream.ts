/** Progress of a running tool call, streamed live to the run's readers besides the heartbeat (docs/streaming.md). */
import type { Context } from '@temporalio/activity';
import type { ToolProgress } from '../contract/tool-progress';
import type { StreamStore } from '../stores/streams/stream-store';

/** The last append of each stream, so the reports of one run reach the store in the order they were made. */
const lastAppend = new Map<string, Promise<unknown>>();

/**
 * Appends a `tool-progress` event to the run's stream, without making the tool wait (after the run's previous
 * report): progress is best effort, and a failing store is logged, never thrown at the tool. Runs without a
 * run-scoped key (`workflowId/firstRunId`) stream nothing.
 */
export function publishProgress(
  streams: StreamStore,
  runKey: string,
  stepId: number,
  tool: string,
  progress: ToolProgress | undefined,
  activity: Context,
): void {
  if (!progress || !runKey.includes('/')) return;
  const execution = activity.info.workflowExecution;
  const append = (): Promise<unknown> =>
    streams.append(runKey, [
      {
        type: 'tool-progress',
        workflowId: execution?.workflowId ?? runKey.split('/')[0]!,
        runId: execution?.runId ?? '',
        stepId,
        tool,
        percent: progress.percent,
        ...(progress.message !== undefined ? { message: progress.message } : {}),
      },
    ]);
  const previous = lastAppend.get(runKey) ?? Promise.resolve();
  const next = previous
    .then(append)
    .catch((error: unknown) =>
      activity.log.warn('A progress report was not streamed: the stream store failed.', {
        error: (error as Error)?.message,
      }),
    )
    .finally(() => {
      if (lastAppend.get(runKey) === next) lastAppend.delete(runKey);
    });
  lastAppend.set(runKey, next);
}
