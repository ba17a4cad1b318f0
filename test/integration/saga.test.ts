import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { z } from 'zod';
import { useTestTemporal, createTestWorker, testServer, uniqueTaskQueue } from '../support/temporal-test-env';
import { localActivities } from '../support/history-markers';
import { cancelAndWait } from '../support/run-outcome';
import { waitFor } from '../support/wait-for';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import { SEARCH_ATTRIBUTES } from '../../src/contract/search-attributes';
import { compensationInput } from '../../src/tools/compensation-input';
import { defineTool, type Tool, type ToolContract } from '../../src/tools/define-tool';
import { chargeCardContract, createOrderContract as createOrder } from '../support/test-tools';
import type { ToolContext } from '../../src/tools/tool-context';
import { HttpStatusError, PermanentToolError } from '../../src/failures/tool-errors';
import { createWorker } from '../../src/runtime/create-worker';
import type { AgentRunInput, AgentRunResult, AgentRunState } from '../../src/contract/agent-run-types';

/**
 * Issue 5 (Saga) on the real dev server. What ran is counted where the tools run; the order and inputs of
 * the compensations are read from the fetched history (activity-scheduled events of the undo tools).
 */

const temporal = useTestTemporal();

type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;

/** One call that reached a tool implementation. */
interface Call {
  tool: string;
  input: Record<string, unknown>;
  key: string;
  stepId: number;
  attempt: number;
}

/** How an undo tool behaves on a given attempt (default: it succeeds). */
type UndoBehaviour = (attempt: number) => void;

/**
 * The tools of these tests, recording every call that reaches an implementation:
 * - `create_order` (compensable, undone by `cancel_order`), `book_room` (compensable, undone by `cancel_room`);
 * - `hold_seat` (compensable, undone by `release_seat`): blocks until the activity is cancelled;
 * - `charge_card` (irreversible): declined permanently above 1,000 cents;
 * - `send_invoice` (irreversible, no approval): afterwards compensable calls are refused.
 */
function sagaTools(options: { cancelRoom?: UndoBehaviour; slowToStopSeat?: string } = {}) {
  const calls: Call[] = [];
  /** When each held seat stopped and each release began, in order. */
  const timeline: string[] = [];
  let held = 0;
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const seatsHeld = (count: number) =>
    new Promise<void>((resolve) => (held >= count ? resolve() : waiters.push({ count, resolve })));
  const record = (tool: string, input: unknown, ctx: ToolContext) =>
    calls.push({
      tool,
      input: input as Record<string, unknown>,
      key: ctx.idempotencyKey,
      stepId: ctx.stepId,
      attempt: ctx.attempt,
    });
  const undoOutput = z.object({ undone: z.boolean() });
  const fastRetry = { initialDelay: '50 ms', maxDelay: '100 ms' } as const;

  const bookRoom = defineTool({
    name: 'book_room',
    description: 'Books a hotel room.',
    input: z.object({ hotel: z.string() }),
    output: z.object({ bookingId: z.string() }),
    effect: 'compensable',
    undo: 'cancel_room',
    idempotent: true,
  });
  const holdSeat = defineTool({
    name: 'hold_seat',
    description: 'Holds a seat; waits for the airline.',
    input: z.object({ seat: z.string() }),
    output: z.object({ holdId: z.string() }),
    effect: 'compensable',
    undo: 'release_seat',
    idempotent: true,
  });

  const undoTool = <I extends z.ZodType, O extends z.ZodType>(
    name: string,
    forward: ToolContract<I, O>,
    behaviour?: UndoBehaviour,
  ) =>
    defineTool({
      name,
      description: `Undoes ${forward.name}.`,
      input: compensationInput(forward),
      output: undoOutput,
      effect: 'irreversible',
      idempotent: true,
      retry: fastRetry,
    }).implement(async (input, ctx) => {
      record(name, input, ctx);
      if (name === 'release_seat')
        timeline.push(`release ${(input as { originalInput: { seat: string } }).originalInput.seat}`);
      behaviour?.(ctx.attempt);
      return { undone: true };
    });

  const tools: Tool[] = [
    createOrder.implement(async (input, ctx) => {
      record('create_order', input, ctx);
      return { orderId: `order-${ctx.stepId}` };
    }),
    bookRoom.implement(async (input, ctx) => {
      record('book_room', input, ctx);
      return { bookingId: `booking-${ctx.stepId}` };
    }),
    holdSeat.implement(async (input, ctx) => {
      record('hold_seat', input, ctx);
      held += 1;
      for (const waiter of waiters) if (held >= waiter.count) waiter.resolve();
      // Heartbeat so the cancellation reaches the activity; stop once it has (one seat takes its time).
      await new Promise<never>((_, reject) => {
        const timer = setInterval(() => ctx.heartbeat(), 100);
        ctx.signal.addEventListener('abort', () => {
          clearInterval(timer);
          setTimeout(
            () => {
              timeline.push(`stopped ${input.seat}`);
              reject(new Error('The hold was interrupted.'));
            },
            input.seat === options.slowToStopSeat ? 1500 : 0,
          );
        });
      });
      return { holdId: 'never' };
    }),
    undoTool('cancel_order', createOrder),
    undoTool('cancel_room', bookRoom, options.cancelRoom),
    undoTool('release_seat', holdSeat),
    chargeCardContract.implement(async (input, ctx) => {
      record('charge_card', input, ctx);
      if (input.amountCents > 1000)
        throw new PermanentToolError('The card was declined.', { code: 'PERMISSION_DENIED' });
      return { chargeId: `charge-${ctx.stepId}` };
    }),
    defineTool({
      name: 'send_invoice',
      description: 'Sends the invoice to the customer.',
      input: z.object({ to: z.string() }),
      output: z.object({ sent: z.boolean() }),
      effect: 'irreversible',
      idempotent: true,
      approval: 'never',
    }).implement(async (input, ctx) => {
      record('send_invoice', input, ctx);
      return { sent: true };
    }),
  ];
  return { tools, calls, timeline, seatsHeld };
}

