import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from '@temporalio/worker';
import { startAgentRun, waitForAgentRun, type AgentRunHandle } from '../../src/client/agent-run-client';
import type { AgentRunInput, AgentRunResult } from '../../src/contract/agent-run-types';
import type { ModelProvider, TranscriptMessage } from '../../src/contract/model-types';
import { FAST_PATH_LIMITS } from '../../src/contract/fast-path';
import { scriptedModel } from '../../src/model/scripted-model';
import { callTurn, runToEnd, scriptedRun } from '../support/agent-runs';
import {
  countedModelCalls,
  countedScriptedModel,
  createFastPathTools,
  createFusedStepTools,
  startGateServer,
  type GateServer,
} from '../support/fast-path-tools';
import { FAST_PATH_WORKER } from '../support/fast-path-worker';
import { startLedgerServer, type LedgerServer } from '../support/ledger-server';
import { createSqliteTestWorker } from '../support/sqlite-test-worker';
import { testServer, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { localActivities, recordedPatches, type HistoryEvent } from '../support/history-markers';
import { ENGINE_FAST_DEFAULT_PATCH } from '../../src/workflows/engine-patches';
import { approveWhenPending } from '../support/approval-runs';
import { spawnTestWorkerProcess } from '../support/worker-process';

/**
 * The fast path (issue 23, docs/fast-path.md): short tool calls and the model turns run as local activities
 * inside one workflow task. A worker process SIGKILLed in the middle of such a task (after a payment and two
 * model turns ran locally: the worker kills itself when the next local call reaches the gate) loses the task; the task is retried on
 * another worker, which runs its local activities again: the payment replays from the key store and the model
 * turns from their records, so the ledger sees one payment and the model is asked each turn once.
 */

const temporal = useTestTemporal();
let ledger: LedgerServer;
let gate: GateServer;
let workDir: string;

/** A fused step's local activity: the first of a run reads the catalog too (docs/fast-path.md, "The first step"). */
function isFusedStep(type: string | undefined): boolean {
  return type === 'callModelAndTools' || type === 'describeToolsAndCallModel';
}

function scheduledActivities(events: HistoryEvent[]): string[] {
  return events
    .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
    .filter((name): name is string => typeof name === 'string');
}

async function historyOf(handle: AgentRunHandle): Promise<HistoryEvent[]> {
  return (await handle.fetchHistory()).events ?? [];
}

/**
 * Starts a worker process that SIGKILLs itself when a local call reaches the gate (`dieAtGate`); resolves, once it
 * polls, with its exit signal still to come (wrapped: an async function would wait for a returned promise).
 */
async function workerDyingAtTheGate(
  taskQueue: string,
  keysPath: string,
  modelLog: string,
): Promise<{ exit: Promise<NodeJS.Signals | null> }> {
  const first: ChildProcess = await spawnTestWorkerProcess(FAST_PATH_WORKER, taskQueue, {
    keysPath,
    ledgerUrl: ledger.url,
    gateUrl: gate.url,
    modelLog,
    dieAtGate: '1',
  });
  return {
    exit: new Promise<NodeJS.Signals | null>((resolveExit) =>
      first.once('exit', (_code, signal) => resolveExit(signal)),
    ),
  };
}

/** Opens the gate and lets a second worker on the same key store take the run over until it ends. */
async function finishOnASecondWorker(
  taskQueue: string,
  keysPath: string,
  handle: AgentRunHandle,
  modelProviders?: Record<string, ModelProvider>,
): Promise<AgentRunResult> {
  gate.open();
  const second = await createSqliteTestWorker(
    temporal,
    taskQueue,
    { keysPath },
    {
      tools: createFastPathTools({ ledgerUrl: ledger.url, gateUrl: gate.url }),
      ...(modelProviders ? { modelProviders } : {}),
    },
  );
  const result = await second.worker.runUntil(waitForAgentRun(handle));
  await second.close();
  return result;
}

beforeAll(async () => {
  ledger = await startLedgerServer();
  gate = await startGateServer();
  workDir = mkdtempSync(join(tmpdir(), 'fast-path-'));
});
afterAll(async () => {
  await gate.close();
  await ledger.close();
});

describe('a worker SIGKILLed in the middle of a workflow task of local activities', () => {
  const taskQueue = uniqueTaskQueue('fast-path-kill');
  const keysPath = () => join(workDir, 'kill-keys.sqlite');
  const modelLog = () => join(workDir, 'kill-model.log');
  let handle: AgentRunHandle;
  let result: AgentRunResult;
  let events: HistoryEvent[];

  beforeAll(async () => {
    const killed = await workerDyingAtTheGate(taskQueue, keysPath(), modelLog());
    const script = [callTurn('pay_fast', { amount: 7 }), callTurn('wait_at_gate')];
    handle = await startAgentRun(
      temporal.client,
      { goal: 'Pay, then wait at the gate.', model: { provider: 'counted', script }, fastPath: true },
      { taskQueue },
    );
    // The payment and two model turns ran locally; the worker killed itself at the gate, its task still open.
    expect(await killed.exit).toBe('SIGKILL');
    result = await finishOnASecondWorker(taskQueue, keysPath(), handle, { counted: countedScriptedModel(modelLog()) });
    events = await historyOf(handle);
  }, 240_000);

  test('the workflow task that ran the local activities was retried', () => {
    expect(events.some((e) => e.workflowTaskTimedOutEventAttributes || e.workflowTaskFailedEventAttributes)).toBe(true);
    expect(result.status).toBe('completed');
  });

  test('ran its steps fused: the payment and the gate inside their turns, one local activity per step', () => {
    // (A turn of the worker that took over may be asked twice: once with the transcript delta, which that
    // worker does not have, then whole.)
    const local = localActivities(events).map((a) => a.type);
    expect(local.length).toBeGreaterThanOrEqual(3);
    expect(new Set(local)).toEqual(new Set(['describeToolsAndCallModel', 'callModelAndTools']));
  });

  test('the payment happened once: the retried task replayed it from the key store', () => {
    const key = `${handle.workflowId}/${handle.firstExecutionRunId}/1`;
    expect(ledger.effects.filter((e) => e.key === key)).toHaveLength(1);
    expect(result.steps[0]).toMatchObject({ tool: 'pay_fast', status: 'succeeded', observation: { replayed: true } });
  });

  test('the model was asked each turn once: the retried task reused the recorded turns', () => {
    expect(countedModelCalls(modelLog())).toEqual([1, 2, 3]);
  });
});

describe("a fast-path run started without a workflowTaskTimeout (the fast path's 4 s) whose worker dies after it continued as new", () => {
  const taskQueue = uniqueTaskQueue('fast-path-task-timeout');
  const keysPath = () => join(workDir, 'task-timeout-keys.sqlite');
  let handle: AgentRunHandle;
  let result: AgentRunResult;
  let firstGeneration: HistoryEvent[];
  let lastGeneration: HistoryEvent[];

  beforeAll(async () => {
    const killed = await workerDyingAtTheGate(taskQueue, keysPath(), join(workDir, 'task-timeout-model.log'));
    const script = [callTurn('pay_fast', { amount: 3 }), callTurn('wait_at_gate')];
    handle = await startAgentRun(
      temporal.client,
      {
        goal: 'Pay, continue as new, then wait at the gate.',
        model: { provider: 'scripted', script },
        fastPath: true,
        continueAsNewAfterSteps: 1,
      },
      { taskQueue },
    );
    expect(await killed.exit).toBe('SIGKILL');
    result = await finishOnASecondWorker(taskQueue, keysPath(), handle);
    firstGeneration = (
      await temporal.client.workflow.getHandle(handle.workflowId, handle.firstExecutionRunId).fetchHistory()
    ).events!;
    lastGeneration = (await temporal.client.workflow.getHandle(handle.workflowId).fetchHistory()).events!;
  }, 240_000);

  const taskTimeoutsOf = (events: HistoryEvent[]) =>
    events
      .map((e) => e.workflowTaskScheduledEventAttributes?.startToCloseTimeout?.seconds)
      .filter((seconds) => seconds !== undefined && seconds !== null)
      .map(Number);

  test('schedules its workflow tasks with the 4 s timeout, in the generation after the continue-as-new too', () => {
    expect(firstGeneration.some((e) => e.workflowExecutionContinuedAsNewEventAttributes)).toBe(true);
    expect(lastGeneration).not.toBe(firstGeneration);
    expect(new Set(taskTimeoutsOf(firstGeneration))).toEqual(new Set([4]));
    expect(new Set(taskTimeoutsOf(lastGeneration))).toEqual(new Set([4]));
  });

  test('the run its first worker died in completed on the new worker, the payment made once', () => {
    expect(result.status).toBe('completed');
    const key = `${handle.workflowId}/${handle.firstExecutionRunId}/1`;
    expect(ledger.effects.filter((e) => e.key === key)).toHaveLength(1);
  });
});

describe('a fast-path run without fused steps', () => {
  const taskQueue = uniqueTaskQueue('fast-path-history');
  let handle: AgentRunHandle;
  let result: AgentRunResult;
  let events: HistoryEvent[];

  beforeAll(async () => {
    gate.open();
    const { worker, close } = await createSqliteTestWorker(
      temporal,
      taskQueue,
      { keysPath: join(workDir, 'history-keys.sqlite') },
      { tools: createFastPathTools({ ledgerUrl: ledger.url, gateUrl: gate.url }) },
    );
    const finished = await runToEnd(
      worker,
      temporal.client,
      taskQueue,
      scriptedRun(
        'Pay twice, then report.',
        [callTurn('pay_fast', { amount: 1 }), callTurn('pay_fast', { amount: 2 }), callTurn('slow_report')],
        { fastPath: { maxLocalCallsPerTask: 3, fusedSteps: false } },
      ),
    );
    await close();
    ({ handle, result } = finished);
    events = await historyOf(handle);
  }, 120_000);

  test('runs its short calls and model turns as local activities, shown as markers named after the tool', () => {
    expect(result.status).toBe('completed');
    const local = localActivities(events);
    expect(local.filter((a) => a.type === 'pay_fast').map((a) => a.summary)).toEqual([
      'pay_fast {"amount":1}',
      'pay_fast {"amount":2}',
    ]);
    expect(local.filter((a) => a.type === 'callModelOnce').length).toBeGreaterThanOrEqual(2);
    expect(local.find((a) => a.type === 'callModelOnce')?.summary).toMatch(/turn 1/);
  });

  test('runs a call that does not qualify (a 60 s attempt timeout) as a regular activity', () => {
    expect(scheduledActivities(events)).toContain('slow_report');
    expect(localActivities(events).map((a) => a.type)).not.toContain('slow_report');
  });

  test('ends the workflow task after maxLocalCallsPerTask local calls: the next turn is a regular activity', () => {
    // Turn 1, pay 1, turn 2 and pay 2 run locally; turn 3 comes after 3 local calls: a regular activity, as is
    // slow_report; the last turn is local again.
    expect(scheduledActivities(events).filter((name) => name === 'callModel')).toHaveLength(1);
    expect(localActivities(events).map((a) => a.type)).toEqual([
      'describeTools',
      'callModelOnce',
      'pay_fast',
      'callModelOnce',
      'pay_fast',
      'callModelOnce',
    ]);
  });

  test("reads the worker's tool catalog with a local activity, not a scheduled one", () => {
    expect(scheduledActivities(events)).not.toContain('describeTools');
    expect(localActivities(events).find((a) => a.type === 'describeTools')?.summary).toBe('tool catalog');
  });

  test('replays its history deterministically', async () => {
    const history = await handle.fetchHistory();
    await expect(
      Worker.runReplayHistory({ workflowBundle: { codePath: testServer().bundlePath } }, history),
    ).resolves.toBeUndefined();
  });
});

describe('a fast-path run with fused steps, chained turns off', () => {
  const taskQueue = uniqueTaskQueue('fast-path-fused');
  const modelLog = () => join(workDir, 'fused-model.log');
  let handle: AgentRunHandle;
  let result: AgentRunResult;
  let events: HistoryEvent[];
  const keyOf = (stepId: number) => `${handle.workflowId}/${handle.firstExecutionRunId}/${stepId}`;
  const effectsOf = (stepId: number) => ledger.effects.filter((e) => e.key === keyOf(stepId));

  beforeAll(async () => {
    gate.open();
    const { worker, close } = await createSqliteTestWorker(
      temporal,
      taskQueue,
      { keysPath: join(workDir, 'fused-keys.sqlite') },
      {
        tools: [
          ...createFastPathTools({ ledgerUrl: ledger.url, gateUrl: gate.url }),
          ...createFusedStepTools({ ledgerUrl: ledger.url }),
        ],
        modelProviders: { counted: countedScriptedModel(modelLog()) },
      },
    );
    const script = [
      callTurn('book_fast', { amount: 5 }),
      {
        toolCalls: [
          { name: 'pay_fast', arguments: { amount: 1 } },
          { name: 'pay_fast', arguments: { amount: 2 } },
        ],
      },
      callTurn('pay_flaky', { amount: 3 }),
      callTurn('pay_checked', { amount: 4 }),
      callTurn('slow_report'),
      { text: 'Done.', final: true },
    ];
    result = await worker.runUntil(async () => {
      handle = await startAgentRun(
        temporal.client,
        {
          goal: 'Book, pay, report.',
          model: { provider: 'counted', script },
          fastPath: { chainedTurns: false },
        },
        { taskQueue },
      );
      await approveWhenPending(temporal.client, handle.workflowId, 'pay_checked');
      return waitForAgentRun(handle);
    });
    await close();
    events = await historyOf(handle);
  }, 120_000);

  test('records one local activity per fused step: the turn, with the calls it ran inside it', () => {
    expect(result.status).toBe('completed');
    const local = localActivities(events).map((a) => a.type);
    // The first fused step reads the catalog too (docs/fast-path.md, "The first step").
    expect(local.filter(isFusedStep)).toEqual(['describeToolsAndCallModel', ...Array(5).fill('callModelAndTools')]);
    expect(local).not.toContain('pay_fast');
    expect(local).not.toContain('callModelOnce');
    expect(result.steps.slice(1, 3)).toMatchObject([
      { stepId: 2, tool: 'pay_fast', status: 'succeeded', observation: { status: 'ok' } },
      { stepId: 3, tool: 'pay_fast', status: 'succeeded', observation: { status: 'ok' } },
    ]);
    expect(effectsOf(2)).toHaveLength(1);
    expect(effectsOf(3)).toHaveLength(1);
  });

  test('names the turn and the tools it may run in the summary of a fused step', () => {
    const summaries = localActivities(events)
      .filter((a) => isFusedStep(a.type))
      .map((a) => a.summary);
    expect(summaries[0]).toMatch(/^model turn 1 .* · reads the tool catalog, then its cleared tools$/);
    expect(summaries[1]).toMatch(/^model turn 2 .* · then .*pay_fast/);
  });

  test('asks the model once per turn', () => {
    expect(countedModelCalls(modelLog())).toEqual([1, 2, 3, 4, 5, 6]);
  });

  test('leaves a call of a tool with an undo tool to the workflow: its own local activity, its compensation registered', () => {
    expect(localActivities(events).map((a) => a.type)).toContain('book_fast');
    expect(result.steps[0]).toMatchObject({ tool: 'book_fast', status: 'succeeded', undo: 'cancel_fast' });
    expect(effectsOf(1)).toHaveLength(1);
  });

  test('retries a call that failed inside the fused step as its own local activity, with one effect', () => {
    expect(localActivities(events).filter((a) => a.type === 'pay_flaky')).toHaveLength(1);
    expect(result.steps[3]).toMatchObject({ tool: 'pay_flaky', status: 'succeeded' });
    expect(effectsOf(4)).toHaveLength(1);
  });

  test('runs a call that needed an approval and a long-timeout call as regular activities', () => {
    expect(scheduledActivities(events)).toEqual(expect.arrayContaining(['pay_checked', 'slow_report']));
    const local = localActivities(events).map((a) => a.type);
    expect(local).not.toContain('pay_checked');
    expect(local).not.toContain('slow_report');
    expect(effectsOf(5)).toHaveLength(1);
  });

  test('replays its history deterministically', async () => {
    const history = await handle.fetchHistory();
    await expect(
      Worker.runReplayHistory({ workflowBundle: { codePath: testServer().bundlePath } }, history),
    ).resolves.toBeUndefined();
  });
});

describe('a fast-path run with chained turns', () => {
  const taskQueue = uniqueTaskQueue('fast-path-chained');
  const script = [
    ...[1, 2, 3, 4, 5, 6].map((amount) => callTurn('pay_fast', { amount })),
    {
      toolCalls: [
        { name: 'pay_fast', arguments: { amount: 7 } },
        { name: 'pay_fast', arguments: { amount: 8 } },
      ],
    },
    { text: 'Paid eight times.', final: true },
  ];
  /** What the model was shown at each turn, by the run's goal (each run has its own). */
  const shown = new Map<string, TranscriptMessage[][]>();
  const recordingModel: ModelProvider = async (request) => {
    const turns = shown.get(request.goal) ?? [];
    turns.push(structuredClone([...request.transcript]));
    shown.set(request.goal, turns);
    return scriptedModel(request);
  };
  const runs: Record<'chained' | 'unchained', { handle: AgentRunHandle; result: AgentRunResult }> = {} as never;
  let events: HistoryEvent[];
  const keyOf = (stepId: number) => {
    const { handle } = runs.chained;
    return `${handle.workflowId}/${handle.firstExecutionRunId}/${stepId}`;
  };
  /** A transcript without its goal and with the ledger's effect ids (they differ between runs) left out. */
  const comparable = (transcripts: TranscriptMessage[][] | undefined) =>
    JSON.parse(JSON.stringify((transcripts ?? []).map((messages) => messages.slice(1))).replace(/"eff_\d+"/g, '"eff"'));

  beforeAll(async () => {
    const { worker, close } = await createSqliteTestWorker(
      temporal,
      taskQueue,
      { keysPath: join(workDir, 'chained-keys.sqlite') },
      {
        tools: createFastPathTools({ ledgerUrl: ledger.url, gateUrl: gate.url }),
        modelProviders: { recording: recordingModel },
      },
    );
    await worker.runUntil(async () => {
      const run = async (goal: string, fastPath: AgentRunInput['fastPath']) => {
        const handle = await startAgentRun(
          temporal.client,
          { goal, model: { provider: 'recording', script }, fastPath },
          { taskQueue },
        );
        return { handle, result: await waitForAgentRun(handle) };
      };
      // A budget no loaded machine reaches: the chain ends where the run's rules end it, not by the clock.
      runs.chained = await run('Pay eight times (chained).', { chainBudgetMs: 60_000 });
      runs.unchained = await run('Pay eight times (one turn per step).', { chainedTurns: false });
    });
    await close();
    events = await historyOf(runs.chained.handle);
  }, 120_000);

  test('takes all its turns and calls in one local activity: the first fused step chained the turns after it', () => {
    expect(runs.chained.result).toMatchObject({ status: 'completed', answer: 'Paid eight times.', stepCount: 8 });
    expect(localActivities(events).map((a) => a.type)).toEqual(['describeToolsAndCallModel']);
    expect(scheduledActivities(events)).toEqual([]);
  });

  test('records every step as the workflow would have, each call made once under its key', () => {
    const steps = (result: AgentRunResult) =>
      result.steps.map((step) => [step.stepId, step.tool, step.status, step.turn, step.arguments]);
    expect(steps(runs.chained.result)).toEqual(steps(runs.unchained.result));
    expect(steps(runs.chained.result).map(([stepId, , , turn]) => [stepId, turn])).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 4],
      [5, 5],
      [6, 6],
      [7, 7],
      [8, 7],
    ]);
    for (let stepId = 1; stepId <= 8; stepId += 1) {
      expect(ledger.effects.filter((e) => e.key === keyOf(stepId))).toHaveLength(1);
    }
  });

  test('shows the model at each turn exactly what a run without chained turns shows it', () => {
    const chained = comparable(shown.get('Pay eight times (chained).'));
    expect(chained).toHaveLength(8);
    expect(chained).toEqual(comparable(shown.get('Pay eight times (one turn per step).')));
    // The last turn saw every call's observation.
    expect(chained[7].filter((m: TranscriptMessage) => m.role === 'tool')).toHaveLength(8);
  });

  test('replays its history deterministically', async () => {
    const history = await runs.chained.handle.fetchHistory();
    await expect(
      Worker.runReplayHistory({ workflowBundle: { codePath: testServer().bundlePath } }, history),
    ).resolves.toBeUndefined();
  });
});

