/**
 * Issue 25, part 1 ("fork") on the real dev server: a five-step run books and charges on the test ledger, then
 * forks of it go on from step 3 with other models. The ledger counts every effect and its key: the forked steps
 * 1–2 run nothing again, the fork's own steps have the fork's keys, and a fork compensates only its own steps.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { AgentRunForkError } from '../../src/client/agent-run-fork-error';
import { forkAgentRun } from '../../src/client/fork-agent-run';
import type { AgentRunResult } from '../../src/contract/agent-run-types';
import type { ModelProvider, TranscriptMessage } from '../../src/contract/model-types';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import { MemoryIdempotencyStore } from '../../src/stores/idempotency/memory-idempotency-store';
import { defineTool } from '../../src/tools/define-tool';
import { callTurn, scriptedRun } from '../support/agent-runs';
import { runCliInProcess, testServerCliEnv, useProcessEnv } from '../support/cli-in-process';
import { startLedgerServer, type LedgerServer } from '../support/ledger-server';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { chargeCardTool, tripLedgerTools } from '../support/trip-ledger-tools';

let ledger: LedgerServer;
const taskQueue = uniqueTaskQueue('fork');
/** What the `recording` model was sent at each of its turns. */
const recordedTranscripts: TranscriptMessage[][] = [];
/** A model that answers at once and keeps the transcript it was sent. */
const recordingModel: ModelProvider = async ({ transcript }) => {
  recordedTranscripts.push([...transcript]);
  return { text: 'Nothing more to do.', toolCalls: [], done: true };
};

/** Releases the `hold` tool's calls: until then a run that calls it stays running. */
let releaseHold: () => void = () => undefined;
const held = new Promise<void>((resolve) => (releaseHold = resolve));
const holdTool = defineTool({
  name: 'hold',
  description: 'Waits until the test releases it.',
  input: z.object({}),
  output: z.object({ released: z.boolean() }),
  effect: 'read-only',
  idempotent: true,
}).implement(async () => (await held, { released: true }));

const temporal = useTestTemporal({
  worker: async (temporal) => {
    ledger = await startLedgerServer();
    return createTestWorker(temporal, {
      tools: [...tripLedgerTools(ledger), chargeCardTool(ledger), holdTool],
      taskQueue,
      idempotencyStore: new MemoryIdempotencyStore(),
      modelProviders: { recording: recordingModel },
    });
  },
});
afterAll(async () => {
  await ledger.close();
});

const book = (to: string): ScriptedTurn => callTurn('book_flight', { to });
const charge = (amount: number): ScriptedTurn => callTurn('charge_card', { amount });
/** A scripted model plays its turn k at the run's turn k: a fork from step 3 starts at turn 2. */
const NOT_PLAYED: ScriptedTurn = { text: 'a turn of the source, not played by the fork', final: true };

let source: AgentRunResult;
let sourceId: string;

/** The ledger effects whose key starts with `runKey/`. */
const effectsUnder = (runKey: string) => ledger.effects.filter((effect) => effect.key.startsWith(`${runKey}/`));

beforeAll(async () => {
  const handle = await startAgentRun(
    temporal.client,
    scriptedRun('Book and pay a trip', [
      book('BER'),
      charge(100),
      book('PAR'),
      charge(200),
      book('ROM'),
      { text: 'Booked.', final: true },
    ]),
    { taskQueue },
  );
  source = await waitForAgentRun(handle);
  sourceId = handle.workflowId;
});

/** Forks the source from step 3 with `script` and waits for the fork's result. */
async function forkFromStep3(script: ScriptedTurn[], more: Parameters<typeof forkAgentRun>[2]['input'] = {}) {
  const handle = await forkAgentRun(temporal.client, sourceId, {
    fromStep: 3,
    model: { provider: 'scripted', script },
    input: more,
  });
  return { handle, result: await waitForAgentRun(handle) };
}

test('the source run books and charges five times on the ledger', () => {
  expect(source.status).toBe('completed');
  expect(effectsUnder(source.runKey!).map((effect) => effect.kind)).toEqual([
    'book',
    'charge',
    'book',
    'charge',
    'book',
  ]);
});

describe('a fork from step 3 with another scripted model', () => {
  let fork: AgentRunResult;
  let effectsBefore: number;
  beforeAll(async () => {
    effectsBefore = ledger.effects.length;
    ({ result: fork } = await forkFromStep3([NOT_PLAYED, NOT_PLAYED, book('MAD'), charge(300), book('LIS')]));
  });

  test('adds exactly the three effects of steps 3 to 5 to the ledger, none for steps 1 and 2', () => {
    const added = ledger.effects.slice(effectsBefore);
    expect(added.map((effect) => [effect.kind, effect.amount])).toEqual([
      ['book', 1],
      ['charge', 300],
      ['book', 1],
    ]);
  });

  test("keys its new effects with its own run key and step ids 3 to 5, not the source's", () => {
    expect(fork.runKey).not.toBe(source.runKey);
    expect(fork.runKey!.startsWith(`${fork.runId}/`)).toBe(true);
    expect(ledger.effects.slice(effectsBefore).map((effect) => effect.key)).toEqual([
      `${fork.runKey}/3`,
      `${fork.runKey}/4`,
      `${fork.runKey}/5`,
    ]);
  });

  test('shows steps 1 and 2 as forked records of the source, with their source keys and outcomes', () => {
    const forked = fork.steps.filter((step) => step.forked);
    expect(forked.map((step) => [step.stepId, step.tool, step.idempotencyKey, step.status])).toEqual([
      [1, 'book_flight', `${source.runKey}/1`, 'succeeded'],
      [2, 'charge_card', `${source.runKey}/2`, 'succeeded'],
    ]);
    expect(forked.every((step) => step.forked?.workflowId === sourceId)).toBe(true);
    expect(forked.map((step) => step.observation)).toEqual(source.steps.slice(0, 2).map((step) => step.observation));
  });

  test('runs steps 3 to 5 itself and says where it was forked from', () => {
    expect(fork.status).toBe('completed');
    expect(fork.forkedFrom).toEqual({ workflowId: sourceId, fromStep: 3 });
    const own = fork.steps.filter((step) => !step.forked);
    expect(own.map((step) => [step.stepId, step.tool, step.arguments])).toEqual([
      [3, 'book_flight', { to: 'MAD' }],
      [4, 'charge_card', { amount: 300 }],
      [5, 'book_flight', { to: 'LIS' }],
    ]);
  });
});

