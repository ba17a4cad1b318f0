import { z } from 'zod';
import { useTestTemporal, createTestWorker, uniqueTaskQueue } from '../support/temporal-test-env';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import type { ScriptedModelSettings } from '../../src/model/scripted-model';
import { compensationInput } from '../../src/tools/compensation-input';
import { defineTool } from '../../src/tools/define-tool';
import { addContract } from '../support/test-tools';
import { PermanentToolError } from '../../src/failures/tool-errors';
import type { AgentRunInput } from '../../src/contract/agent-run-types';

/**
 * Issue 5, "Done when": a 2,000-step scripted run completes across at least 2 continue-as-new generations
 * with its keys and compensations intact. The scripted model plays one turn of {@link CALLS_PER_TURN}
 * parallel calls (one compensable `reserve`, the rest read-only `add`) {@link TURNS} times; the run continues
 * as new every {@link STEPS_PER_GENERATION} steps, so steps 1-700, 701-1400 and 1401-2000 run in three
 * generations. Every key is recorded where the tools run.
 */
const TOTAL_STEPS = 2000;
const CALLS_PER_TURN = 20;
const TURNS = TOTAL_STEPS / CALLS_PER_TURN;
const STEPS_PER_GENERATION = 700;
/** Generous: the run is bound by activity round trips (~100 ms each) on a shared 2-core machine. */
const LONG_RUN_TIMEOUT_MS = 10 * 60_000;

const temporal = useTestTemporal();

/** Calls that reached the implementations, by tool. */
interface Recorded {
  /** Keys of every forward call (`reserve`, `add`, `check`), in the order they arrived. */
  forwardKeys: string[];
  /** Keys of the `reserve` calls that succeeded. */
  reserved: string[];
  /** Compensations, in the order they ran: the undo call's own key and the key it undoes. */
  releases: Array<{ key: string; originalKey: string }>;
}

/** The tools of the long run; `check` fails permanently at step `failAtStep`, if given. */
function longRunTools(failAtStep?: number) {
  const recorded: Recorded = { forwardKeys: [], reserved: [], releases: [] };
  const reserve = defineTool({
    name: 'reserve',
    description: 'Reserves one unit of stock.',
    input: z.object({ sku: z.string() }),
    output: z.object({ reservationId: z.string() }),
    effect: 'compensable',
    undo: 'release',
    idempotent: true,
  });
  const tools = [
    reserve.implement(async (_input, ctx) => {
      recorded.forwardKeys.push(ctx.idempotencyKey);
      recorded.reserved.push(ctx.idempotencyKey);
      return { reservationId: `r-${ctx.stepId}` };
    }),
    defineTool({
      name: 'release',
      description: 'Releases a reservation.',
      input: compensationInput(reserve),
      output: z.object({ released: z.boolean() }),
      effect: 'irreversible',
      idempotent: true,
    }).implement(async (input, ctx) => {
      recorded.releases.push({ key: ctx.idempotencyKey, originalKey: input.originalKey });
      return { released: true };
    }),
    addContract.implement(async (input, ctx) => {
      recorded.forwardKeys.push(ctx.idempotencyKey);
      return { sum: input.a + input.b };
    }),
    defineTool({
      name: 'check',
      description: 'Checks the batch.',
      input: z.object({}),
      output: z.object({ ok: z.boolean() }),
      effect: 'read-only',
      idempotent: true,
    }).implement(async (_input, ctx) => {
      recorded.forwardKeys.push(ctx.idempotencyKey);
      if (ctx.stepId === failAtStep) throw new PermanentToolError('The batch is inconsistent.', { code: 'CONFLICT' });
      return { ok: true };
    }),
  ];
  return { tools, recorded };
}

/** One turn: a `reserve`, then `add`s, then a `check`: {@link CALLS_PER_TURN} calls. */
const MODEL: ScriptedModelSettings = {
  provider: 'scripted',
  script: [
    {
      toolCalls: [
        { name: 'reserve', arguments: { sku: 'widget' } },
        ...Array.from({ length: CALLS_PER_TURN - 2 }, (_, i) => ({ name: 'add', arguments: { a: i, b: 1 } })),
        { name: 'check', arguments: {} },
      ],
    },
  ],
  repeat: TURNS,
  finalText: 'All batches done.',
};

