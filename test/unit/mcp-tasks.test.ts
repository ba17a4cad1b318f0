import {
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  type CallToolResult,
  type Task,
} from '@modelcontextprotocol/client';
import { runsAsTask } from '../../src/mcp/client/mcp-host';
import { parseMcpConfig } from '../../src/mcp/client/mcp-config';
import { runMcpTask, type McpTaskRunDeps } from '../../src/mcp/client/mcp-task-call';
import type { McpTaskChannel, McpTaskRef } from '../../src/mcp/client/mcp-task-channel';
import { taskCheckpoint, taskRefOf } from '../../src/mcp/client/mcp-task-checkpoint';
import { MCP_TASK_POLL, nextPollDelayMs } from '../../src/mcp/client/mcp-task-polling';
import { PermanentToolError, TransientToolError } from '../../src/failures/tool-errors';
import type { ToolContext } from '../../src/tools/tool-context';

describe('MCP task polling delays', () => {
  test('the first wait is the server pollInterval, never less', () => {
    expect(nextPollDelayMs(2_000, 0, () => 0)).toBe(2_000);
    for (const r of [0, 0.3, 0.99]) expect(nextPollDelayMs(2_000, 0, () => r)).toBeGreaterThanOrEqual(2_000);
  });

  test('jitter lengthens a wait by at most 20%', () => {
    expect(nextPollDelayMs(1_000, 0, () => 0.999999)).toBeLessThanOrEqual(1_200);
    expect(nextPollDelayMs(1_000, 0, () => 0.5)).toBe(1_100);
  });

  test('waits grow while nothing changes, up to the growth ceiling', () => {
    expect(nextPollDelayMs(1_000, 1, () => 0)).toBe(1_500);
    expect(nextPollDelayMs(1_000, 3, () => 0)).toBe(3_375);
    expect(nextPollDelayMs(1_000, 50, () => 0)).toBe(MCP_TASK_POLL.growthCeilingMs);
  });

  test('a server interval is bounded: no busy loop, no hour-long silence', () => {
    expect(nextPollDelayMs(0, 0, () => 0)).toBe(MCP_TASK_POLL.minIntervalMs);
    expect(nextPollDelayMs(-5, 0, () => 0)).toBe(MCP_TASK_POLL.minIntervalMs);
    expect(nextPollDelayMs(3_600_000, 9, () => 0)).toBe(MCP_TASK_POLL.maxIntervalMs);
    expect(nextPollDelayMs(Number.NaN, 0, () => 0)).toBe(MCP_TASK_POLL.defaultIntervalMs);
    expect(nextPollDelayMs(undefined, 0, () => 0)).toBe(MCP_TASK_POLL.defaultIntervalMs);
  });

  test('a server interval above the growth ceiling is kept, not grown', () => {
    expect(nextPollDelayMs(20_000, 4, () => 0)).toBe(20_000);
  });
});

describe('MCP task checkpoints', () => {
  test('a checkpoint written for a task reads back as the same task', () => {
    const ref = { taskId: 't-1', session: { sessionId: 's-1', protocolVersion: '2025-11-25' } };
    expect(taskRefOf(JSON.parse(JSON.stringify(taskCheckpoint(ref))))).toEqual(ref);
    expect(taskRefOf(taskCheckpoint({ taskId: 't-2' }))).toEqual({ taskId: 't-2' });
  });

  test('no checkpoint means a first attempt', () => {
    expect(taskRefOf(undefined)).toBeUndefined();
  });

  test('a checkpoint this code did not write is unreadable', () => {
    for (const bad of [null, 42, 'x', {}, { mcpTask: { taskId: '' } }, { mcpTask: { taskId: 'x'.repeat(1_001) } }]) {
      expect(taskRefOf(bad)).toBe('unreadable');
    }
    expect(taskRefOf({ mcpTask: { taskId: 't', session: { sessionId: 7 } } })).toBe('unreadable');
  });
});

