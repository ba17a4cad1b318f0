/**
 * Issue 25, part 2 ("dry run") on the real dev server: a recorded run books and charges on the test ledger;
 * dry forks and dry re-runs of it are answered from its record. The ledger counts every effect: a dry run adds
 * none, whatever its model asks, and a tool that ignores its context is refused by the engine all the same.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { forkAgentRun, type ForkAgentRunOptions } from '../../src/client/fork-agent-run';
import { TOOL_ERROR_CODES } from '../../src/contract/activity-protocol';
import type { AgentRunResult } from '../../src/contract/agent-run-types';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import { MemoryIdempotencyStore } from '../../src/stores/idempotency/memory-idempotency-store';
import { defineTool } from '../../src/tools/define-tool';
import { callTurn, scriptedRun } from '../support/agent-runs';
import { runCliInProcess, testServerCliEnv, useProcessEnv } from '../support/cli-in-process';
import { startLedgerServer, type LedgerServer } from '../support/ledger-server';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { chargeCardTool, tripLedgerTools } from '../support/trip-ledger-tools';

let ledger: LedgerServer;
const taskQueue = uniqueTaskQueue('dry-run');

/**
 * A tool written without our helpers: it ignores its context (no key, no signal) and writes to the ledger
 * with a key of its own. Only the engine can keep it from running in a dry run.
 */
function careless(ledger: LedgerServer) {
  return defineTool({
    name: 'send_refund',
    description: 'Sends a refund.',
    input: z.object({ amount: z.number() }),
    output: z.object({ refundId: z.string() }),
    effect: 'irreversible',
    idempotent: false,
    approval: 'never',
  }).implement(async ({ amount }) => {
    const response = await fetch(`${ledger.url}/effects`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'my-own-key', kind: 'refund', amount }),
    });
    return { refundId: ((await response.json()) as { effectId: string }).effectId };
  });
}

/** Calls of the read-only `lookup_price` that really ran. */
let lookups = 0;
const lookupTool = defineTool({
  name: 'lookup_price',
  description: 'Looks up the price of a trip.',
  input: z.object({ to: z.string() }),
  output: z.object({ price: z.number(), call: z.number() }),
  effect: 'read-only',
  idempotent: true,
}).implement(async () => ({ price: 100, call: ++lookups }));

/** Calls of the read-only `read_statement` that really ran; it needs a human's approval. */
let statements = 0;
const gatedReadTool = defineTool({
  name: 'read_statement',
  description: 'Reads the card statement (a human approves each read).',
  input: z.object({}),
  output: z.object({ call: z.number() }),
  effect: 'read-only',
  idempotent: true,
  approval: 'always',
}).implement(async () => ({ call: ++statements }));

const temporal = useTestTemporal({
  worker: async (temporal) => {
    ledger = await startLedgerServer();
    return createTestWorker(temporal, {
      tools: [...tripLedgerTools(ledger), chargeCardTool(ledger), careless(ledger), lookupTool, gatedReadTool],
      taskQueue,
      idempotencyStore: new MemoryIdempotencyStore(),
    });
  },
});
afterAll(async () => {
  await ledger.close();
});

const book = (to: string): ScriptedTurn => callTurn('book_flight', { to });
const charge = (amount: number): ScriptedTurn => callTurn('charge_card', { amount });
const refund = (amount: number): ScriptedTurn => callTurn('send_refund', { amount });
const lookup = (to: string): ScriptedTurn => callTurn('lookup_price', { to });
const DONE: ScriptedTurn = { text: 'Done.', final: true };
/** A scripted model plays its turn k at the run's turn k: a fork from step 3 starts at turn 3 here. */
const NOT_PLAYED: ScriptedTurn = { text: 'a turn of the source, not played by the fork', final: true };

/** The source's calls: a price lookup, a booking, a charge of 100, a second booking, a refund of 5 (irreversible: last). */
const SOURCE_SCRIPT = [lookup('BER'), book('BER'), charge(100), book('PAR'), refund(5), DONE];

let source: AgentRunResult;
let sourceId: string;

beforeAll(async () => {
  const handle = await startAgentRun(temporal.client, scriptedRun('Book and pay a trip', SOURCE_SCRIPT), {
    taskQueue,
  });
  source = await waitForAgentRun(handle);
  sourceId = handle.workflowId;
});