describe('a run that says nothing of the fast path (the default) and one that opts out with fastPath: false', () => {
  const taskQueue = uniqueTaskQueue('fast-path-default');
  const script = [callTurn('pay_fast', { amount: 11 }), callTurn('slow_report'), { text: 'Paid.', final: true }];
  const runs: Record<'default' | 'optedOut', { handle: AgentRunHandle; result: AgentRunResult }> = {} as never;
  const events: Record<'default' | 'optedOut', HistoryEvent[]> = {} as never;
  const keyOf = (handle: AgentRunHandle) => `${handle.workflowId}/${handle.firstExecutionRunId}/1`;

  beforeAll(async () => {
    gate.open();
    const { worker, close } = await createSqliteTestWorker(
      temporal,
      taskQueue,
      { keysPath: join(workDir, 'default-keys.sqlite') },
      { tools: createFastPathTools({ ledgerUrl: ledger.url, gateUrl: gate.url }) },
    );
    await worker.runUntil(async () => {
      const run = async (input: AgentRunInput) => {
        const handle = await startAgentRun(temporal.client, input, { taskQueue });
        return { handle, result: await waitForAgentRun(handle) };
      };
      runs.default = await run(scriptedRun('Pay, then report.', script));
      runs.optedOut = await run(scriptedRun('Pay, then report, regular.', script, { fastPath: false }));
    });
    await close();
    events.default = await historyOf(runs.default.handle);
    events.optedOut = await historyOf(runs.optedOut.handle);
  }, 120_000);

  test('the default runs its short calls and turns locally: the history shows one fused step and no scheduled pay_fast', () => {
    expect(runs.default.result).toMatchObject({ status: 'completed', answer: 'Paid.', stepCount: 2 });
    expect(localActivities(events.default).map((a) => a.type)).toContain('describeToolsAndCallModel');
    expect(scheduledActivities(events.default)).not.toContain('pay_fast');
  });

  test('the default still runs a call that does not qualify (a 60 s attempt timeout) as a regular activity', () => {
    expect(scheduledActivities(events.default)).toContain('slow_report');
    expect(localActivities(events.default).map((a) => a.type)).not.toContain('slow_report');
  });

  test('both record the one patch of the engine that has the fast path by default', () => {
    expect(recordedPatches(events.default)).toContain(ENGINE_FAST_DEFAULT_PATCH);
    expect(recordedPatches(events.optedOut)).toContain(ENGINE_FAST_DEFAULT_PATCH);
  });

  test('fastPath: false runs every step as a regular activity, with no local activity', () => {
    expect(runs.optedOut.result).toMatchObject({ status: 'completed', answer: 'Paid.', stepCount: 2 });
    expect(localActivities(events.optedOut)).toEqual([]);
    expect(scheduledActivities(events.optedOut)).toEqual([
      'describeTools',
      'callModel',
      'pay_fast',
      'callModel',
      'slow_report',
      'callModel',
    ]);
  });

  test('each run paid once, under its own key', () => {
    for (const { handle } of [runs.default, runs.optedOut]) {
      expect(ledger.effects.filter((e) => e.key === keyOf(handle))).toHaveLength(1);
    }
  });

  test('both histories replay deterministically', async () => {
    for (const { handle } of [runs.default, runs.optedOut]) {
      const history = await handle.fetchHistory();
      await expect(
        Worker.runReplayHistory({ workflowBundle: { codePath: testServer().bundlePath } }, history),
      ).resolves.toBeUndefined();
    }
  });
});