const call = (name: string, args: unknown) => ({ name, arguments: args });
const ORDER_BOOK = call('create_order', { item: 'book', quantity: 1 });
const ROOM = call('book_room', { hotel: 'Adlon' });
const ORDER_PENS = call('create_order', { item: 'pen', quantity: 2 });
const DECLINED_CHARGE = call('charge_card', { amountCents: 99_999 });
const FINAL: ScriptedTurn = { text: 'done', final: true };
/** A book, a room and pens ordered one turn at a time, then a charge the card declines. */
const THREE_STEPS_THEN_DECLINED: ScriptedTurn[] = [
  { toolCalls: [ORDER_BOOK] },
  { toolCalls: [ROOM] },
  { toolCalls: [ORDER_PENS] },
  { toolCalls: [DECLINED_CHARGE] },
  FINAL,
];
/** A failure policy under which a failed charge aborts the run. */
const CHARGE_IS_CRITICAL = { failurePolicy: { criticalTools: ['charge_card'] } };
const UNDO_TOOLS = ['cancel_order', 'cancel_room', 'release_seat'];

/** What a saga run left behind. */
interface SagaRun {
  result: AgentRunResult;
  calls: Call[];
  history: History;
  workflowId: string;
  /** What every key of the run starts with (workflow id and first run id). */
  runKey: string;
  taskQueue: string;
  runStatusAttribute: unknown;
}

/** Runs a script to its end and collects the result, the calls, the history and the status attribute. */
async function runSaga(
  name: string,
  script: ScriptedTurn[],
  options: Omit<AgentRunInput, 'goal' | 'model'> = {},
  toolOptions: Parameters<typeof sagaTools>[0] = {},
): Promise<SagaRun> {
  const { tools, calls } = sagaTools(toolOptions);
  const taskQueue = uniqueTaskQueue(name);
  const worker = await createTestWorker(temporal, { tools, taskQueue });
  const run = await worker.runUntil(async () => {
    const handle = await startAgentRun(
      temporal.client,
      { goal: name, model: { provider: 'scripted', script }, ...options },
      { taskQueue },
    );
    const result = await waitForAgentRun(handle);
    return { result, ...(await closedRunFacts(handle)) };
  });
  return { ...run, calls, workflowId: run.result.runId, runKey: run.result.runKey!, taskQueue };
}

async function closedRunFacts(handle: WorkflowHandle) {
  const [history, description] = await Promise.all([handle.fetchHistory(), handle.describe()]);
  return { history, runStatusAttribute: description.typedSearchAttributes.get(SEARCH_ATTRIBUTES.runStatus) };
}

/** A compensation as the history shows it: the undo tool and the input it was scheduled with. */
interface ScheduledUndo {
  tool: string;
  eventId: number;
  input: {
    arguments: { originalKey: string; originalInput: unknown; originalOutput?: unknown };
    idempotencyKey: string;
  };
}

