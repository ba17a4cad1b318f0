import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentRunStartError } from '../../src/client/agent-run-start-error';
import { startAgentRun, waitForAgentRun, type AgentRunIdReusePolicy } from '../../src/client/agent-run-client';
import { MemoryIdempotencyStore } from '../../src/stores/idempotency/memory-idempotency-store';
import { agentRunTools } from '../../src/mcp/server/mcp-agent-run-tools';
import { mcpCallerScope, SHARED_MCP_CALLER } from '../../src/mcp/server/mcp-caller';
import type { ModelProvider } from '../../src/contract/model-types';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import type { AgentRunInput, AgentRunResult } from '../../src/contract/agent-run-types';
import { runCliToEnd } from '../support/cli-process';
import { startLedgerServer, type LedgerServer } from '../support/ledger-server';
import { createTestWorker, testServer, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { CARD_NUMBER, tripLedgerTools } from '../support/trip-ledger-tools';

/**
 * Issue 20, item 2 ("one run, one owner") on the real dev server: a workflow id names one run, and a run's keys,
 * compensations and stored outputs are its own, also when a failed run's id is reused on purpose or a run is
 * reset. Effects are counted on the test ledger, where the tools send them.
 */

let ledger: LedgerServer;
const taskQueue = uniqueTaskQueue('run-ownership');
const dir = mkdtempSync(join(tmpdir(), 'run-ownership-'));
/** Where the `changing` model books a flight to: a model that answers otherwise after a reset. */
const changing = { destination: 'BER' };
const changingModel: ModelProvider = async ({ turn }) =>
  turn === 0
    ? { toolCalls: [{ id: 'c1', name: 'book_flight', arguments: { to: changing.destination } }], done: false }
    : { text: 'Done.', toolCalls: [], done: true };

const temporal = useTestTemporal({
  worker: async (temporal) => {
    ledger = await startLedgerServer();
    return createTestWorker(temporal, {
      tools: tripLedgerTools(ledger),
      taskQueue,
      idempotencyStore: new MemoryIdempotencyStore(),
      modelProviders: { changing: changingModel },
    });
  },
});
afterAll(async () => {
  await ledger.close();
});

const BOOK: ScriptedTurn = { toolCalls: [{ name: 'book_flight', arguments: { to: 'BER' } }] };
const DONE: ScriptedTurn = { text: 'Booked.', final: true };

function tripInput(script: ScriptedTurn[], extra: Partial<AgentRunInput> = {}): AgentRunInput {
  return { goal: 'Book a flight to Berlin', model: { provider: 'scripted', script }, ...extra };
}

function start(
  id: string,
  input: AgentRunInput,
  options: { taskQueue?: string; reuse?: AgentRunIdReusePolicy } = {},
): ReturnType<typeof startAgentRun> {
  return startAgentRun(temporal.client, input, {
    taskQueue: options.taskQueue ?? taskQueue,
    workflowId: id,
    ...(options.reuse ? { workflowIdReusePolicy: options.reuse } : {}),
  });
}

const effectsOf = (kind: string, keyPrefix: string) =>
  ledger.effects.filter((e) => e.kind === kind && e.key.startsWith(`${keyPrefix}/`));

/** Every execution Temporal has under a workflow id. */
async function executionsOf(workflowId: string): Promise<string[]> {
  const runIds: string[] = [];
  for await (const execution of temporal.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    runIds.push(execution.runId);
  }
  return runIds;
}

describe('a second start with the id of an existing run', () => {
  test('from code, returns the completed run and starts nothing', async () => {
    const id = `own-code-${randomUUID()}`;
    const first = await start(id, tripInput([BOOK, DONE]));
    const result = await waitForAgentRun(first);
    expect(result.status).toBe('completed');

    const second = await start(id, tripInput([BOOK, DONE], { goal: 'Another goal' }));
    expect(second.started).toBe(false);
    expect(second.firstExecutionRunId).toBe(first.firstExecutionRunId);
    expect(await waitForAgentRun(second)).toEqual(result);
    expect(await executionsOf(id)).toEqual([first.firstExecutionRunId]);
    expect(effectsOf('book', id)).toHaveLength(1);
  });

  test('from code, returns the running run and starts nothing', async () => {
    const id = `own-running-${randomUUID()}`;
    // No worker polls this queue: the run stays running.
    const idle = uniqueTaskQueue('run-ownership-idle');
    const first = await start(id, tripInput([BOOK, DONE]), { taskQueue: idle });
    try {
      const second = await start(id, tripInput([BOOK, DONE]), { taskQueue: idle });
      expect(first.started).toBe(true);
      expect(second.started).toBe(false);
      expect(second.firstExecutionRunId).toBe(first.firstExecutionRunId);
      expect((await second.describe()).status.name).toBe('RUNNING');
    } finally {
      await first.terminate('test over');
    }
  });

  test('from the command line, says the run already exists, shows it and starts nothing', async () => {
    const id = `own-cli-${randomUUID()}`;
    const first = await start(id, tripInput([BOOK, DONE]));
    await waitForAgentRun(first);
    const script = join(dir, 'book.json');
    writeFileSync(script, JSON.stringify([BOOK, DONE]));

    const { code, stdout } = await runCliToEnd(['run', 'Book again', '--script', script, '--id', id], {
      TEMPORAL_ADDRESS: testServer().address,
      TEMPORAL_NAMESPACE: testServer().namespace,
      DURABLE_TOOLS_TASK_QUEUE: taskQueue,
      TEMPORAL_CONFIG_FILE: join(dir, 'no-temporal.toml'),
    });
    expect(stdout).toContain(`Run ${id} already exists (completed); nothing was started.`);
    expect(code).toBe(0);
    expect(await executionsOf(id)).toEqual([first.firstExecutionRunId]);
    expect(effectsOf('book', id)).toHaveLength(1);
  });

  test('over MCP (start_agent_run with the same key), answers started: false with the first run', async () => {
    const startTool = agentRunTools(temporal.client, taskQueue, mcpCallerScope('run-ownership', SHARED_MCP_CALLER)).get(
      'start_agent_run',
    )!;
    const key = `own-mcp-${randomUUID()}`;
    const args = { goal: 'Book a flight', model: { provider: 'scripted', script: [BOOK, DONE] } };
    const first = (await startTool.call(args, key)).structuredContent as { workflowId: string; started: boolean };
    expect(first.started).toBe(true);
    await waitForAgentRun(temporal.client.workflow.getHandle(first.workflowId));

    const second = (await startTool.call(args, key)).structuredContent;
    // runId: the workflow id under its deprecated old name.
    expect(second).toEqual({
      workflowId: first.workflowId,
      runId: first.workflowId,
      started: false,
      status: 'completed',
    });
    expect(await executionsOf(first.workflowId)).toHaveLength(1);
    expect(effectsOf('book', first.workflowId)).toHaveLength(1);
  });

  test('of another workflow type is refused with RUN_ID_TAKEN and changes nothing', async () => {
    const id = `own-taken-${randomUUID()}`;
    // An MCP call's workflow on a queue no worker polls: it stays running until the test ends it.
    const other = await temporal.client.workflow.start('mcpToolCall', {
      taskQueue: uniqueTaskQueue('run-ownership-idle'),
      workflowId: id,
      args: [{ tool: 'book_flight', arguments: { to: 'BER' } }],
    });
    try {
      await expect(start(id, tripInput([BOOK, DONE]))).rejects.toMatchObject({
        name: 'AgentRunStartError',
        code: 'RUN_ID_TAKEN',
      });
      expect(await executionsOf(id)).toEqual([other.firstExecutionRunId]);
    } finally {
      await other.terminate('test over');
    }
  });

  test('with a reuse policy other than the two an agent run accepts, is refused before anything starts', async () => {
    const id = `own-policy-${randomUUID()}`;
    const attempt = startAgentRun(temporal.client, tripInput([DONE]), {
      taskQueue,
      workflowId: id,
      workflowIdReusePolicy: 'ALLOW_DUPLICATE' as AgentRunIdReusePolicy,
    });
    await expect(attempt).rejects.toBeInstanceOf(AgentRunStartError);
    await expect(attempt).rejects.toMatchObject({ code: 'INVALID_ID_REUSE_POLICY' });
    expect(await executionsOf(id)).toEqual([]);
  });
});

describe("a new run under a failed run's id (ALLOW_DUPLICATE_FAILED_ONLY)", () => {
  const id = `own-reuse-${randomUUID()}`;
  let old: { firstExecutionRunId: string; result: AgentRunResult; cardHandle: string };
  let reused: { started: boolean; firstExecutionRunId: string; result: AgentRunResult };

  beforeAll(async () => {
    // The old run books a flight, reads the card (stored: too large) and fails at its turn limit, keeping the
    // booking (compensateOnLimit: false).
    const oldHandle = await start(
      id,
      tripInput([{ toolCalls: [...BOOK.toolCalls!, { name: 'show_card', arguments: {} }] }], {
        limits: { maxTurns: 1 },
        failurePolicy: { compensateOnLimit: false },
      }),
    );
    const oldResult = await waitForAgentRun(oldHandle);
    const card = oldResult.steps.find((s) => s.tool === 'show_card')!.observation as { output: { handle: string } };
    old = { firstExecutionRunId: oldHandle.firstExecutionRunId, result: oldResult, cardHandle: card.output.handle };
    // The new run makes the same call, tries to read the old run's card and fails at its limit, compensating.
    const handle = await start(
      id,
      tripInput(
        [
          {
            toolCalls: [...BOOK.toolCalls!, { name: 'read_stored_output', arguments: { handle: old.cardHandle } }],
          },
        ],
        { limits: { maxTurns: 1 } },
      ),
      { reuse: 'ALLOW_DUPLICATE_FAILED_ONLY' },
    );
    reused = {
      started: handle.started,
      firstExecutionRunId: handle.firstExecutionRunId,
      result: await waitForAgentRun(handle),
    };
  });

  test('starts a run of its own', () => {
    expect(old.result.status).toBe('failed');
    expect(reused.started).toBe(true);
    expect(reused.firstExecutionRunId).not.toBe(old.firstExecutionRunId);
  });

  test("does not replay the old run's stored result: its booking is a new effect under its own key", () => {
    const booking = reused.result.steps.find((s) => s.tool === 'book_flight')!;
    expect(booking.observation).not.toHaveProperty('replayed');
    expect(booking.idempotencyKey).toBe(`${id}/${reused.firstExecutionRunId}/1`);
    expect(effectsOf('book', id).map((e) => e.key)).toEqual([
      `${id}/${old.firstExecutionRunId}/1`,
      `${id}/${reused.firstExecutionRunId}/1`,
    ]);
  });

  test("cannot read the old run's stored output with read_stored_output", () => {
    const read = reused.result.steps.find((s) => s.tool === 'read_stored_output')!;
    expect(read.status).toBe('failed');
    expect(read.observation).toMatchObject({ status: 'error', code: 'NOT_FOUND' });
    expect(JSON.stringify(reused.result)).not.toContain(CARD_NUMBER);
  });

  test("compensates its own booking only: the old run's booking is not cancelled", () => {
    expect(reused.result.status).toBe('compensated');
    expect(effectsOf('cancel', id).map((e) => e.key)).toEqual([`${id}/${reused.firstExecutionRunId}/1`]);
  });
});

/** Resets a closed run to the workflow task before its first activity of a type; the reset run's result. */
async function resetBeforeFirst(activity: string, id: string, firstExecutionRunId: string): Promise<AgentRunResult> {
  const events = (await temporal.client.workflow.getHandle(id, firstExecutionRunId).fetchHistory()).events ?? [];
  const first = events.findIndex((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activity);
  const resetPoint = events
    .slice(0, first)
    .reverse()
    .find((e) => e.workflowTaskCompletedEventAttributes)!.eventId;
  const { runId } = await temporal.client.workflowService.resetWorkflowExecution({
    namespace: testServer().namespace,
    workflowExecution: { workflowId: id, runId: firstExecutionRunId },
    workflowTaskFinishEventId: resetPoint,
    requestId: randomUUID(),
    reason: `test: reset before the first ${activity}`,
  });
  return waitForAgentRun(temporal.client.workflow.getHandle(id, runId!));
}

describe('a reset run', () => {
  test('keeps the run’s keys: calls after the reset point replay their recorded results, with no second effect', async () => {
    const id = `own-reset-${randomUUID()}`;
    const script = [BOOK, { toolCalls: [{ name: 'book_flight', arguments: { to: 'LIS' } }] }, DONE];
    const first = await start(id, tripInput(script));
    expect((await waitForAgentRun(first)).status).toBe('completed');
    const reset = await resetBeforeFirst('book_flight', id, first.firstExecutionRunId);

    expect(reset.status).toBe('completed');
    const bookings = reset.steps.filter((s) => s.tool === 'book_flight');
    expect(bookings.map((s) => s.idempotencyKey)).toEqual([
      `${id}/${first.firstExecutionRunId}/1`,
      `${id}/${first.firstExecutionRunId}/2`,
    ]);
    expect(bookings.map((s) => (s.observation as { replayed?: boolean }).replayed)).toEqual([true, true]);
    expect(effectsOf('book', id)).toHaveLength(2);
  });

  test('that makes another call under a step id already used gets IDEMPOTENCY_CONFLICT and runs nothing', async () => {
    const id = `own-reset-other-${randomUUID()}`;
    changing.destination = 'BER';
    const first = await start(id, { goal: 'Book a flight', model: { provider: 'changing' } });
    expect((await waitForAgentRun(first)).status).toBe('completed');

    // Reset before the first model turn: the model is asked again and now books another flight.
    changing.destination = 'LIS';
    const reset = await resetBeforeFirst('callModel', id, first.firstExecutionRunId);

    const booking = reset.steps.find((s) => s.tool === 'book_flight')!;
    expect(booking.idempotencyKey).toBe(`${id}/${first.firstExecutionRunId}/1`);
    expect(booking.observation).toMatchObject({ status: 'error', code: 'IDEMPOTENCY_CONFLICT' });
    expect(effectsOf('book', id)).toHaveLength(1);
    expect(effectsOf('cancel', id)).toHaveLength(0);
  });
});