/** Runs a dry fork of the source with `script` and returns its result and the ledger effects it added. */
async function dryFork(script: ScriptedTurn[], options: Partial<ForkAgentRunOptions> = {}) {
  const effectsBefore = ledger.effects.length;
  const lookupsBefore = lookups;
  const handle = await forkAgentRun(temporal.client, sourceId, {
    fromStep: 1,
    dryRun: true,
    model: { provider: 'scripted', script },
    ...options,
  });
  const result = await waitForAgentRun(handle);
  return { result, added: ledger.effects.slice(effectsBefore), lookupsRan: lookups - lookupsBefore };
}

test('the source run records the digest of each call it validated', () => {
  expect(source.status).toBe('completed');
  expect(source.steps.map((step) => step.tool)).toEqual([
    'lookup_price',
    'book_flight',
    'charge_card',
    'book_flight',
    'send_refund',
  ]);
  expect(source.steps.every((step) => /^[0-9a-f]{64}$/.test(step.argumentsDigest ?? ''))).toBe(true);
  expect(ledger.effects.map((effect) => effect.kind)).toEqual(['book', 'charge', 'book', 'refund']);
});

describe('a dry re-run of the whole run with unchanged calls', () => {
  let run: Awaited<ReturnType<typeof dryFork>>;
  beforeAll(async () => {
    run = await dryFork(SOURCE_SCRIPT);
  });

  test('adds no effect to the ledger', () => {
    expect(run.added).toEqual([]);
  });

  test("answers every call with effects from the source's recorded observation of the same step", () => {
    const withEffects = run.result.steps.filter((step) => step.tool !== 'lookup_price');
    expect(withEffects.map((step) => [step.stepId, step.status, step.dryRun])).toEqual([
      [2, 'succeeded', { answer: 'recorded', sourceStep: 2 }],
      [3, 'succeeded', { answer: 'recorded', sourceStep: 3 }],
      [4, 'succeeded', { answer: 'recorded', sourceStep: 4 }],
      [5, 'succeeded', { answer: 'recorded', sourceStep: 5 }],
    ]);
    expect(withEffects.map((step) => step.observation)).toEqual(source.steps.slice(1).map((s) => s.observation));
  });

  test('runs the read-only lookup for real by default', () => {
    expect(run.lookupsRan).toBe(1);
    expect(run.result.steps[0]).toMatchObject({ tool: 'lookup_price', dryRun: { answer: 'ran' } });
  });

  test('completes and says it is a dry run of the source', () => {
    expect(run.result.status).toBe('completed');
    expect(run.result.dryRun).toEqual({ sourceWorkflowId: sourceId, readOnlyTools: 'run' });
  });

  test('cannot be forked for real from a later step: its steps had no effects', async () => {
    await expect(forkAgentRun(temporal.client, run.result.runId, { fromStep: 3 })).rejects.toMatchObject({
      code: 'SOURCE_IS_DRY_RUN',
      message: expect.stringContaining(`fork ${sourceId}, the run it is a dry run of`),
    });
  });

  test('shows "Dry run of <source>" as the workflow summary in the UI', async () => {
    const description = await temporal.client.workflow.getHandle(run.result.runId).describe();
    expect(await description.staticSummary()).toBe(`Dry run of ${sourceId}: Book and pay a trip`);
  });
});

describe('a dry fork from step 3 whose model changes the amount of the charge', () => {
  let run: Awaited<ReturnType<typeof dryFork>>;
  beforeAll(async () => {
    run = await dryFork([NOT_PLAYED, NOT_PLAYED, charge(150), book('PAR'), DONE], { fromStep: 3 });
  });

  test('gets DRY_RUN_NO_RECORD for the charge, and nothing was executed', () => {
    const changed = run.result.steps.find((step) => step.stepId === 3)!;
    expect(changed).toMatchObject({ tool: 'charge_card', status: 'failed', dryRun: { answer: 'refused' } });
    expect(changed.observation).toMatchObject({
      status: 'error',
      code: TOOL_ERROR_CODES.DRY_RUN_NO_RECORD,
      retryable: false,
      attempts: 0,
    });
  });

  test('leaves the ledger untouched', () => {
    expect(run.added).toEqual([]);
  });

  test('answers an unchanged later call from the record of the source', () => {
    expect(run.result.steps.find((step) => step.stepId === 4)).toMatchObject({
      tool: 'book_flight',
      status: 'succeeded',
      dryRun: { answer: 'recorded', sourceStep: 4 },
    });
  });
});