test("the fork's model is first asked with the source's steps 1 and 2 in its transcript", async () => {
  const handle = await forkAgentRun(temporal.client, sourceId, { fromStep: 3, model: { provider: 'recording' } });
  await waitForAgentRun(handle);
  const [first] = recordedTranscripts;
  expect(first!.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool']);
  expect(first![1]).toMatchObject({ toolCalls: [{ name: 'book_flight', arguments: { to: 'BER' } }] });
  expect(first![4]).toMatchObject({ name: 'charge_card', stepId: 2, observation: { status: 'ok' } });
});

test('a fork that aborts compensates only its own booking, never the forked ones', async () => {
  const cancelsBefore = ledger.effects.filter((effect) => effect.kind === 'cancel').length;
  const { result } = await forkFromStep3([NOT_PLAYED, NOT_PLAYED, book('OSL'), callTurn('no_such_tool')], {
    failurePolicy: { criticalTools: '*' },
  });
  expect(result.status).toBe('compensated');
  const cancels = ledger.effects.filter((effect) => effect.kind === 'cancel').slice(cancelsBefore);
  expect(cancels.map((effect) => effect.key)).toEqual([`${result.runKey}/3`]);
});

test('a fork that continues as new keeps its step numbers, its own keys and where it was forked from', async () => {
  const { result } = await forkFromStep3([NOT_PLAYED, NOT_PLAYED, book('VIE'), charge(400)], {
    continueAsNewAfterSteps: 1,
  });
  expect(result.status).toBe('completed');
  expect(result.generation).toBeGreaterThan(0);
  expect(result.forkedFrom).toEqual({ workflowId: sourceId, fromStep: 3 });
  expect(result.stepCount).toBe(4);
  expect(effectsUnder(result.runKey!).map((effect) => [effect.kind, effect.key])).toEqual([
    ['book', `${result.runKey}/3`],
    ['charge', `${result.runKey}/4`],
  ]);
});

test('a fork from a step beyond the source steps is refused and says how far the source goes', async () => {
  const refused = forkAgentRun(temporal.client, sourceId, { fromStep: 8 });
  await expect(refused).rejects.toBeInstanceOf(AgentRunForkError);
  await expect(refused).rejects.toMatchObject({
    code: 'NOT_ENOUGH_STEPS',
    message: expect.stringContaining(`Run ${sourceId} has 5 steps`),
  });
});

test('a fork of a run that is still running is refused: its steps are not final', async () => {
  const running = await startAgentRun(temporal.client, scriptedRun('Wait', [callTurn('hold')]), { taskQueue });
  await expect(forkAgentRun(temporal.client, running.workflowId, { fromStep: 1 })).rejects.toMatchObject({
    code: 'SOURCE_RUNNING',
    message: expect.stringContaining(`Run ${running.workflowId} is still running`),
  });
  releaseHold();
  expect((await waitForAgentRun(running)).status).toBe('completed');
});

test('a fork of an unknown run is refused and names the run', async () => {
  await expect(forkAgentRun(temporal.client, `${taskQueue}-nothing`, { fromStep: 2 })).rejects.toMatchObject({
    code: 'SOURCE_NOT_FOUND',
    message: expect.stringContaining(`No run ${taskQueue}-nothing`),
  });
});

describe('the fork command', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fork-command-'));
  useProcessEnv(testServerCliEnv(dir));

  test('prints the id of the new run it started from the source', async () => {
    const script = join(dir, 'turns.json');
    writeFileSync(script, JSON.stringify([NOT_PLAYED, NOT_PLAYED, { text: 'Enough.', final: true }]));
    const { code, stdout } = await runCliInProcess(['fork', sourceId, '--from-step', '3', '--script', script]);
    expect(code).toBe(0);
    const newId = /^Run (\S+) started: steps 1-2 taken from /.exec(stdout)?.[1];
    expect(newId).toBeDefined();
    const result = await waitForAgentRun(temporal.client.workflow.getHandle(newId!));
    expect(result.forkedFrom).toEqual({ workflowId: sourceId, fromStep: 3 });
  });

  test('exits 1 and says why when the source has fewer steps', async () => {
    const { code, stderr } = await runCliInProcess(['fork', sourceId, '--from-step', '9']);
    expect(stderr).toContain(`durable-tools fork: Run ${sourceId} has 5 steps`);
    expect(code).toBe(1);
  });
});