/** The undo tools' activity-scheduled events, in history order, with their decoded inputs. */
function scheduledUndos(history: History): ScheduledUndo[] {
  return (history.events ?? []).flatMap((event) => {
    const attributes = event.activityTaskScheduledEventAttributes;
    const tool = attributes?.activityType?.name;
    if (!tool || !UNDO_TOOLS.includes(tool)) return [];
    const payload = attributes?.input?.payloads?.[0]?.data;
    const input = JSON.parse(Buffer.from(payload ?? []).toString('utf8')) as ScheduledUndo['input'];
    return [{ tool, eventId: Number(event.eventId), input }];
  });
}

const callsOf = (calls: Call[], ...tools: string[]) => calls.filter((c) => tools.includes(c.tool));
const originalKeys = (calls: Call[]) => calls.map((c) => c.input.originalKey);

describe('a run whose last step fails permanently', () => {
  let run: SagaRun;
  beforeAll(async () => {
    run = await runSaga('last-step-fails', THREE_STEPS_THEN_DECLINED, CHARGE_IS_CRITICAL);
  });

  test('ends compensated, naming the failed step as the reason', () => {
    expect(run.result.status).toBe('compensated');
    expect(run.result.reason).toContain('Step 4 (charge_card) failed permanently with PERMISSION_DENIED');
    expect(run.result.steps.map((s) => [s.tool, s.status])).toEqual([
      ['create_order', 'compensated'],
      ['book_room', 'compensated'],
      ['create_order', 'compensated'],
      ['charge_card', 'failed'],
    ]);
  });

  test('schedules the compensations in the history in reverse step order', () => {
    const undos = scheduledUndos(run.history);
    expect(undos.map((u) => [u.tool, u.input.arguments.originalKey])).toEqual([
      ['cancel_order', `${run.runKey}/3`],
      ['cancel_room', `${run.runKey}/2`],
      ['cancel_order', `${run.runKey}/1`],
    ]);
  });

  test('gives each compensation the original key, input and output', () => {
    const undos = scheduledUndos(run.history);
    expect(undos.map((u) => u.input.arguments)).toEqual([
      {
        originalKey: `${run.runKey}/3`,
        originalInput: { item: 'pen', quantity: 2 },
        originalOutput: { orderId: 'order-3' },
      },
      {
        originalKey: `${run.runKey}/2`,
        originalInput: { hotel: 'Adlon' },
        originalOutput: { bookingId: 'booking-2' },
      },
      {
        originalKey: `${run.runKey}/1`,
        originalInput: { item: 'book', quantity: 1 },
        originalOutput: { orderId: 'order-1' },
      },
    ]);
  });

  test('runs each undo tool under its own key, the original key plus /undo', () => {
    const undos = callsOf(run.calls, ...UNDO_TOOLS);
    expect(undos.map((c) => c.key)).toEqual([3, 2, 1].map((n) => `${run.runKey}/${n}/undo`));
    expect(scheduledUndos(run.history).map((u) => u.input.idempotencyKey)).toEqual(undos.map((c) => c.key));
  });

  test('never reaches a step after the failed one', () => {
    expect(run.result.stepCount).toBe(4);
    expect(callsOf(run.calls, 'create_order', 'book_room').map((c) => c.stepId)).toEqual([1, 2, 3]);
  });

  test('shows compensated in its DurableRunStatus search attribute', () => {
    expect(run.runStatusAttribute).toBe('compensated');
  });

  test('is found by a visibility query on DurableRunStatus="compensated" and its task queue', async () => {
    const query = `DurableRunStatus="compensated" AND TaskQueue="${run.taskQueue}"`;
    // Visibility is eventually consistent: wait until the run shows up, however long the load makes that.
    const found = await waitFor(
      'the compensated run in the visibility query',
      async () => {
        const ids: string[] = [];
        for await (const execution of temporal.client.workflow.list({ query })) ids.push(execution.workflowId);
        return ids.length > 0 ? ids : undefined;
      },
      { intervalMs: 250 },
    );
    expect(found).toEqual([run.workflowId]);
  });
});

/** What a cancelled run left behind. */
interface CancelledRun {
  error: unknown;
  state: AgentRunState;
  runStatusAttribute: unknown;
  workflowId: string;
  runKey: string;
  calls: Call[];
  timeline: string[];
}