describe('the workflow task timeout a run starts with', () => {
  const taskQueue = uniqueTaskQueue('fast-path-task-timeout-default'); // no worker polls it
  const input = { goal: 'Nothing', model: { provider: 'scripted', script: [], finalText: 'Done.' } } as const;

  /** The run's workflow task timeout in seconds, read from the server; the run is terminated after. */
  async function taskTimeoutSecondsOf(handle: AgentRunHandle): Promise<number> {
    try {
      const { raw } = await handle.describe();
      return Number(raw.executionConfig?.defaultWorkflowTaskTimeout?.seconds);
    } finally {
      await handle.terminate('test over');
    }
  }

  test("is the fast path's 4 s for a run that asks for the fast path", async () => {
    const handle = await startAgentRun(temporal.client, { ...input, fastPath: { chainedTurns: false } }, { taskQueue });
    expect(await taskTimeoutSecondsOf(handle)).toBe(FAST_PATH_LIMITS.workflowTaskTimeoutMs / 1000);
  });

  test("is the fast path's 4 s for a run that says nothing of the fast path (its default)", async () => {
    const handle = await startAgentRun(temporal.client, input, { taskQueue });
    expect(await taskTimeoutSecondsOf(handle)).toBe(FAST_PATH_LIMITS.workflowTaskTimeoutMs / 1000);
  });

  test("is Temporal's 10 s for a run that opts out of the fast path (fastPath: false)", async () => {
    const handle = await startAgentRun(temporal.client, { ...input, fastPath: false }, { taskQueue });
    expect(await taskTimeoutSecondsOf(handle)).toBe(10);
  });

  test("is the caller's when startAgentRun is given one, fast path or not", async () => {
    const handle = await startAgentRun(
      temporal.client,
      { ...input, fastPath: true },
      { taskQueue, workflowTaskTimeout: '7s' },
    );
    expect(await taskTimeoutSecondsOf(handle)).toBe(7);
  });
});