describe('which MCP tools run as tasks', () => {
  const tool = (taskSupport?: 'required' | 'optional' | 'forbidden') => ({
    name: 't',
    inputSchema: { type: 'object' as const },
    ...(taskSupport ? { execution: { taskSupport } } : {}),
  });

  test('a tool that requires tasks runs as one, or cannot run at all on a server without tasks', () => {
    expect(runsAsTask(tool('required'), 'when-required', true)).toBe(true);
    expect(runsAsTask(tool('required'), 'when-required', false)).toBe('impossible');
  });

  test('an optional tool runs as a task only when the server configuration asks for it', () => {
    expect(runsAsTask(tool('optional'), 'when-required', true)).toBe(false);
    expect(runsAsTask(tool('optional'), 'when-supported', true)).toBe(true);
    expect(runsAsTask(tool('optional'), 'when-supported', false)).toBe(false);
  });

  test('a forbidden or silent tool never runs as a task', () => {
    expect(runsAsTask(tool('forbidden'), 'when-supported', true)).toBe(false);
    expect(runsAsTask(tool(), 'when-supported', true)).toBe(false);
  });

  test('the tasks settings of a server default to when-required', () => {
    const config = parseMcpConfig({ mcpServers: { a: { url: 'http://127.0.0.1:1/mcp', tasks: {} } } });
    expect(config.mcpServers.a?.tasks).toEqual({ use: 'when-required' });
    expect(() => parseMcpConfig({ mcpServers: { a: { command: 'x', tasks: { use: 'always' } } } })).toThrow();
  });

  test('a heartbeat timeout not shorter than the deadline is a configuration error', () => {
    expect(() => parseMcpConfig({ mcpServers: { a: { command: 'x', tasks: { deadlineMs: 10_000 } } } })).toThrow(
      /heartbeatTimeoutMs .* must be shorter than tasks.deadlineMs/,
    );
    expect(
      parseMcpConfig({ mcpServers: { a: { command: 'x', tasks: { deadlineMs: 10_000, heartbeatTimeoutMs: 2_000 } } } })
        .mcpServers.a?.tasks,
    ).toMatchObject({ deadlineMs: 10_000, heartbeatTimeoutMs: 2_000 });
  });
});

// ---- runMcpTask against a scripted server ----

const RESULT: CallToolResult = { content: [{ type: 'text', text: 'the report' }] };

function task(status: Task['status'], extra: Partial<Task> = {}): Task {
  return {
    taskId: 'task-1',
    status,
    ttl: 60_000,
    createdAt: '2026-12-01T00:00:00Z',
    lastUpdatedAt: '2026-12-01T00:00:00Z',
    pollInterval: 1_000,
    ...extra,
  };
}

/** A server whose `tasks/get` answers come from a script (a function throws that error). */
function scriptedServer(polls: (Task | Error)[], result: CallToolResult | Error = RESULT) {
  const calls: { method: string; ref?: McpTaskRef }[] = [];
  const channel: McpTaskChannel = {
    create: async () => {
      calls.push({ method: 'tools/call' });
      return { task: task('working', { statusMessage: 'queued' }), ref: { taskId: 'task-1' } };
    },
    get: async (ref) => {
      calls.push({ method: 'tasks/get', ref });
      const next = polls.shift() ?? new Error('script exhausted');
      if (next instanceof Error) throw next;
      return next;
    },
    result: async (ref) => {
      calls.push({ method: 'tasks/result', ref });
      if (result instanceof Error) throw result;
      return result;
    },
    cancel: async (ref) => {
      calls.push({ method: 'tasks/cancel', ref });
    },
  };
  return { channel, calls, methods: () => calls.map((call) => call.method) };
}

/** A tool context that records what the driver did with it. */
function recordingContext(resumeFrom?: unknown) {
  const events: string[] = [];
  const controller = new AbortController();
  const progress: { percent: number; message?: string }[] = [];
  const ctx: ToolContext = {
    idempotencyKey: 'run-1/1',
    stepId: 1,
    runId: 'run-1',
    attempt: resumeFrom === undefined ? 1 : 2,
    signal: controller.signal,
    cancellation: controller.signal,
    assertLease: () => {},
    heartbeat: () => events.push('heartbeat'),
    ...(resumeFrom !== undefined ? { resumeFrom } : {}),
    checkpoint: async (state) => {
      events.push(`checkpoint ${JSON.stringify(state)}`);
    },
    progress: (percent, message) => {
      progress.push({ percent, ...(message !== undefined ? { message } : {}) });
    },
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
  };
  return { ctx, events, progress, controller };
}

function deps(channel: McpTaskChannel, extra: Partial<McpTaskRunDeps> = {}) {
  const waits: number[] = [];
  const value: McpTaskRunDeps = {
    channel,
    where: { server: 'research', tool: 'deep-query' },
    repeatable: false,
    ttlMs: 3_600_000,
    cancelRequested: () => false,
    sleep: async (ms, signal) => {
      waits.push(ms);
      signal.throwIfAborted();
    },
    random: () => 0,
    ...extra,
  };
  return { deps: value, waits };
}

