import { z } from 'zod';
import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import {
  getAgentRunState,
  startAgentRun,
  waitForAgentRun,
  type AgentRunHandle,
} from '../../src/client/agent-run-client';
import { approveStep, getPendingApprovals } from '../../src/client/approval-client';
import type { AgentRunInput } from '../../src/contract/agent-run-types';
import type { ModelProvider } from '../../src/contract/model-types';
import { DESCRIBE_TOOLS_TOOL } from '../../src/contract/tool-disclosure';
import { scriptedModel, type ScriptedTurn } from '../../src/model/scripted-model';
import { createWorker } from '../../src/runtime/create-worker';
import { MemoryIdempotencyStore } from '../../src/stores/idempotency/memory-idempotency-store';
import { defineTool } from '../../src/tools/define-tool';
import { ENGINE_FAST_DEFAULT_PATCH } from '../../src/workflows/engine-patches';
import { localActivities as markers, recordedPatches, type HistoryEvent } from '../support/history-markers';
import { cancelAndWait } from '../support/run-outcome';
import { testServer, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

/**
 * The first step of a fast-path run (docs/fast-path.md, "The first step"): one local activity reads the tool
 * catalog, clears its tools as the workflow would, asks the first turn and runs its cleared calls. Whatever the
 * first turn does, the run ends as one whose catalog was read first would.
 */

const temporal = useTestTemporal();

/** The payments made, by idempotency key. */
const payments: string[] = [];
const pay = defineTool({
  name: 'pay',
  description: 'Pays an amount.',
  input: z.object({ amount: z.number() }),
  output: z.object({ paid: z.number() }),
  effect: 'irreversible',
  approval: 'never',
  idempotent: false,
}).implement(async ({ amount }, ctx) => {
  payments.push(ctx.idempotencyKey);
  return { paid: amount };
});
const lookup = defineTool({
  name: 'lookup',
  description: 'Looks an order up.',
  input: z.object({ orderId: z.string() }),
  output: z.object({ found: z.boolean() }),
  effect: 'read-only',
}).implement(async () => ({ found: true }));

/** The tool names the model was shown at each turn, by the run's goal. */
const shown = new Map<string, string[][]>();
let asked = 0;
const providers: Record<string, ModelProvider> = {
  recording: async (request) => {
    shown.set(request.goal, [...(shown.get(request.goal) ?? []), request.tools.map((tool) => tool.name)]);
    return scriptedModel(request);
  },
  broken: async () => ({ toolCalls: 'call everything' }) as never,
  // A first turn over the first step's bound: a payment, then a lookup with 300 KB of arguments (too large to run).
  large: async (request) => {
    shown.set(request.goal, [...(shown.get(request.goal) ?? []), request.tools.map((tool) => tool.name)]);
    if (request.turn > 0) return { text: 'Done.', toolCalls: [], done: true };
    const toolCalls = [
      { id: 'c1', name: 'pay', arguments: { amount: 8 } },
      { id: 'c2', name: 'lookup', arguments: { orderId: 'x'.repeat(300 * 1024) } },
    ];
    return { toolCalls, done: false };
  },
  hanging: (_request, { signal }) => {
    asked += 1;
    return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
  },
};

const payTurn = (amount: number): ScriptedTurn => ({ toolCalls: [{ name: 'pay', arguments: { amount } }] });
const answer: ScriptedTurn = { text: 'Done.', final: true };

/** Runs `body` with a worker of the two tools and the test's model providers. */
async function withWorker<T>(name: string, body: (taskQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = uniqueTaskQueue(name);
  const { namespace, bundlePath } = testServer();
  const { worker, close } = await createWorker({
    // Stores not given here stay in memory (durable ones are the default).
    stores: 'memory',
    tools: [pay, lookup],
    connection: temporal.nativeConnection,
    settings: { namespace, taskQueue },
    workflowBundle: { codePath: bundlePath },
    idempotencyStore: new MemoryIdempotencyStore(),
    modelProviders: providers,
  });
  try {
    return await worker.runUntil(() => body(taskQueue));
  } finally {
    await close();
  }
}

async function start(taskQueue: string, input: Partial<AgentRunInput> & Pick<AgentRunInput, 'goal'>) {
  return startAgentRun(
    temporal.client,
    { model: { provider: 'recording', script: [payTurn(5), answer] }, fastPath: true, ...input },
    { taskQueue },
  );
}

async function historyOf(handle: AgentRunHandle): Promise<HistoryEvent[]> {
  return (await handle.fetchHistory()).events ?? [];
}

/** The local activities of a history, by type, in order. */
const localActivities = (events: HistoryEvent[]): string[] => markers(events).map((a) => a.type);

describe("a fast-path run's first step", () => {
  test('reads the catalog and runs the first turn and its payment in one local activity, recording one patch', async () => {
    const { result, events, handle } = await withWorker('first-step', async (taskQueue) => {
      const handle = await start(taskQueue, { goal: 'Pay five.' });
      return { handle, result: await waitForAgentRun(handle), events: await historyOf(handle) };
    });
    expect(result).toMatchObject({ status: 'completed', answer: 'Done.', stepCount: 1 });
    expect(result.steps[0]).toMatchObject({
      tool: 'pay',
      status: 'succeeded',
      observation: { status: 'ok', output: { paid: 5 } },
    });
    expect(localActivities(events)).toEqual(['describeToolsAndCallModel']);
    // The engine's newest patch, which implies the first step (engine-patches.ts).
    expect(recordedPatches(events)).toEqual([ENGINE_FAST_DEFAULT_PATCH]);
    expect(payments).toContain(`${handle.workflowId}/${handle.firstExecutionRunId}/1`);
    expect(payments.filter((key) => key.startsWith(handle.workflowId))).toHaveLength(1);
  });

  test('shows the first turn the summary view when the catalog is over the run’s disclosure budget', async () => {
    const result = await withWorker('first-step-disclosure', async (taskQueue) =>
      waitForAgentRun(await start(taskQueue, { goal: 'Pay six, disclosed.', toolDisclosure: { maxTools: 1 } })),
    );
    expect(result.status).toBe('completed');
    expect(result.steps[0]).toMatchObject({ tool: 'pay', status: 'succeeded' });
    const turns = shown.get('Pay six, disclosed.')!;
    expect(turns[0]).toContain(DESCRIBE_TOOLS_TOOL);
    expect(turns[1]).toEqual(turns[0]);
  });

  test("leaves a call the run's policy makes ask to the approval gate: nothing is paid before the approval", async () => {
    const { result, paidBefore, handle } = await withWorker('first-step-approval', async (taskQueue) => {
      const handle = await start(taskQueue, { goal: 'Pay seven, approved.', approval: { requireForEffects: true } });
      const [pending] = await waitFor('the payment to wait for approval', async () => {
        const found = await getPendingApprovals(temporal.client, handle.workflowId);
        return found.length > 0 ? found : undefined;
      });
      const paidBefore = payments.filter((key) => key.startsWith(handle.workflowId)).length;
      await approveStep(temporal.client, handle.workflowId, {
        stepId: pending!.stepId,
        digest: pending!.digest,
        approver: 'test',
      });
      return { handle, paidBefore, result: await waitForAgentRun(handle) };
    });
    expect(paidBefore).toBe(0);
    expect(result.status).toBe('completed');
    expect(result.steps[0]).toMatchObject({ tool: 'pay', status: 'succeeded', approval: { decision: 'approved' } });
    expect(payments.filter((key) => key.startsWith(handle.workflowId))).toHaveLength(1);
  });

  test('a first turn too large to return with the catalog is asked again by the run: its record answers, nothing is paid twice', async () => {
    const { result, events, handle } = await withWorker('first-step-large', async (taskQueue) => {
      const handle = await start(taskQueue, { goal: 'Pay eight, large.', model: { provider: 'large' } });
      return { handle, result: await waitForAgentRun(handle), events: await historyOf(handle) };
    });
    expect(result.status).toBe('completed');
    expect(result.steps.map((step) => [step.tool, step.status])).toEqual([
      ['pay', 'succeeded'],
      ['lookup', 'failed'],
    ]);
    // The first step, then turn 1 asked again (its record answers) and turn 2, each a fused step.
    expect(localActivities(events)).toEqual(['describeToolsAndCallModel', 'callModelAndTools', 'callModelAndTools']);
    expect(shown.get('Pay eight, large.')).toHaveLength(2);
    expect(payments.filter((key) => key.startsWith(handle.workflowId))).toHaveLength(1);
  });

  test('a first turn the model gets wrong fails the run as it fails one whose catalog was read first', async () => {
    const results = await withWorker('first-step-broken', async (taskQueue) => {
      const broken = { model: { provider: 'broken' } };
      const fast = await start(taskQueue, { goal: 'Broken, fast.', ...broken });
      const regular = await start(taskQueue, { goal: 'Broken, regular.', ...broken, fastPath: false });
      return {
        fast: await waitForAgentRun(fast),
        regular: await waitForAgentRun(regular),
        fastState: await getAgentRunState(temporal.client, fast.workflowId),
        fastEvents: await historyOf(fast),
      };
    });
    expect(results.fast.status).toBe('failed');
    expect(results.fast.reason).toContain('MODEL_OUTPUT_INVALID');
    expect(results.fast.reason).toContain('"toolCalls":"call everything"');
    expect(results.regular.status).toBe('failed');
    expect(results.fastState.status).toBe('failed');
    // The step failed, then the catalog was read on its own for the run's end.
    expect(localActivities(results.fastEvents)).toEqual(['describeToolsAndCallModel', 'describeTools']);
  });

  test('a run cancelled during its first turn ends cancelled, with its status', async () => {
    const { error, state } = await withWorker('first-step-cancel', async (taskQueue) => {
      const before = asked;
      const handle = await start(taskQueue, { goal: 'Hang.', model: { provider: 'hanging' } });
      await waitFor('the first turn to be asked', () => asked > before);
      return cancelAndWait(temporal.client, handle);
    });
    expect((error as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    expect(state.status).toBe('cancelled');
    expect(state.steps).toEqual([]);
  });
});
