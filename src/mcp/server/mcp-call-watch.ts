import type { Client } from '@temporalio/client';
import { runningCalls } from '../../long-calls/live-progress';
import type { McpRequestLog } from './mcp-logging';
import { pollPause } from './mcp-poll-pause';

/** How often the server reads a running call's description while a client awaits its result. */
export const MCP_CALL_WATCH_POLL_MS = 1_000;

/**
 * Reports to the client what the server can see of a running call, until `signal` aborts: each retried attempt
 * (warning, with the classified error code of the attempt that failed) and each new progress report of the tool
 * (info, `ctx.progress`). Both come from the workflow's description (the tool activity's attempt, last failure and
 * heartbeat details), read every {@link MCP_CALL_WATCH_POLL_MS}; nothing is added to the workflow's history.
 * A description that cannot be read is skipped: watching never fails the call.
 */
export async function watchCall(
  client: Client,
  call: { workflowId: string; tool: string },
  log: McpRequestLog,
  signal: AbortSignal,
): Promise<void> {
  const { workflowId, tool } = call;
  let reportedAttempt = 1;
  let reportedProgressAt: string | undefined;
  while (!signal.aborted) {
    const running = await runningCalls(client, workflowId).catch(() => []);
    if (signal.aborted) return;
    for (const attempt of running.filter((r) => r.tool === tool)) {
      if (attempt.attempt > reportedAttempt) {
        reportedAttempt = attempt.attempt;
        const failed = attempt.attempt - 1;
        const code = attempt.lastFailureCode;
        log('warning', {
          event: 'call.retrying',
          message: `Attempt ${failed} of ${tool} failed${code ? ` (${code})` : ''}; Temporal runs attempt ${attempt.attempt}.`,
          tool,
          workflowId,
          attempt: failed,
          ...(code ? { code } : {}),
        });
      }
      const progress = attempt.progress;
      if (progress && progress.at !== reportedProgressAt) {
        reportedProgressAt = progress.at;
        log('info', {
          event: 'call.progress',
          message: `${tool}: ${progress.percent}%${progress.message ? ` ${progress.message}` : ''}`,
          tool,
          workflowId,
          percent: progress.percent,
          ...(progress.message ? { progressMessage: progress.message } : {}),
        });
      }
    }
    await pollPause(MCP_CALL_WATCH_POLL_MS, signal);
  }
}