describe('an MCP tool call driven as a task', () => {
  test('creates the task, checkpoints its id before the first poll, and returns the result once completed', async () => {
    const server = scriptedServer([task('working', { statusMessage: 'Gathering sources...' }), task('completed')]);
    const { ctx, events } = recordingContext();
    const { deps: d } = deps(server.channel);
    const order: string[] = [];
    const get = server.channel.get;
    server.channel.get = async (ref, signal) => {
      order.push(events.some((e) => e.startsWith('checkpoint')) ? 'poll after checkpoint' : 'poll before checkpoint');
      return get(ref, signal);
    };
    await expect(runMcpTask({ topic: 'x' }, ctx, d)).resolves.toEqual(RESULT);
    expect(server.methods()).toEqual(['tools/call', 'tasks/get', 'tasks/get', 'tasks/result']);
    expect(events).toContain(`checkpoint ${JSON.stringify({ mcpTask: { taskId: 'task-1' } })}`);
    expect(order).toEqual(['poll after checkpoint', 'poll after checkpoint']);
  });

  test('each new status message becomes the call progress, and every poll a heartbeat', async () => {
    const server = scriptedServer([
      task('working', { statusMessage: 'Gathering sources...' }),
      task('working', { statusMessage: 'Gathering sources...' }),
      task('working', { statusMessage: 'Analyzing content...' }),
      task('completed'),
    ]);
    const { ctx, events, progress } = recordingContext();
    await runMcpTask({}, ctx, deps(server.channel).deps);
    expect(progress.map((p) => p.message)).toEqual(['queued', 'Gathering sources...', 'Analyzing content...']);
    expect(events.filter((e) => e === 'heartbeat').length).toBeGreaterThanOrEqual(5);
  });

  test('waits follow the server pollInterval and grow while nothing changes', async () => {
    const same = task('working', { pollInterval: 2_000, statusMessage: 'same' });
    const server = scriptedServer([same, same, same, task('completed')]);
    const { ctx } = recordingContext();
    const { deps: d, waits } = deps(server.channel);
    server.channel.create = async () => ({ task: same, ref: { taskId: 'task-1' } });
    await runMcpTask({}, ctx, d);
    expect(waits).toEqual([2_000, 3_000, 4_500, 6_750]);
  });

  test('a retried attempt resumes polling the checkpointed task at once and never creates another', async () => {
    const server = scriptedServer([task('completed')]);
    const resumed = { taskId: 'task-1', session: { sessionId: 'sess-A' } };
    const { ctx, events } = recordingContext(taskCheckpoint(resumed));
    const { deps: d, waits } = deps(server.channel);
    await expect(runMcpTask({}, ctx, d)).resolves.toEqual(RESULT);
    expect(server.methods()).toEqual(['tasks/get', 'tasks/result']);
    expect(server.calls[0]?.ref).toEqual(resumed);
    expect(waits).toEqual([]);
    expect(events.some((e) => e.startsWith('checkpoint'))).toBe(false);
  });

  test('a completed task whose result is an error is a permanent error with the server text', async () => {
    const server = scriptedServer([task('completed')], {
      isError: true,
      content: [{ type: 'text', text: 'quota of the research API exhausted' }],
    });
    const { ctx } = recordingContext();
    const failure = runMcpTask({}, ctx, deps(server.channel).deps);
    await expect(failure).rejects.toBeInstanceOf(PermanentToolError);
    await expect(failure).rejects.toThrow('quota of the research API exhausted');
  });

  test('a failed task is a permanent error that may have had an effect, with the reason the server gave', async () => {
    const server = scriptedServer([task('failed', { statusMessage: 'upstream crashed' })], new Error('no result'));
    const { ctx } = recordingContext();
    const error = (await runMcpTask({}, ctx, deps(server.channel).deps).catch((e: unknown) => e)) as PermanentToolError;
    expect(error).toBeInstanceOf(PermanentToolError);
    expect(error).toMatchObject({ code: 'INTERNAL', mayHaveHadEffect: true });
    expect(error.message).toMatch(/failed: upstream crashed/);
  });

  test('a task the server cancelled is a permanent error, and we send no cancel of our own', async () => {
    const server = scriptedServer([task('cancelled', { statusMessage: 'server shutting down' })]);
    const { ctx } = recordingContext();
    const error = (await runMcpTask({}, ctx, deps(server.channel).deps).catch((e: unknown) => e)) as PermanentToolError;
    expect(error).toMatchObject({ code: 'INTERNAL', mayHaveHadEffect: true });
    expect(error.message).toMatch(/cancelled by the server: server shutting down/);
    expect(server.methods()).not.toContain('tasks/cancel');
  });

  test('a task that asks for input is cancelled and refused: an agent run cannot answer it', async () => {
    const server = scriptedServer([task('input_required', { statusMessage: 'Which Python do you mean?' })]);
    const { ctx } = recordingContext();
    const error = (await runMcpTask({}, ctx, deps(server.channel).deps).catch((e: unknown) => e)) as PermanentToolError;
    expect(error).toMatchObject({ code: 'REQUEST_REJECTED', mayHaveHadEffect: true });
    expect(error.message).toMatch(/Which Python do you mean/);
    expect(server.methods()).toEqual(['tools/call', 'tasks/get', 'tasks/cancel']);
  });

  test('a task the server no longer knows is OUTCOME_UNKNOWN for a tool that is not safe to repeat', async () => {
    const unknown = new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
    const server = scriptedServer([unknown]);
    const { ctx } = recordingContext(taskCheckpoint({ taskId: 'task-1' }));
    const error = (await runMcpTask({}, ctx, deps(server.channel).deps).catch((e: unknown) => e)) as PermanentToolError;
    expect(error).toMatchObject({ code: 'OUTCOME_UNKNOWN', mayHaveHadEffect: true });
    expect(server.methods()).toEqual(['tasks/get']);
  });

  test('a task the server no longer knows is created again for a tool that is safe to repeat', async () => {
    const unknown = new ProtocolError(ProtocolErrorCode.InvalidParams, 'Task not found');
    const server = scriptedServer([unknown, task('completed')]);
    const { ctx } = recordingContext(taskCheckpoint({ taskId: 'expired' }));
    const { deps: d } = deps(server.channel, { repeatable: true });
    await expect(runMcpTask({}, ctx, d)).resolves.toEqual(RESULT);
    expect(server.methods()).toEqual(['tasks/get', 'tools/call', 'tasks/get', 'tasks/result']);
  });

  test('an unreadable checkpoint never creates a second task for a tool that is not safe to repeat', async () => {
    const server = scriptedServer([]);
    const { ctx } = recordingContext({ something: 'else' });
    await expect(runMcpTask({}, ctx, deps(server.channel).deps)).rejects.toMatchObject({ code: 'OUTCOME_UNKNOWN' });
    expect(server.calls).toEqual([]);
  });

  test('failed polls are retried; after five in a row the attempt fails transiently without effect', async () => {
    const down = () => new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed');
    const recovering = scriptedServer([down(), down(), task('completed')]);
    await expect(runMcpTask({}, recordingContext().ctx, deps(recovering.channel).deps)).resolves.toEqual(RESULT);

    const dead = scriptedServer([down(), down(), down(), down(), down(), task('completed')]);
    const error = await runMcpTask({}, recordingContext().ctx, deps(dead.channel).deps).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientToolError);
    expect(error).toMatchObject({ code: 'UNAVAILABLE', mayHaveHadEffect: false });
    expect(dead.methods().filter((m) => m === 'tasks/get')).toHaveLength(MCP_TASK_POLL.maxConsecutiveFailures);
  });

  test('cancelling the run sends tasks/cancel for the task and ends with the cancellation', async () => {
    const server = scriptedServer([task('working'), task('working'), task('completed')]);
    const { ctx, controller } = recordingContext();
    const reason = new Error('CANCELLED');
    const { deps: d } = deps(server.channel, {
      cancelRequested: () => true,
      sleep: async (_ms, signal) => {
        if (server.methods().filter((m) => m === 'tasks/get').length === 1) controller.abort(reason);
        signal.throwIfAborted();
      },
    });
    await expect(runMcpTask({}, ctx, d)).rejects.toBe(reason);
    expect(server.methods()).toEqual(['tools/call', 'tasks/get', 'tasks/cancel']);
  });

  test('a worker shutting down stops polling but leaves the task running for the next attempt', async () => {
    const server = scriptedServer([task('working'), task('completed')]);
    const { ctx, controller } = recordingContext();
    const { deps: d } = deps(server.channel, {
      cancelRequested: () => false,
      sleep: async (_ms, signal) => {
        controller.abort(new Error('WORKER_SHUTDOWN'));
        signal.throwIfAborted();
      },
    });
    await expect(runMcpTask({}, ctx, d)).rejects.toThrow('WORKER_SHUTDOWN');
    expect(server.methods()).toEqual(['tools/call']);
  });

  test('a server that answers the call at once instead of creating a task gives its result', async () => {
    const server = scriptedServer([]);
    server.channel.create = async () => ({ result: RESULT });
    const { ctx, events } = recordingContext();
    await expect(runMcpTask({}, ctx, deps(server.channel).deps)).resolves.toEqual(RESULT);
    expect(events.some((e) => e.startsWith('checkpoint'))).toBe(false);
  });

  test('a task id too long to checkpoint is refused before any poll', async () => {
    const server = scriptedServer([]);
    const long = task('working', { taskId: 'x'.repeat(5_000) });
    server.channel.create = async () => ({ task: long, ref: { taskId: long.taskId } });
    const { ctx } = recordingContext();
    await expect(runMcpTask({}, ctx, deps(server.channel).deps)).rejects.toMatchObject({ code: 'INTERNAL' });
    expect(server.methods()).toEqual([]);
  });
});
