import { setTimeout as sleepFor } from 'node:timers/promises';
import {
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type Progress,
  type Task,
} from '@modelcontextprotocol/client';
import type { ToolContext } from '../../tools/tool-context';
import { classifyMcpCallError, toolErrorFromResult } from './mcp-errors';
import type { McpTaskChannel, McpTaskRef } from './mcp-task-channel';
import { isUsableTaskId, taskCheckpoint, taskRefOf } from './mcp-task-checkpoint';
import {
  taskCancelledError,
  taskFailedError,
  taskInputRequiredError,
  taskLostError,
  taskPollFailedError,
  taskUnusableError,
  type McpTaskWhere,
} from './mcp-task-errors';
import { MCP_TASK_POLL, nextPollDelayMs } from './mcp-task-polling';

/** What {@link runMcpTask} needs besides the tool context. */
export interface McpTaskRunDeps {
  channel: McpTaskChannel;
  where: McpTaskWhere;
  /** Read-only or idempotent: a task the server lost is simply created again. */
  repeatable: boolean;
  /** How long the server should keep the task, in ms (the call's deadline). */
  ttlMs: number;
  /** True when the activity was cancelled by a request (run or call cancelled), not a shutdown, timeout or pause. */
  cancelRequested: () => boolean;
  /** Waits `ms`, rejecting when `signal` aborts (tests pass an instant one). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  random?: () => number;
}

/** What the heartbeat details of a task call show (`ctx.heartbeat`), next to the engine's own. */
interface TaskReport {
  mcpTask?: { taskId: string; status: Task['status']; statusMessage?: string; polls: number };
  mcpProgress?: Progress;
}

/** The state of one attempt's polling, shared by the loop and the progress callback. */
interface Watch {
  /** The task being driven, as soon as it exists (so a cancellation during its checkpoint still cancels it). */
  ref?: McpTaskRef;
  report: TaskReport;
  percent: number;
  message?: string;
}

const STATUS_MESSAGE_MAX_CHARS = 200;
const LOST = Symbol('lost');
type Lost = { [LOST]: string };

/**
 * Runs one MCP tool call as a task, durably:
 * 1. creates the task (`tools/call` with `task`, the idempotency key in `_meta`) and checkpoints its id at once,
 *    so an attempt after a worker crash resumes polling the same task (`ctx.resumeFrom`) instead of creating one;
 * 2. polls `tasks/get` with bounded, jittered backoff from the server's `pollInterval`, each poll a heartbeat; the
 *    task's `statusMessage` and progress notifications become `ctx.progress`;
 * 3. fetches `tasks/result` once the task completed, mapped like a plain result (`isError` is a permanent error);
 *    failed, cancelled-by-the-server, unknown / expired and `input_required` tasks become classified errors;
 * 4. when the run is cancelled, sends `tasks/cancel` (not when the worker shuts down or loses the call's lease:
 *    the next attempt resumes the task).
 */
export async function runMcpTask(
  args: Record<string, unknown>,
  ctx: ToolContext,
  deps: McpTaskRunDeps,
): Promise<CallToolResult> {
  const watch: Watch = { report: {}, percent: 0 };
  try {
    let start = await startOrResume(args, ctx, deps, watch);
    if ('result' in start) return start.result;
    for (let losses = 0; ; losses += 1) {
      const settled = await pollUntilSettled(start.ref, start.task, ctx, deps, watch);
      const outcome = LOST in settled ? settled : await outcomeOf(start.ref, settled, ctx, deps);
      if (!(LOST in outcome)) return outcome;
      if (!deps.repeatable || losses > 0) throw taskLostError(deps.where, start.ref.taskId, outcome[LOST]);
      ctx.log.warn('The MCP server lost the task; the tool is safe to repeat, so a new task is created.', {
        taskId: start.ref.taskId,
      });
      start = await createTask(args, ctx, deps, watch);
      if ('result' in start) return start.result;
    }
  } catch (error) {
    const { ref } = watch;
    if (ref && ctx.signal.aborted && deps.cancelRequested()) await cancelQuietly(ref, ctx, deps);
    if (ctx.signal.aborted) throw ctx.signal.reason ?? error;
    throw error;
  }
}

type Started = { ref: McpTaskRef; task?: Task } | { result: CallToolResult };

async function startOrResume(
  args: Record<string, unknown>,
  ctx: ToolContext,
  deps: McpTaskRunDeps,
  watch: Watch,
): Promise<Started> {
  const resumed = taskRefOf(ctx.resumeFrom);
  if (resumed === undefined) return createTask(args, ctx, deps, watch);
  if (resumed === 'unreadable') {
    if (!deps.repeatable)
      throw taskLostError(deps.where, '(unknown)', 'the checkpoint of the earlier attempt is unreadable');
    return createTask(args, ctx, deps, watch);
  }
  ctx.log.info('Resuming the MCP task of an earlier attempt.', { taskId: resumed.taskId });
  watch.ref = resumed;
  return { ref: resumed };
}

async function createTask(
  args: Record<string, unknown>,
  ctx: ToolContext,
  deps: McpTaskRunDeps,
  watch: Watch,
): Promise<Started> {
  ctx.assertLease(); // never create the task with too little of the key's lease left (a paused worker)
  let created;
  try {
    created = await deps.channel.create(args, {
      signal: ctx.signal,
      idempotencyKey: ctx.idempotencyKey,
      ...(ctx.fencingToken !== undefined ? { fencingToken: ctx.fencingToken } : {}),
      ttlMs: deps.ttlMs,
      onProgress: (progress) => onProgress(progress, ctx, watch),
    });
  } catch (error) {
    throw classifyMcpCallError(deps.where.server, deps.where.tool, error, ctx.signal.aborted);
  }
  if ('result' in created) {
    // The server ran the call at once instead of creating a task: its result is the call's.
    if (created.result.isError === true) throw toolErrorFromResult(deps.where.server, deps.where.tool, created.result);
    return { result: created.result };
  }
  if (!isUsableTaskId(created.task.taskId)) {
    throw taskUnusableError(deps.where, 'returned a task id that cannot be kept.');
  }
  watch.ref = created.ref;
  await ctx.checkpoint(taskCheckpoint(created.ref));
  report(created.task, 0, ctx, watch);
  return { ref: created.ref, task: created.task };
}

/** Polls until the task is terminal or waits for input; `Lost` when the server no longer knows it. */
async function pollUntilSettled(
  ref: McpTaskRef,
  first: Task | undefined,
  ctx: ToolContext,
  deps: McpTaskRunDeps,
  watch: Watch,
): Promise<Task | Lost> {
  const sleep = deps.sleep ?? ((ms: number, signal: AbortSignal) => sleepFor(ms, undefined, { signal }));
  let last = first;
  let unchanged = 0;
  let failures = 0;
  let wait = first !== undefined; // a resumed task is polled at once
  for (let polls = 1; ; polls += 1) {
    if (last && isSettled(last.status)) return last;
    if (wait) await sleep(nextPollDelayMs(last?.pollInterval, unchanged, deps.random), ctx.signal);
    wait = true;
    let next: Task;
    try {
      next = await deps.channel.get(ref, ctx.signal);
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      if (isUnknownTask(error)) return { [LOST]: (error as Error).message };
      if (error instanceof ProtocolError && error.code === ProtocolErrorCode.MethodNotFound) {
        throw taskUnusableError(deps.where, `does not answer tasks/get: ${error.message}`);
      }
      failures += 1;
      ctx.log.warn('A poll of the MCP task failed.', { taskId: ref.taskId, failures, error: String(error) });
      if (failures >= MCP_TASK_POLL.maxConsecutiveFailures) throw taskPollFailedError(deps.where, ref.taskId, error);
      ctx.heartbeat(watch.report);
      unchanged += 1;
      continue;
    }
    failures = 0;
    unchanged = last && last.status === next.status && last.statusMessage === next.statusMessage ? unchanged + 1 : 0;
    report(next, polls, ctx, watch);
    last = next;
  }
}

function isSettled(status: Task['status']): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled' || status === 'input_required';
}

