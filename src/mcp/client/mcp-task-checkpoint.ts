import type { McpTaskRef } from './mcp-task-channel';

/** Longest task id kept (a server's id above it is refused: checkpoints are small). */
export const MCP_TASK_ID_MAX_CHARS = 1_000;
const SESSION_ID_MAX_CHARS = 200;
const PROTOCOL_VERSION_MAX_CHARS = 40;

/** What an MCP task tool checkpoints right after creating its task: enough for another worker to poll it. */
export interface McpTaskCheckpoint {
  mcpTask: McpTaskRef;
}

/** The checkpoint of a task. */
export function taskCheckpoint(ref: McpTaskRef): McpTaskCheckpoint {
  return { mcpTask: ref };
}

/**
 * The task a retried attempt resumes (`ctx.resumeFrom`): `undefined` when there is no checkpoint, `'unreadable'`
 * when there is one this code did not write (then whether a task runs is unknown).
 */
export function taskRefOf(resumeFrom: unknown): McpTaskRef | 'unreadable' | undefined {
  if (resumeFrom === undefined) return undefined;
  const task = (resumeFrom as { mcpTask?: unknown } | null)?.mcpTask as Record<string, unknown> | undefined;
  if (typeof task !== 'object' || task === null) return 'unreadable';
  const { taskId, session } = task;
  if (!isBoundedString(taskId, MCP_TASK_ID_MAX_CHARS)) return 'unreadable';
  if (session === undefined) return { taskId };
  const { sessionId, protocolVersion } = (session ?? {}) as Record<string, unknown>;
  if (!isBoundedString(sessionId, SESSION_ID_MAX_CHARS)) return 'unreadable';
  if (protocolVersion !== undefined && !isBoundedString(protocolVersion, PROTOCOL_VERSION_MAX_CHARS)) {
    return 'unreadable';
  }
  return { taskId, session: { sessionId, ...(protocolVersion !== undefined ? { protocolVersion } : {}) } };
}

/** Whether a server's task id can be kept in a checkpoint. */
export function isUsableTaskId(taskId: unknown): taskId is string {
  return isBoundedString(taskId, MCP_TASK_ID_MAX_CHARS);
}

function isBoundedString(value: unknown, max: number): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= max;
}
