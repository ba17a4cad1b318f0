import type { WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { Pool } from 'pg';
import { fetchRunHistories, startAgentRun } from '../../src/client/agent-run-client';
import { isStoredOutputReference, type StoredOutputReference } from '../../src/contract/claim-check-reference';
import { fingerprint } from '../../src/stores/idempotency/canonical-json';
import { MemoryIdempotencyStore } from '../../src/stores/idempotency/memory-idempotency-store';
import type { ToolErrorObservation } from '../../src/contract/activity-protocol';
import { PostgresTranscriptStore } from '../../src/stores/transcripts/postgres-transcript-store';
import type { AgentRunInput } from '../../src/contract/agent-run-types';
import { hostileModel, type HostileTurn } from '../support/hostile-model';
import { createPayloadTools, EffectLedger } from '../support/payload-tools';
import { agentRunOutcome, largestEventPayloadBytes } from '../support/run-outcome';
import { useTestTemporal, createTestWorker, testServer, uniqueTaskQueue } from '../support/temporal-test-env';

const POSTGRES_URL = process.env.DURABLE_TOOLS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const TABLE = `payload_budget_${process.pid}_${Date.now().toString(36)}`;
const KB = 1024;

const temporal = useTestTemporal();
afterAll(async () => {
  const admin = new Pool({ connectionString: POSTGRES_URL, max: 1 });
  await admin.query(`DROP TABLE IF EXISTS "${TABLE}"`);
  await admin.query(`DROP TABLE IF EXISTS "${TABLE}_payloads"`);
  await admin.end();
});

function hostileRun(goal: string, turns: HostileTurn[], extra: Partial<AgentRunInput> = {}): AgentRunInput {
  return { goal, model: { provider: 'hostile', turns }, limits: { maxSteps: 50, maxTurns: 10 }, ...extra };
}

/** A worker of the payload tools (effects counted on `ledger`) and the hostile model, on a fresh task queue. */
async function payloadWorker(name: string, ledger: EffectLedger, idempotencyStore?: MemoryIdempotencyStore) {
  const taskQueue = uniqueTaskQueue(name);
  const worker = await createTestWorker(temporal, {
    tools: createPayloadTools(ledger),
    taskQueue,
    modelProviders: { hostile: hostileModel },
    ...(idempotencyStore ? { idempotencyStore } : {}),
  });
  return { worker, taskQueue };
}

test('twenty outputs of 150 KB reach the model as previews with handles, and read_stored_output pages through one on another worker', async () => {
  const ledger = new EffectLedger();
  const taskQueue = uniqueTaskQueue('outputs-20x150');
  const stores = [0, 1].map(() => new PostgresTranscriptStore({ connectionString: POSTGRES_URL, table: TABLE }));
  // Two workers on the task queue (each on its own connection, as two processes would be).
  const secondConnection = await NativeConnection.connect({ address: testServer().address });
  const workers = await Promise.all(
    stores.map((transcripts, i) =>
      createTestWorker(i === 0 ? temporal : { ...temporal, nativeConnection: secondConnection }, {
        tools: createPayloadTools(ledger),
        taskQueue,
        modelProviders: { hostile: hostileModel },
        transcripts,
      }),
    ),
  );
  const input = hostileRun(
    'big outputs',
    [
      { calls: [{ name: 'big_output', args: { json: { kb: 150 } }, repeat: 20 }] },
      { calls: [{ name: 'read_stored_output', args: { firstStoredOutput: { offset: 2_000 } } }] },
      { final: 'read it' },
    ],
    { parallelToolCalls: true },
  );

  const { result, history } = await workers[0]!.runUntil(() =>
    workers[1]!.runUntil(async () => {
      const handle = await startAgentRun(temporal.client, input, { taskQueue });
      return { result: await agentRunOutcome(handle), history: await handle.fetchHistory() };
    }),
  );
  await Promise.all(stores.map((store) => store.close()));
  await secondConnection.close();

  expect(result.status).toBe('completed');
  expect(result.steps).toHaveLength(21);
  const outputs = result.steps.slice(0, 20).map((step) => (step.observation as { output: unknown }).output);
  expect(outputs.every(isStoredOutputReference)).toBe(true);
  const first = outputs[0] as StoredOutputReference;
  expect(first.bytes).toBeGreaterThan(150 * KB);
  expect(first.preview).toHaveLength(2_000);
  const page = (result.steps[20]?.observation as { output: { handle: string; offset: number; text: string } }).output;
  expect(page).toMatchObject({ handle: first.handle, offset: 2_000, text: 'r'.repeat(6_000) });
  expect(largestEventPayloadBytes(history)).toBeLessThan(256 * KB);
});

test('a tool returning 5 MB runs once, the model sees a bounded observation, and the key store replays the handle', async () => {
  const ledger = new EffectLedger();
  const idempotencyStore = new MemoryIdempotencyStore();
  const { worker, taskQueue } = await payloadWorker('output-5mb', ledger, idempotencyStore);

  const { result, workflowId } = await worker.runUntil(async () => {
    const handle = await startAgentRun(
      temporal.client,
      hostileRun('five megabytes', [{ calls: [{ name: 'big_effect', args: { json: { mb: 5 } } }] }, { final: 'ok' }]),
      { taskQueue },
    );
    return { result: await agentRunOutcome(handle), workflowId: handle.workflowId };
  });

  expect(result.status).toBe('completed');
  expect(ledger.of(workflowId)).toEqual([[`${result.runKey}/1`, 1]]);
  const output = (result.steps[0]?.observation as { output: StoredOutputReference }).output;
  expect(isStoredOutputReference(output)).toBe(true);
  expect(output.bytes).toBeGreaterThan(5 * KB * KB);
  expect(result.steps[0]?.attempts).toBe(1);
  const replay = await idempotencyStore.begin(
    `${result.runKey}/1`,
    fingerprint({ tool: 'big_effect', input: { mb: 5 } }),
    {
      owner: 'test',
    },
  );
  expect(replay).toMatchObject({
    state: 'completed',
    result: { $durableTools: 'stored-output', handle: output.handle },
  });
  expect(JSON.stringify(replay).length).toBeLessThan(8 * KB);
});

test('a 1.5 MB argument echoed by a tool crosses continue-as-new, and its compensation receives it whole', async () => {
  const ledger = new EffectLedger();
  const { worker, taskQueue } = await payloadWorker('argument-1.5mb', ledger);
  const input = hostileRun(
    'big argument',
    [
      { calls: [{ name: 'echo', args: { bigString: { field: 'text', bytes: 1_500_000 } } }] },
      { calls: [{ name: 'echo', args: { json: { text: 'small' } } }] },
      { calls: [{ name: 'reject_payment', args: { json: {} } }] },
    ],
    { continueAsNewAfterSteps: 1, failurePolicy: { criticalTools: ['reject_payment'] } },
  );

  const { result, histories } = await worker.runUntil(async () => {
    const handle = (await startAgentRun(temporal.client, input, {
      taskQueue,
    })) as WorkflowHandleWithFirstExecutionRunId;
    const outcome = await agentRunOutcome(handle);
    const all = await fetchRunHistories(temporal.client, handle.workflowId, handle.firstExecutionRunId);
    return { result: outcome, histories: all };
  });

  expect(result.status).toBe('compensated');
  expect(histories.length).toBeGreaterThanOrEqual(3);
  expect(ledger.effects.get(`${result.runKey}/1`)).toBe(1);
  expect(ledger.undone.get(`${result.runKey}/1`)).toBe(1_500_000);
  expect(ledger.undone.get(`${result.runKey}/2`)).toBe(5);
  for (const history of histories) {
    const continued = history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes;
    if (continued) expect(largestEventPayloadBytes({ events: [continued] })).toBeLessThan(64 * KB);
    expect(largestEventPayloadBytes(history)).toBeLessThan(1_700 * KB);
  }
});

test('arguments above the limit are refused as INVALID_ARGUMENTS "too large" before anything is scheduled', async () => {
  const ledger = new EffectLedger();
  const { worker, taskQueue } = await payloadWorker('argument-too-large', ledger);
  const input = hostileRun('too large', [
    {
      calls: [
        { name: 'save_note', args: { bigString: { field: 'note', bytes: 300 * KB } } },
        { name: 'echo', args: { bigString: { field: 'text', bytes: 3 * KB * KB } } },
      ],
    },
    { final: 'gave up' },
  ]);

  const { result, history } = await worker.runUntil(async () => {
    const handle = await startAgentRun(temporal.client, input, { taskQueue });
    return { result: await agentRunOutcome(handle), history: await handle.fetchHistory() };
  });

  expect(result.status).toBe('completed');
  for (const step of result.steps) {
    const observation = step.observation as ToolErrorObservation;
    expect(observation).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS', attempts: 0 });
    expect(observation.message).toMatch(/too large/);
  }
  expect((result.steps[1]?.observation as ToolErrorObservation).message).toMatch(/3\.0 MB/);
  const scheduled = (history.events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name);
  expect(scheduled).not.toContain('save_note');
  expect(scheduled).not.toContain('echo');
  expect(ledger.effects.size).toBe(0);
  // The model's turn carries the 300 KB arguments (they are measured in the workflow); the 3 MB ones never cross.
  expect(largestEventPayloadBytes(history)).toBeLessThan(400 * KB);
});
