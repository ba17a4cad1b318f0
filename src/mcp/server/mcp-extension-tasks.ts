/**
 * The tasks extension of MCP 2026-07-28 (`io.modelcontextprotocol/tasks`, SEP-2663), answered from Temporal: a task
 * is the workflow of a durable tool call (task id = workflow id), so any server process of the same name on the same
 * namespace answers for it, and nothing is kept here.
 *
 * - `tasks/get` → the task with its status inlined: `working`; `input_required` with the approval forms of the steps
 *   that wait for a human decision (`inputRequests`); `completed` with the `tools/call` result (an `isError` result
 *   too); `failed` with a JSON-RPC error (the workflow failed, was terminated or timed out); `cancelled`.
 *   The forms are shown only to a caller who may approve its own calls (an approver, where self-approval is
 *   allowed); to any other the task stays `working` while another approver decides.
 * - `tasks/update` → the answers to those forms decide the steps, under the caller's own authority (the rules of
 *   `decide_approval`); answers to keys not outstanding are ignored, as the extension says.
 * - `tasks/cancel` → cancels the workflow (which cancels the tool's activity and undoes a compensable call).
 *
 * A task of another caller (or of another server) is answered exactly like one that does not exist.
 */
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { Client } from '@temporalio/client';
import { getPendingApprovals, type PendingApproval } from '../../client/approval-client';
import type { Task as LegacyTask } from '@modelcontextprotocol/sdk/types.js';
import {
  approvalAnswerOf,
  approvalInputKey,
  approvalInputRequests,
  type McpApprovalAnswer,
  type McpDecisionRefusalCode,
} from './mcp-approval-input';
import { isMcpCallOf } from './mcp-caller';
import { toolCallResult, type TemporalTaskStore } from './temporal-task-store';

/** The extension's identifier, in `capabilities.extensions` of the client's request and the server's discovery. */
export const MCP_TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** A task of the extension, as `tasks/get` and `CreateTaskResult` carry it (status-specific fields inlined). */
export interface McpExtensionTask {
  [field: string]: unknown;
  taskId: string;
  status: 'working' | 'input_required' | 'completed' | 'cancelled' | 'failed';
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
}

/** Decides one waiting step as the caller (the surface's `decide_approval`); a refusal is its `isError` text. */
export type McpStepDecider = (
  waiting: PendingApproval,
  answer: McpApprovalAnswer,
) => Promise<{ refused?: { code: McpDecisionRefusalCode; message: string } }>;

/** The extension's three methods for one caller. */
export interface McpExtensionTasks {
  /** The seed state of a new task (`CreateTaskResult`, `resultType: "task"`). */
  created(taskId: string): Promise<McpExtensionTask & { resultType: 'task' }>;
  get(taskId: string): Promise<McpExtensionTask>;
  update(taskId: string, inputResponses: Record<string, unknown>): Promise<Record<string, never>>;
  cancel(taskId: string): Promise<Record<string, never>>;
}

/** The tasks extension of the caller whose scope is `scope`, over its {@link TemporalTaskStore}. */
export function extensionTasks(
  client: Client,
  caller: { scope: string; tasks: TemporalTaskStore },
  decide: McpStepDecider,
  mayAnswer: boolean,
): McpExtensionTasks {
  const known = async (taskId: string): Promise<LegacyTask> => {
    const task = isMcpCallOf(caller.scope, taskId) ? await caller.tasks.getTask(taskId) : null;
    if (!task) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Task not found: ${taskId}`);
    return task;
  };
  const waitingOf = (taskId: string) => getPendingApprovals(client, taskId).catch((): PendingApproval[] => []);
  return {
    created: async (taskId) => ({ resultType: 'task', ...extensionTaskOf(await known(taskId)) }),
    get: async (taskId) => {
      const task = extensionTaskOf(await known(taskId));
      if (task.status === 'completed') return { ...task, result: await toolCallResult(client, taskId) };
      if (task.status === 'failed') {
        return {
          ...task,
          error: { code: ProtocolErrorCode.InternalError, message: task.statusMessage ?? 'The durable call failed.' },
        };
      }
      // A caller who may not decide its own call sees it working (the status message says it waits for a human).
      if (task.status !== 'working' || !mayAnswer) return task;
      const waiting = await waitingOf(taskId);
      if (waiting.length === 0) return task;
      return { ...task, status: 'input_required', inputRequests: approvalInputRequests(waiting) };
    },
    update: async (taskId, inputResponses) => {
      await known(taskId);
      for (const waiting of await waitingOf(taskId)) {
        const key = approvalInputKey(waiting);
        if (!(key in inputResponses)) continue;
        const answer = approvalAnswerOf(inputResponses[key]);
        if (!answer) {
          throw new ProtocolError(ProtocolErrorCode.InvalidParams, `The answer to ${key} is not an approval form.`, {
            code: 'INVALID_ARGUMENTS',
            inputKey: key,
          });
        }
        const { refused } = await decide(waiting, answer);
        if (refused)
          throw new ProtocolError(ProtocolErrorCode.InvalidParams, refused.message, { ...refused, inputKey: key });
      }
      return {};
    },
    cancel: async (taskId) => {
      await known(taskId);
      await caller.tasks.updateTaskStatus(taskId, 'cancelled');
      return {};
    },
  };
}

/** A 2025-11-25 task (the store's) in the extension's shape: `ttlMs` and `pollIntervalMs`. */
function extensionTaskOf(task: LegacyTask): McpExtensionTask {
  const { ttl, pollInterval, ...rest } = task;
  return {
    ...rest,
    taskId: task.taskId,
    status: task.status === 'input_required' ? 'working' : task.status,
    ttlMs: ttl ?? null,
    ...(pollInterval !== undefined ? { pollIntervalMs: pollInterval } : {}),
  };
}
