import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpRequestLog } from './mcp-logging';

/**
 * Tells the client how an awaited call ended, from the result the server answers: `call.finished` (info, with its
 * attempts), `call.failed` (error, with the error code the tool's failure was classified as), `call.incomplete`
 * (error: the workflow was cancelled, terminated or failed), or `call.awaiting-approval` (warning: the call waits for
 * a human and the server answered at once). Never the output, the error's message or the arguments.
 */
export function logCallOutcome(
  log: McpRequestLog,
  call: { workflowId: string; tool: string },
  result: CallToolResult,
): void {
  const { workflowId, tool } = call;
  const meta = result._meta ?? {};
  const attempts =
    typeof meta['io.durable-tools/attempts'] === 'number' ? meta['io.durable-tools/attempts'] : undefined;
  const counted = attempts === undefined ? {} : { attempts };
  if (meta['io.durable-tools/approval'] !== undefined) {
    log('warning', {
      event: 'call.awaiting-approval',
      message: `${tool} waits for a human approval (workflow ${workflowId}); nothing has run yet.`,
      tool,
      workflowId,
    });
    return;
  }
  const error = meta['io.durable-tools/error'] as { code?: unknown } | undefined;
  if (error !== undefined) {
    const code = typeof error.code === 'string' ? error.code : undefined;
    log('error', {
      event: 'call.failed',
      message: `${tool} failed${code ? ` (${code})` : ''}${attemptsText(attempts)}.`,
      tool,
      workflowId,
      ...(code ? { code } : {}),
      ...counted,
    });
    return;
  }
  if (result.isError) {
    log('error', {
      event: 'call.incomplete',
      message: `The durable call ${workflowId} of ${tool} did not complete.`,
      tool,
      workflowId,
    });
    return;
  }
  const replayed = meta['io.durable-tools/replayed'] === true;
  log('info', {
    event: 'call.finished',
    message: `${tool} finished${attemptsText(attempts)}${replayed ? ' (the stored result of an earlier run)' : ''}.`,
    tool,
    workflowId,
    ...counted,
    ...(replayed ? { replayed } : {}),
  });
}

function attemptsText(attempts: number | undefined): string {
  return attempts === undefined ? '' : ` after ${attempts} attempt${attempts === 1 ? '' : 's'}`;
}