async function runLong(name: string, failAtStep?: number) {
  const { tools, recorded } = longRunTools(failAtStep);
  const taskQueue = uniqueTaskQueue(name);
  const worker = await createTestWorker(temporal, { tools, taskQueue });
  const input: AgentRunInput = {
    goal: `${TOTAL_STEPS} scripted steps`,
    model: MODEL,
    parallelToolCalls: true,
    continueAsNewAfterSteps: STEPS_PER_GENERATION,
    limits: { maxSteps: TOTAL_STEPS, maxTurns: TURNS + 10 },
    ...(failAtStep !== undefined ? { failurePolicy: { criticalTools: ['check'] } } : {}),
  };
  const startedAt = Date.now();
  const { result, runKey } = await worker.runUntil(async () => {
    const handle = await startAgentRun(temporal.client, input, { taskQueue });
    // The prefix of the run's keys: workflow id and first run id (docs/run-ownership.md).
    return { runKey: `${handle.workflowId}/${handle.firstExecutionRunId}`, result: await waitForAgentRun(handle) };
  });
  const elapsedMs = Date.now() - startedAt;
  console.log(`${name}: ${TOTAL_STEPS} steps, generation ${result.generation}, ${(elapsedMs / 1000).toFixed(1)} s`);
  return { result, recorded, runKey };
}

const keysOf = (runKey: string, steps: number[]) => steps.map((n) => `${runKey}/${n}`);
const stepNumber = (key: string) => Number(key.slice(key.lastIndexOf('/') + 1));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

type LongRun = Awaited<ReturnType<typeof runLong>>;
let runs: { completes: LongRun; fails: LongRun };
// Both runs at once, each on its own task queue: a run waits on round trips to the server far more than it computes.
beforeAll(async () => {
  const [completes, fails] = await Promise.all([runLong('long-run'), runLong('long-run-fails', TOTAL_STEPS)]);
  runs = { completes, fails };
}, LONG_RUN_TIMEOUT_MS);

describe(`a ${TOTAL_STEPS}-step scripted run`, () => {
  let run: LongRun;
  beforeAll(() => {
    run = runs.completes;
  });

  test("completes with the model's final answer", () => {
    expect(run.result.status).toBe('completed');
    expect(run.result.answer).toBe('All batches done.');
  });

  test(`takes ${TOTAL_STEPS} steps over at least 2 continue-as-new generations`, () => {
    expect(run.result.stepCount).toBe(TOTAL_STEPS);
    expect(run.result.turns).toBe(TURNS + 1);
    expect(run.result.generation).toBeGreaterThanOrEqual(2);
  });

  test("shows only the last generation's steps in its final state, numbered on from the earlier ones", () => {
    const lastGenerationFirstStep = STEPS_PER_GENERATION * run.result.generation + 1;
    expect(run.result.steps.map((s) => s.stepId)).toEqual(range(lastGenerationFirstStep, TOTAL_STEPS));
    expect(run.result.steps.every((s) => s.status === 'succeeded')).toBe(true);
  });

  test('gives every tool call its own key <run key>/n for n = 1..2000, each reaching the tool once', () => {
    const { forwardKeys } = run.recorded;
    expect(forwardKeys).toHaveLength(TOTAL_STEPS);
    expect(new Set(forwardKeys).size).toBe(TOTAL_STEPS);
    expect([...forwardKeys].sort((a, b) => stepNumber(a) - stepNumber(b))).toEqual(
      keysOf(run.runKey, range(1, TOTAL_STEPS)),
    );
  });

  test('runs no compensation when it completes', () => {
    expect(run.recorded.releases).toEqual([]);
  });
});

describe(`a ${TOTAL_STEPS}-step scripted run whose last step fails critically`, () => {
  let run: LongRun;
  beforeAll(() => {
    run = runs.fails;
  });

  test('fails in its last generation after at least 2 continue-as-new and ends compensated', () => {
    expect(run.result.status).toBe('compensated');
    expect(run.result.generation).toBeGreaterThanOrEqual(2);
    expect(run.result.stepCount).toBe(TOTAL_STEPS);
    expect(run.result.reason).toContain(`Step ${TOTAL_STEPS} (check) failed permanently`);
  });

  test('compensates every reserve of every generation exactly once, newest first', () => {
    const reserveSteps = range(0, TURNS - 1).map((turn) => turn * CALLS_PER_TURN + 1);
    expect([...run.recorded.reserved].sort((a, b) => stepNumber(a) - stepNumber(b))).toEqual(
      keysOf(run.runKey, reserveSteps),
    );
    // Steps 1, 701 and 1401 each open a generation: all three generations owe compensations.
    expect(reserveSteps).toEqual(expect.arrayContaining([1, STEPS_PER_GENERATION + 1, 2 * STEPS_PER_GENERATION + 1]));
    expect(run.recorded.releases.map((r) => r.originalKey)).toEqual(keysOf(run.runKey, reserveSteps).reverse());
  });

  test('runs each compensation under the key of the step it undoes plus /undo', () => {
    expect(run.recorded.releases.length).toBeGreaterThan(0);
    for (const release of run.recorded.releases) expect(release.key).toBe(`${release.originalKey}/undo`);
  });

  test('marks the compensated steps of its last generation as compensated', () => {
    const reserveSteps = run.result.steps.filter((s) => s.tool === 'reserve');
    expect(reserveSteps.length).toBeGreaterThan(0);
    expect(reserveSteps.every((s) => s.status === 'compensated')).toBe(true);
  });
});
