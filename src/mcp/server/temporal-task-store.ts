import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { ErrorCode, McpError, type CallToolResult, type Result, type Task } from '@modelcontextprotocol/sdk/types.js';
import type { McpToolCallResult } from '../../workflows/mcp-tool-call';
import { SEARCH_ATTRIBUTES } from '../../contract/search-attributes';
import {
  DEFAULT_MCP_SERVER_NAME,
  isMcpCallOf,
  MCP_CALL_WORKFLOW_PREFIX,
  mcpCallerScope,
  SHARED_MCP_CALLER,
} from './mcp-caller';
import { retryTransientReads } from '../../client/transient-read-retry';
import { callToolErrorOf, callToolResultOf } from './mcp-tool-call-result';

export { MCP_CALL_WORKFLOW_PREFIX };
/** The workflow type of an MCP tool call. */
export const MCP_CALL_WORKFLOW = 'mcpToolCall';
/** How often a client should poll `tasks/get`, in ms. */
const POLL_INTERVAL_MS = 500;

/**
 * The MCP SDK's task store, answered from Temporal: a task is the workflow of a tool call (task id = workflow id).
 * `tasks/get` describes the workflow, `tasks/result` waits for its result, `tasks/cancel` cancels it (which cancels
 * the tool's activity and undoes a compensable call); `tasks/list` lists recent tool-call workflows. Nothing is kept
 * in this process, so any server process attached to the same Temporal namespace answers for any task of its callers.
 *
 * The store answers one caller scope (see `mcpCallerScope`): a task of another caller, or of another server, is
 * answered exactly like a task that does not exist.
 */
export class TemporalTaskStore implements TaskStore {
  readonly #client: Client;
  readonly #scope: string;
  /** Tasks whose cancellation was requested here (Temporal reports them running until the workflow ends). */
  readonly #cancelling = new Set<string>();

  /** `scope` defaults to the shared caller's on the default server. */
  constructor(client: Client, options: { scope?: string } = {}) {
    this.#client = client;
    this.#scope = options.scope ?? mcpCallerScope(DEFAULT_MCP_SERVER_NAME, SHARED_MCP_CALLER);
  }

  async createTask(): Promise<Task> {
    throw new Error('Tasks of durable-tools are created by starting a tool-call workflow (tools/call with "task").');
  }

  async getTask(taskId: string): Promise<Task | null> {
    if (!isMcpCallOf(this.#scope, taskId)) return null;
    let description: WorkflowExecutionDescription;
    try {
      description = await this.#client.workflow.getHandle(taskId).describe();
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return null;
      throw error;
    }
    return taskOf(description, this.#cancelling.has(taskId));
  }

  async storeTaskResult(): Promise<void> {
    // Temporal keeps the result of the workflow.
  }

  async getTaskResult(taskId: string): Promise<Result> {
    if (!isMcpCallOf(this.#scope, taskId)) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
    return toolCallResult(this.#client, taskId);
  }

  async updateTaskStatus(taskId: string, status: Task['status']): Promise<void> {
    if (status !== 'cancelled') return;
    if (!isMcpCallOf(this.#scope, taskId)) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
    this.#cancelling.add(taskId);
    await this.#client.workflow.getHandle(taskId).cancel();
  }

  async listTasks(): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const tasks: Task[] = [];
    for await (const info of this.#client.workflow.list({
      query: `WorkflowType="${MCP_CALL_WORKFLOW}" AND WorkflowId STARTS_WITH "${MCP_CALL_WORKFLOW_PREFIX}${this.#scope}-"`,
      pageSize: 50,
    })) {
      if (!isMcpCallOf(this.#scope, info.workflowId)) continue;
      tasks.push(
        taskOfStatus(
          info.workflowId,
          info.status.name,
          info.startTime,
          info.closeTime,
          this.#cancelling.has(info.workflowId),
        ),
      );
      if (tasks.length >= 50) break;
    }
    return { tasks };
  }
}

/**
 * Waits for a tool-call workflow and turns its outcome into a `tools/call` result. Aborting `signal` stops the
 * wait (the result is then an error result nobody should read).
 */
export async function toolCallResult(
  client: Client,
  workflowId: string,
  signal?: AbortSignal,
): Promise<CallToolResult> {
  const handle = client.workflow.getHandle(workflowId);
  const withStructuredContent = (await handle.describe().catch(() => undefined))?.memo?.['structured'] === true;
  try {
    // A server shedding load fails the long poll while the call goes on: asked again (transient-read-retry.ts).
    const read = signal ? () => client.withAbortSignal(signal, () => handle.result()) : () => handle.result();
    const result = await retryTransientReads(read, signal ? { signal } : {});
    return callToolResultOf(result as McpToolCallResult, withStructuredContent);
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    const reason = cause instanceof Error ? cause.message : error instanceof Error ? error.message : String(error);
    return callToolErrorOf(`The durable call ${workflowId} did not complete: ${reason}`);
  }
}

function taskOf(description: WorkflowExecutionDescription, cancelling: boolean): Task {
  const task = taskOfStatus(
    description.workflowId,
    description.status.name,
    description.startTime,
    description.closeTime,
    cancelling,
  );
  const waitingOn = description.typedSearchAttributes.get(SEARCH_ATTRIBUTES.awaitingApproval);
  if (task.status !== 'working' || !waitingOn?.length) return task;
  return {
    ...task,
    statusMessage: `Waiting for a human approval of ${waitingOn.join(', ')}: \`durable-tools approve ${description.workflowId} 1\` or \`durable-tools reject ${description.workflowId} 1 --reason <why>\`.`,
  };
}

function taskOfStatus(
  workflowId: string,
  status: string,
  startTime: Date,
  closeTime: Date | undefined,
  cancelling: boolean,
): Task {
  const mapped: Task['status'] =
    status === 'RUNNING' || status === 'CONTINUED_AS_NEW'
      ? cancelling
        ? 'cancelled'
        : 'working'
      : status === 'COMPLETED'
        ? 'completed'
        : status === 'CANCELLED'
          ? 'cancelled'
          : 'failed';
  return {
    taskId: workflowId,
    status: mapped,
    ...(mapped === 'failed' ? { statusMessage: `The workflow ended ${status}.` } : {}),
    createdAt: startTime.toISOString(),
    lastUpdatedAt: (closeTime ?? new Date()).toISOString(),
    ttl: null,
    pollInterval: POLL_INTERVAL_MS,
  };
}
