import { SdkHttpError, type CallToolResult, type Progress, type Task } from '@modelcontextprotocol/client';
import {
  CallToolResultSchema,
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
} from '@modelcontextprotocol/core';
import {
  MCP_FENCING_TOKEN_META,
  MCP_IDEMPOTENCY_KEY_META,
  type McpClientPool,
  type McpSession,
} from './mcp-client-pool';
import { DEFAULT_MCP_CALL_TIMEOUT_MS } from './mcp-config';

/** A task to poll: its id and, over Streamable HTTP, the session it was created in. */
export interface McpTaskRef {
  taskId: string;
  session?: McpSession;
}

/** What creating a task gave: a task, or (a server that ignored the task request) the plain result. */
export type McpTaskCreation = { task: Task; ref: McpTaskRef } | { result: CallToolResult };

/** Options of {@link McpTaskChannel.create}. */
export interface McpTaskCreateOptions {
  signal: AbortSignal;
  idempotencyKey: string;
  fencingToken?: string;
  /** How long the server should keep the task and its result, in ms. */
  ttlMs: number;
  onProgress?: (progress: Progress) => void;
}

/** The requests that drive one tool's MCP tasks (see `runMcpTask`); implemented over the pool, faked in tests. */
export interface McpTaskChannel {
  /** `tools/call` with `task`. */
  create(args: Record<string, unknown>, options: McpTaskCreateOptions): Promise<McpTaskCreation>;
  /** `tasks/get`. */
  get(ref: McpTaskRef, signal: AbortSignal): Promise<Task>;
  /** `tasks/result`. */
  result(ref: McpTaskRef, signal?: AbortSignal): Promise<CallToolResult>;
  /** `tasks/cancel`. */
  cancel(ref: McpTaskRef): Promise<void>;
}

/** One `tasks/get` may take this long (the wrapper heartbeats meanwhile; a poll that hangs is retried). */
const POLL_REQUEST_TIMEOUT_MS = 30_000;
/** `tasks/cancel` is best effort: the run's cancellation does not wait longer than this for it. */
const CANCEL_REQUEST_TIMEOUT_MS = 5_000;

/**
 * The task requests (MCP 2025-11-25 tasks, which SDK v2 still parses but no longer drives: they are sent as plain
 * requests with the 2025 schemas) of one tool of a pooled server. A task is polled in the session it was created in; when that
 * session is gone (HTTP 400/404: the server forgot it), the worker's own connection asks instead, which finds the
 * task on a server whose tasks outlive sessions (ours: task id = workflow id).
 */
export function poolTaskChannel(pool: McpClientPool, server: string, tool: string): McpTaskChannel {
  const timeout = () => pool.config(server).timeoutMs ?? DEFAULT_MCP_CALL_TIMEOUT_MS;
  const goneSessions = new Set<string>();
  const clientFor = async (ref: McpTaskRef) => {
    const session = ref.session && !goneSessions.has(ref.session.sessionId) ? ref.session : undefined;
    return (await pool.sessionClient(server, session)).client;
  };
  const inSession = async <T>(ref: McpTaskRef, send: (client: Awaited<ReturnType<typeof clientFor>>) => Promise<T>) => {
    try {
      return await send(await clientFor(ref));
    } catch (error) {
      const sessionGone = error instanceof SdkHttpError && (error.status === 400 || error.status === 404);
      if (!sessionGone || !ref.session || goneSessions.has(ref.session.sessionId)) throw error;
      goneSessions.add(ref.session.sessionId);
      return send(await clientFor(ref));
    }
  };
  return {
    create: (args, options) => createTask(pool, server, tool, args, { ...options, timeoutMs: timeout() }),
    get: (ref, signal) =>
      inSession(ref, (client) =>
        client.request({ method: 'tasks/get', params: { taskId: ref.taskId } }, GetTaskResultSchema, {
          signal,
          timeout: Math.min(timeout(), POLL_REQUEST_TIMEOUT_MS),
        }),
      ) as Promise<Task>,
    result: (ref, signal) =>
      inSession(ref, (client) =>
        client.request({ method: 'tasks/result', params: { taskId: ref.taskId } }, CallToolResultSchema, {
          timeout: timeout(),
          ...(signal ? { signal } : {}),
        }),
      ) as Promise<CallToolResult>,
    cancel: async (ref) => {
      await inSession(ref, (client) =>
        client.request({ method: 'tasks/cancel', params: { taskId: ref.taskId } }, CancelTaskResultSchema, {
          timeout: CANCEL_REQUEST_TIMEOUT_MS,
        }),
      );
    },
  };
}

/** `tools/call` with `task`: the task and the session it lives in, or the plain result of a server that ran it. */
async function createTask(
  pool: McpClientPool,
  server: string,
  tool: string,
  args: Record<string, unknown>,
  options: McpTaskCreateOptions & { timeoutMs: number },
): Promise<McpTaskCreation> {
  const { client, session } = await pool.sessionClient(server);
  const answer = await client.request(
    {
      method: 'tools/call',
      params: {
        name: tool,
        arguments: args,
        task: { ttl: options.ttlMs },
        _meta: {
          [MCP_IDEMPOTENCY_KEY_META]: options.idempotencyKey,
          ...(options.fencingToken ? { [MCP_FENCING_TOKEN_META]: options.fencingToken } : {}),
        },
      },
    },
    CreateTaskResultSchema.or(CallToolResultSchema),
    {
      timeout: options.timeoutMs,
      signal: options.signal,
      ...(options.onProgress ? { onprogress: options.onProgress } : {}),
    },
  );
  if ('task' in answer) {
    const task = answer.task as Task;
    return { task, ref: { taskId: task.taskId, ...(session ? { session } : {}) } };
  }
  return { result: answer as CallToolResult };
}
