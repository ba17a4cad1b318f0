import type { Task } from '@modelcontextprotocol/client';
import { TOOL_ERROR_CODES } from '../../contract/activity-protocol';
import { OUTCOME_UNKNOWN_EXPLANATION } from '../../failures/retry-decision';
import { PermanentToolError, TransientToolError } from '../../failures/tool-errors';
import { MCP_ERROR_TEXT_MAX_CHARS } from './mcp-errors';

/** Where a task runs, for the messages. */
export interface McpTaskWhere {
  server: string;
  tool: string;
}

function named(where: McpTaskWhere, taskId: string): string {
  return `MCP task ${JSON.stringify(taskId.slice(0, 200))} of tool "${where.tool}" (server "${where.server}")`;
}

function clip(text: string): string {
  return text.length <= MCP_ERROR_TEXT_MAX_CHARS ? text : `${text.slice(0, MCP_ERROR_TEXT_MAX_CHARS)}… (cut)`;
}

/** The task ran and failed: permanent, it may have done part of its work. */
export function taskFailedError(where: McpTaskWhere, task: Task, reason: string | undefined): PermanentToolError {
  const why = reason?.trim() || task.statusMessage?.trim() || 'the server gave no reason';
  return new PermanentToolError(clip(`${named(where, task.taskId)} failed: ${why}`), {
    code: TOOL_ERROR_CODES.INTERNAL,
    hint: `This is what MCP server "${where.server}" reported. Read it: fix the arguments, or use another tool. Do not repeat the same call.`,
    mayHaveHadEffect: true,
  });
}

/** Someone else (the server, an operator) cancelled the task: permanent, part of its work may be done. */
export function taskCancelledError(where: McpTaskWhere, task: Task): PermanentToolError {
  const why = task.statusMessage?.trim();
  return new PermanentToolError(
    clip(`${named(where, task.taskId)} was cancelled by the server${why ? `: ${why}` : '.'}`),
    {
      code: TOOL_ERROR_CODES.INTERNAL,
      hint: 'The server stopped the task before it finished; part of it may have run. Do not repeat the call blindly: check what it did first.',
      mayHaveHadEffect: true,
    },
  );
}

/**
 * The server no longer knows the task (it expired, the server restarted, or it was bound to a session that is
 * gone): whether it ran is unknown. Only for tools that are not safe to repeat (the others start a new task).
 */
export function taskLostError(where: McpTaskWhere, taskId: string, detail: string): PermanentToolError {
  return new PermanentToolError(
    clip(
      `${OUTCOME_UNKNOWN_EXPLANATION.message} (${named(where, taskId)} is no longer known to the server: ${detail})`,
    ),
    { code: TOOL_ERROR_CODES.OUTCOME_UNKNOWN, hint: OUTCOME_UNKNOWN_EXPLANATION.hint, mayHaveHadEffect: true },
  );
}

/**
 * The task asks its requestor for input (elicitation, sampling), which an agent run cannot give: the task was
 * cancelled. The model may call again with arguments precise enough that the server need not ask.
 */
export function taskInputRequiredError(where: McpTaskWhere, task: Task): PermanentToolError {
  const asked = task.statusMessage?.trim();
  return new PermanentToolError(
    clip(
      `${named(where, task.taskId)} asked for input that an agent run cannot give${asked ? ` (${asked})` : ''}; it was cancelled.`,
    ),
    {
      code: TOOL_ERROR_CODES.REQUEST_REJECTED,
      hint: 'Call the tool again with arguments precise enough that the server does not need to ask, or use another tool.',
      mayHaveHadEffect: true,
    },
  );
}

/** The server answered the task creation with something that cannot be polled (no task, an unusable id). */
export function taskUnusableError(where: McpTaskWhere, detail: string): PermanentToolError {
  return new PermanentToolError(clip(`MCP server "${where.server}" (tool "${where.tool}") ${detail}`), {
    code: TOOL_ERROR_CODES.INTERNAL,
    hint: 'The server does not run this tool as a task correctly; use another tool.',
    mayHaveHadEffect: true,
  });
}

/**
 * Polling failed several times in a row: transient, and nothing is repeated by a retry, which resumes polling the
 * same task (its id is checkpointed), so `mayHaveHadEffect` is false.
 */
export function taskPollFailedError(where: McpTaskWhere, taskId: string, cause: unknown): TransientToolError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new TransientToolError(clip(`Could not poll ${named(where, taskId)}: ${reason}`), {
    code: TOOL_ERROR_CODES.UNAVAILABLE,
    mayHaveHadEffect: false,
    cause,
  });
}