/** `tasks/get` or `tasks/result` for an id the server does not know answers invalid params (-32602). */
function isUnknownTask(error: unknown): boolean {
  return error instanceof ProtocolError && error.code === ProtocolErrorCode.InvalidParams;
}

async function outcomeOf(
  ref: McpTaskRef,
  task: Task,
  ctx: ToolContext,
  deps: McpTaskRunDeps,
): Promise<CallToolResult | Lost> {
  const { where } = deps;
  if (task.status === 'input_required') {
    await cancelQuietly(ref, ctx, deps);
    throw taskInputRequiredError(where, task);
  }
  if (task.status === 'cancelled') throw taskCancelledError(where, task);
  if (task.status === 'failed') throw taskFailedError(where, task, await failureReason(ref, ctx, deps));
  let result: CallToolResult;
  try {
    result = await deps.channel.result(ref, ctx.signal);
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    if (isUnknownTask(error)) return { [LOST]: (error as Error).message };
    // The task is done; a retried attempt fetches its result again, it does not run it again.
    throw taskPollFailedError(where, ref.taskId, error);
  }
  if (result.isError === true) throw toolErrorFromResult(where.server, where.tool, result);
  return result;
}

/** What `tasks/result` of a failed task says (the error the call would have returned), if anything. */
async function failureReason(ref: McpTaskRef, ctx: ToolContext, deps: McpTaskRunDeps): Promise<string | undefined> {
  try {
    const result = await deps.channel.result(ref, ctx.signal);
    const text = result.content
      .map((part) => (part.type === 'text' ? part.text : ''))
      .join('\n')
      .trim();
    return text || undefined;
  } catch (error) {
    return error instanceof ProtocolError && !isUnknownTask(error) ? error.message : undefined;
  }
}

async function cancelQuietly(ref: McpTaskRef, ctx: ToolContext, deps: McpTaskRunDeps): Promise<void> {
  try {
    await deps.channel.cancel(ref);
    ctx.log.info('Cancelled the MCP task.', { taskId: ref.taskId });
  } catch (error) {
    // A task that already ended refuses to be cancelled; a server that is gone cannot be told.
    ctx.log.warn('Could not cancel the MCP task.', { taskId: ref.taskId, error: String(error) });
  }
}

function report(task: Task, polls: number, ctx: ToolContext, watch: Watch): void {
  const message = task.statusMessage?.slice(0, STATUS_MESSAGE_MAX_CHARS);
  watch.report.mcpTask = {
    taskId: (watch.ref?.taskId ?? task.taskId).slice(0, 200),
    status: task.status,
    ...(message !== undefined ? { statusMessage: message } : {}),
    polls,
  };
  ctx.heartbeat(watch.report);
  if (message !== undefined && message !== watch.message) {
    watch.message = message;
    ctx.progress(watch.percent, message);
  }
}

function onProgress(progress: Progress, ctx: ToolContext, watch: Watch): void {
  watch.report.mcpProgress = progress;
  ctx.heartbeat(watch.report);
  if (typeof progress.total === 'number' && progress.total > 0 && Number.isFinite(progress.progress)) {
    watch.percent = (progress.progress / progress.total) * 100;
    ctx.progress(watch.percent, progress.message ?? watch.message);
  }
}