/** Starts a run, cancels it from the client once `seats` hold_seat calls are blocked, and waits for it to end. */
async function cancelWhileSeatsHeld(
  name: string,
  script: ScriptedTurn[],
  seats: number,
  options: Omit<AgentRunInput, 'goal' | 'model'> = {},
  toolOptions: Parameters<typeof sagaTools>[0] = {},
): Promise<CancelledRun> {
  const { tools, calls, timeline, seatsHeld } = sagaTools(toolOptions);
  const taskQueue = uniqueTaskQueue(name);
  const { namespace, bundlePath } = testServer();
  // Heartbeats are throttled (30 s without a heartbeat timeout): flush them quickly so the cancellation
  // reaches the blocked calls at once.
  const { worker } = await createWorker({
    // Stores not given here stay in memory (durable ones are the default).
    stores: 'memory',
    tools,
    connection: temporal.nativeConnection,
    settings: { namespace, taskQueue },
    workflowBundle: { codePath: bundlePath },
    workerOptions: { defaultHeartbeatThrottleInterval: '100 ms', maxHeartbeatThrottleInterval: '100 ms' },
  });
  const ended = await worker.runUntil(async () => {
    const handle = await startAgentRun(
      temporal.client,
      { goal: name, model: { provider: 'scripted', script }, ...options },
      { taskQueue },
    );
    await seatsHeld(seats);
    const { error, state } = await cancelAndWait(temporal.client, handle);
    const { runStatusAttribute } = await closedRunFacts(handle);
    return { error, state, runStatusAttribute, workflowId: handle.workflowId, runKey: state.runKey! };
  });
  return { ...ended, calls, timeline };
}