test('a tool that ignores its context is not executed in a dry run: changed arguments are refused', async () => {
  const { result, added } = await dryFork([refund(500), DONE]);
  expect(result.steps[0]!.observation).toMatchObject({ code: TOOL_ERROR_CODES.DRY_RUN_NO_RECORD });
  expect(added).toEqual([]);
});

test('a tool that ignores its context, called as recorded, is answered from the record without running', async () => {
  const { result, added } = await dryFork([refund(5), DONE]);
  expect(result.steps[0]).toMatchObject({ status: 'succeeded', dryRun: { answer: 'recorded', sourceStep: 5 } });
  expect(result.steps[0]!.observation).toEqual(source.steps[4]!.observation);
  expect(added).toEqual([]);
});

test('each recorded call answers one call: the same charge asked twice is refused the second time', async () => {
  const { result, added } = await dryFork([charge(100), charge(100), DONE]);
  expect(result.steps.map((step) => step.dryRun?.answer)).toEqual(['recorded', 'refused']);
  expect(added).toEqual([]);
});

test("with readOnlyTools 'record' a read-only tool is answered from the record and does not run", async () => {
  const { result, lookupsRan } = await dryFork([lookup('BER'), lookup('ROM'), DONE], {
    dryRun: { readOnlyTools: 'record' },
  });
  expect(lookupsRan).toBe(0);
  expect(result.steps[0]).toMatchObject({ dryRun: { answer: 'recorded', sourceStep: 1 } });
  expect(result.steps[0]!.observation).toEqual(source.steps[0]!.observation);
  expect(result.steps[1]!.observation).toMatchObject({ code: TOOL_ERROR_CODES.DRY_RUN_NO_RECORD });
});

test('a read-only tool that needs approval is never run in a dry run (nobody is asked): without a record it is refused', async () => {
  const { result } = await dryFork([callTurn('read_statement'), DONE]);
  expect(result.status).toBe('completed');
  expect(result.steps[0]).toMatchObject({ status: 'failed', dryRun: { answer: 'refused' } });
  expect(result.steps[0]!.observation).toMatchObject({ code: TOOL_ERROR_CODES.DRY_RUN_NO_RECORD });
  expect(statements).toBe(0);
});

test('a dry run that aborts compensates nothing, for real or otherwise', async () => {
  const { result, added } = await dryFork([book('BER'), callTurn('no_such_tool')], {
    input: { failurePolicy: { criticalTools: '*' } },
  });
  expect(result.status).toBe('failed');
  expect(result.steps[0]).toMatchObject({ tool: 'book_flight', dryRun: { answer: 'recorded' } });
  expect(result.steps[0]!.undo).toBeUndefined();
  expect(added).toEqual([]);
});

describe('the fork command with --dry-run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dry-run-command-'));
  useProcessEnv(testServerCliEnv(dir));

  test('starts a dry re-run of the whole run and prints its id', async () => {
    const script = join(dir, 'turns.json');
    writeFileSync(script, JSON.stringify([charge(999), DONE]));
    const before = ledger.effects.length;
    const { code, stdout } = await runCliInProcess(['fork', sourceId, '--dry-run', '--script', script]);
    expect(code).toBe(0);
    const newId = /^Dry run (\S+) started: calls with effects answered from the record of /.exec(stdout)?.[1];
    expect(newId).toBeDefined();
    const result = await waitForAgentRun(temporal.client.workflow.getHandle(newId!));
    expect(result.steps[0]!.observation).toMatchObject({ code: TOOL_ERROR_CODES.DRY_RUN_NO_RECORD });
    expect(ledger.effects.length).toBe(before);
  });

  test('refuses --read-only-tools without --dry-run (exit 2)', async () => {
    const { code, stderr } = await runCliInProcess(['fork', sourceId, '--from-step', '2', '--read-only-tools', 'run']);
    expect(stderr).toContain('--read-only-tools goes with --dry-run');
    expect(code).toBe(2);
  });
});
