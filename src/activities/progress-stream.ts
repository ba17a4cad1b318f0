/** Progress of a running tool call, streamed live to the run's readers besides the heartbeat (docs/streaming.md). */
import type { Context } from '@temporalio/activity';
import type { ToolProgress } from '../contract/tool-progress';
import type { StreamStore } from '../stores/streams/stream-store';

/**
 * Appends a `tool-progress` event to the run's stream, without waiting: progress is best effort, and a failing
 * store is logged, never thrown at the tool. Runs without a run-scoped key (`workflowId/firstRunId`) stream nothing.
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
  streams
    .append(runKey, [
      {
        type: 'tool-progress',
        workflowId: execution?.workflowId ?? runKey.split('/')[0]!,
        runId: execution?.runId ?? '',
        stepId,
        tool,
        percent: progress.percent,
        ...(progress.message !== undefined ? { message: progress.message } : {}),
      },
    ])
    .catch((error: unknown) =>
      activity.log.warn('A progress report was not streamed: the stream store failed.', {
        error: (error as Error)?.message,
      }),
    );
}