describe('cancelling a run while a tool call is blocked', () => {
  let outcome: CancelledRun;
  beforeAll(async () => {
    outcome = await cancelWhileSeatsHeld(
      'cancel',
      [{ toolCalls: [ORDER_BOOK] }, { toolCalls: [call('hold_seat', { seat: '12A' })] }, FINAL],
      1,
    );
  });

  test('rethrows the cancellation: the result rejects with a cancelled failure', () => {
    expect(outcome.error).toBeInstanceOf(WorkflowFailedError);
    expect((outcome.error as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
  });

  test('shows cancelled in the getRunState query and the DurableRunStatus search attribute', () => {
    expect(outcome.state.status).toBe('cancelled');
    expect(outcome.runStatusAttribute).toBe('cancelled');
  });

  test('compensates the in-flight step, whose compensation was registered before the call, then the earlier one', () => {
    const undos = callsOf(outcome.calls, ...UNDO_TOOLS);
    expect(undos.map((c) => [c.tool, c.input.originalKey, c.key])).toEqual([
      ['release_seat', `${outcome.runKey}/2`, `${outcome.runKey}/2/undo`],
      ['cancel_order', `${outcome.runKey}/1`, `${outcome.runKey}/1/undo`],
    ]);
    // The blocked call never returned, so its compensation has no output to work from.
    expect(undos[0]?.input).not.toHaveProperty('originalOutput');
    expect(outcome.state.steps.map((s) => [s.tool, s.status])).toEqual([
      ['create_order', 'compensated'],
      ['hold_seat', 'compensated'],
    ]);
  });
});

describe('cancelling a run during parallel tool calls', () => {
  test('compensates each in-flight call only after that call has stopped', async () => {
    const outcome = await cancelWhileSeatsHeld(
      'cancel-parallel',
      [{ toolCalls: [call('hold_seat', { seat: '1A' }), call('hold_seat', { seat: '1B' })] }, FINAL],
      2,
      { parallelToolCalls: true },
      { slowToStopSeat: '1B' },
    );
    expect(outcome.state.status).toBe('cancelled');
    // 1A stops at once, 1B takes 1.5 s: undoing 1B earlier would race its forward call.
    expect(outcome.timeline).toEqual(['stopped 1A', 'stopped 1B', 'release 1B', 'release 1A']);
    expect(outcome.state.steps.map((s) => s.status)).toEqual(['compensated', 'compensated']);
  });
});

describe('a compensation that fails permanently', () => {
  let run: SagaRun;
  beforeAll(async () => {
    run = await runSaga('undo-fails', THREE_STEPS_THEN_DECLINED, CHARGE_IS_CRITICAL, {
      cancelRoom: () => {
        throw new PermanentToolError('The hotel does not accept cancellations.', { code: 'CONFLICT' });
      },
    });
  });

  test('ends the run compensation_failed, naming the step in failedCompensationStep and reason', () => {
    expect(run.result.status).toBe('compensation_failed');
    expect(run.result.failedCompensationStep).toBe(2);
    expect(run.result.reason).toContain('Compensation of step 2 (book_room) failed');
    expect(run.result.reason).toContain('The hotel does not accept cancellations.');
    expect(run.runStatusAttribute).toBe('compensation_failed');
  });

  test('marks that step compensation_failed with the error', () => {
    const step = run.result.steps.find((s) => s.stepId === 2);
    expect(step?.status).toBe('compensation_failed');
    expect(step?.compensationError).toContain('The hotel does not accept cancellations.');
  });

  test('is not retried', () => {
    expect(callsOf(run.calls, 'cancel_room')).toHaveLength(1);
  });

  test('still runs the other compensations, before and after it', () => {
    expect(callsOf(run.calls, ...UNDO_TOOLS).map((c) => [c.tool, c.input.originalKey])).toEqual([
      ['cancel_order', `${run.runKey}/3`],
      ['cancel_room', `${run.runKey}/2`],
      ['cancel_order', `${run.runKey}/1`],
    ]);
    expect(run.result.steps.filter((s) => s.tool === 'create_order').map((s) => s.status)).toEqual([
      'compensated',
      'compensated',
    ]);
  });
});

describe('a compensation that fails transiently', () => {
  test('is retried under the same key until it succeeds', async () => {
    const run = await runSaga(
      'undo-503',
      [{ toolCalls: [ROOM] }, { toolCalls: [DECLINED_CHARGE] }, FINAL],
      CHARGE_IS_CRITICAL,
      {
        cancelRoom: (attempt) => {
          if (attempt <= 2) throw new HttpStatusError(503, { statusText: 'Service Unavailable' });
        },
      },
    );
    expect(run.result.status).toBe('compensated');
    expect(run.result.steps[0]?.status).toBe('compensated');
    const attempts = callsOf(run.calls, 'cancel_room');
    expect(attempts.map((c) => [c.attempt, c.key])).toEqual([1, 2, 3].map((n) => [n, `${run.runKey}/1/undo`]));
    // One compensation in the history: the retries are attempts of the same activity.
    expect(scheduledUndos(run.history)).toHaveLength(1);
  });
});

describe('parallel compensation', () => {
  let run: SagaRun;
  beforeAll(async () => {
    run = await runSaga(
      'parallel-undo',
      [
        { toolCalls: [ORDER_BOOK, ROOM, ORDER_PENS, call('create_order', { item: 'ink', quantity: 3 })] },
        { toolCalls: [DECLINED_CHARGE] },
        FINAL,
      ],
      { failurePolicy: { criticalTools: ['charge_card'] }, compensation: { parallel: true } },
    );
  });

  test('runs every compensation', () => {
    expect(run.result.status).toBe('compensated');
    expect(originalKeys(callsOf(run.calls, ...UNDO_TOOLS)).sort()).toEqual(
      [1, 2, 3, 4].map((n) => `${run.runKey}/${n}`),
    );
    expect(run.result.steps.slice(0, 4).every((s) => s.status === 'compensated')).toBe(true);
  });

  test('schedules all compensations before any of them completes', () => {
    const undos = scheduledUndos(run.history);
    expect(undos).toHaveLength(4);
    const undoEventIds = new Set(undos.map((u) => u.eventId));
    const firstCompletion = (run.history.events ?? []).find((e) =>
      undoEventIds.has(Number(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? -1)),
    );
    expect(Math.max(...undoEventIds)).toBeLessThan(Number(firstCompletion?.eventId));
  });
});

describe('a call that failed with bad arguments', () => {
  test('has no compensation: its undo never runs', async () => {
    const run = await runSaga(
      'bad-arguments',
      [{ toolCalls: [ORDER_BOOK] }, { toolCalls: [call('create_order', { item: 'pen', quantity: 0 })] }, FINAL],
      { failurePolicy: { criticalTools: ['create_order'] } },
    );
    expect(run.result.status).toBe('compensated');
    const bad = run.result.steps[1];
    expect(bad?.observation).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' });
    expect(bad?.status).toBe('failed');
    expect(bad?.undo).toBeUndefined();
    expect(callsOf(run.calls, 'create_order').map((c) => c.stepId)).toEqual([1]);
    expect(originalKeys(callsOf(run.calls, ...UNDO_TOOLS))).toEqual([`${run.runKey}/1`]);
    expect(scheduledUndos(run.history).map((u) => u.input.arguments.originalKey)).toEqual([`${run.runKey}/1`]);
  });
});

describe('aborting by the failure policy and the limits', () => {
  test('maxConsecutiveToolErrors aborts the run and compensates what was done', async () => {
    const run = await runSaga(
      'consecutive-errors',
      [
        { toolCalls: [ORDER_BOOK] },
        { toolCalls: [DECLINED_CHARGE] },
        { toolCalls: [DECLINED_CHARGE] },
        { toolCalls: [ORDER_PENS] },
        FINAL,
      ],
      { failurePolicy: { maxConsecutiveToolErrors: 2 } },
    );
    expect(run.result.status).toBe('compensated');
    expect(run.result.reason).toContain('2 tool calls failed in a row');
    expect(run.result.stepCount).toBe(3);
    expect(callsOf(run.calls, 'create_order').map((c) => c.stepId)).toEqual([1]);
    expect(originalKeys(callsOf(run.calls, ...UNDO_TOOLS))).toEqual([`${run.runKey}/1`]);
  });

  test('the turn limit compensates by default', async () => {
    const run = await runSaga(
      'turn-limit',
      [{ toolCalls: [ORDER_BOOK] }, { toolCalls: [ROOM] }, { toolCalls: [ORDER_PENS] }, FINAL],
      {
        limits: { maxTurns: 2 },
      },
    );
    expect(run.result.status).toBe('compensated');
    expect(run.result.reason).toContain('limit of 2 model turns');
    expect(callsOf(run.calls, 'create_order', 'book_room').map((c) => c.stepId)).toEqual([1, 2]);
    expect(callsOf(run.calls, ...UNDO_TOOLS).map((c) => [c.tool, c.input.originalKey])).toEqual([
      ['cancel_room', `${run.runKey}/2`],
      ['cancel_order', `${run.runKey}/1`],
    ]);
  });

  test('the step limit compensates by default, before running a turn that would pass it', async () => {
    const run = await runSaga(
      'step-limit',
      [{ toolCalls: [ORDER_BOOK, ORDER_PENS] }, { toolCalls: [ROOM, ORDER_BOOK] }, FINAL],
      {
        limits: { maxSteps: 3 },
      },
    );
    expect(run.result.status).toBe('compensated');
    expect(run.result.reason).toContain('limit of 3 tool calls');
    expect(callsOf(run.calls, 'book_room')).toEqual([]);
    expect(originalKeys(callsOf(run.calls, ...UNDO_TOOLS))).toEqual([`${run.runKey}/2`, `${run.runKey}/1`]);
  });

  test('a limit ends the run failed without compensating when compensateOnLimit is false', async () => {
    const run = await runSaga('limit-no-undo', [{ toolCalls: [ORDER_BOOK] }, { toolCalls: [ROOM] }, FINAL], {
      limits: { maxTurns: 1 },
      failurePolicy: { compensateOnLimit: false },
    });
    expect(run.result.status).toBe('failed');
    expect(run.result.reason).toContain('limit of 1 model turns');
    expect(callsOf(run.calls, ...UNDO_TOOLS)).toEqual([]);
    expect(run.runStatusAttribute).toBe('failed');
  });
});

describe('effect tiers', () => {
  test('a compensable call after an unguarded irreversible call is refused with POLICY_VIOLATION and never runs', async () => {
    const run = await runSaga('policy-violation', [
      { toolCalls: [ORDER_BOOK] },
      { toolCalls: [call('send_invoice', { to: 'ada@example.com' })] },
      { toolCalls: [ORDER_PENS] },
      FINAL,
    ]);
    expect(run.result.status).toBe('completed');
    expect(run.result.steps[2]).toMatchObject({
      tool: 'create_order',
      status: 'failed',
      observation: { status: 'error', code: 'POLICY_VIOLATION', retryable: false, attempts: 0 },
    });
    expect(callsOf(run.calls, 'create_order').map((c) => c.stepId)).toEqual([1]);
    // The one create_order that ran: a regular activity, or on the fast path (the default) a local one (a marker).
    const events = run.history.events ?? [];
    const scheduledOrders = events.filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'create_order',
    );
    const localOrders = localActivities(events).filter((a) => a.type === 'create_order');
    expect(scheduledOrders.length + localOrders.length).toBe(1);
    expect(run.result.policyWarnings.join('\n')).toContain('"send_invoice" is irreversible');
  });
});
