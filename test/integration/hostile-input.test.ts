import { z } from 'zod';
import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { isStoredOutputReference } from '../../src/contract/claim-check-reference';
import { MemoryIdempotencyStore } from '../../src/stores/idempotency/memory-idempotency-store';
import { MemoryTranscriptStore } from '../../src/stores/transcripts/memory-transcript-store';
import type { ModelProvider, ModelRequest } from '../../src/contract/model-types';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import type { ToolErrorObservation } from '../../src/contract/activity-protocol';
import { defineTool, type Tool } from '../../src/tools/define-tool';
import { PermanentToolError } from '../../src/failures/tool-errors';
import { createWorker } from '../../src/runtime/create-worker';
import { cancelAndWait } from '../support/run-outcome';
import { waitFor } from '../support/wait-for';
import { useTestTemporal, testServer, uniqueTaskQueue } from '../support/temporal-test-env';

const temporal = useTestTemporal();

/** Tools that record every call reaching their implementation; `unbook`'s result cannot be stored. */
function hostileTools(ran: string[]): Tool[] {
  const record = (name: string) => ran.push(name);
  return [
    defineTool({
      name: 'book',
      description: 'Books a room.',
      input: z.object({
        room: z.string(),
        extras: z.unknown().optional(),
        tags: z.record(z.string(), z.string()).optional(),
      }),
      output: z.object({ bookingId: z.string() }),
      effect: 'compensable',
      undo: 'unbook',
      idempotent: false,
    }).implement(async () => {
      record('book');
      return { bookingId: 'b-1' };
    }),
    defineTool({
      name: 'unbook',
      description: 'Cancels a booking.',
      input: z.object({ originalInput: z.unknown(), originalOutput: z.unknown().optional(), originalKey: z.string() }),
      output: z.object({ note: z.string() }),
      effect: 'irreversible',
      approval: 'never', // these tests are about input, not approvals
      idempotent: false,
    }).implement(async () => {
      record('unbook');
      return { note: 'cancelled \ud800' };
    }),
    defineTool({
      name: 'pay',
      description: 'Pays by card or bank transfer.',
      input: z.object({
        method: z.discriminatedUnion('kind', [
          z.object({ kind: z.literal('card'), last4: z.string() }),
          z.object({ kind: z.literal('iban'), iban: z.string() }),
        ]),
      }),
      output: z.object({ paid: z.boolean() }),
      effect: 'irreversible',
      approval: 'never', // not a test of approvals
      idempotent: false,
    }).implement(async () => {
      record('pay');
      throw Object.assign(new Error('Card declined: insufficient funds'), { status: 402 });
    }),
    defineTool({
      name: 'check_dates',
      description: 'Checks dates with the hotel.',
      input: z.object({ nights: z.number() }),
      output: z.object({ ok: z.boolean() }),
      effect: 'read-only',
      idempotent: true,
    }).implement(async () => {
      record('check_dates');
      throw Object.assign(new Error('Unprocessable'), { status: 422, body: 'nights must be at most 30' });
    }),
    defineTool({
      name: 'explode',
      description: 'Always fails.',
      input: z.object({}),
      output: z.object({}),
      effect: 'read-only',
      idempotent: true,
    }).implement(async () => {
      throw new PermanentToolError('boom', { code: 'INTERNAL' });
    }),
  ];
}

async function run(
  name: string,
  input: {
    script: ScriptedTurn[];
    provider?: string;
    critical?: string[];
    providers?: Record<string, ModelProvider>;
    argumentGuard?: { maxDepth?: number };
  },
) {
  const ran: string[] = [];
  const taskQueue = uniqueTaskQueue(name);
  const { namespace, bundlePath } = testServer();
  const { worker } = await createWorker({
    // Stores not given here stay in memory (durable ones are the default).
    stores: 'memory',
    tools: hostileTools(ran),
    connection: temporal.nativeConnection,
    settings: { namespace, taskQueue },
    workflowBundle: { codePath: bundlePath },
    idempotencyStore: new MemoryIdempotencyStore(),
    ...(input.argumentGuard ? { argumentGuard: input.argumentGuard } : {}),
    modelProviders: { broken: async () => ({ toolCalls: 'call everything' }) as never, ...input.providers },
  });
  const result = await worker.runUntil(async () =>
    waitForAgentRun(
      await startAgentRun(
        temporal.client,
        {
          goal: name,
          model: { provider: input.provider ?? 'scripted', script: input.script },
          ...(input.critical ? { failurePolicy: { criticalTools: input.critical } } : {}),
        },
        { taskQueue },
      ),
    ),
  );
  const observations = result.steps.map((step) => step.observation as ToolErrorObservation);
  return { result, observations, ran };
}

describe('hostile input on the real server', () => {
  test('arguments the store could not take, invented fields in unions and prototype keys are INVALID_ARGUMENTS and nothing runs', async () => {
    const deep = `{"room":"a","extras":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
    const { result, observations, ran } = await run('guard', {
      script: [
        {
          toolCalls: [
            { name: 'book', arguments: '{"room":"\\ud800"}' },
            { name: 'book', arguments: deep },
            { name: 'book', arguments: '{"room":"a","constructor":{"x":1}}' },
            { name: 'book', arguments: { room: 'a', ['__proto__']: { admin: true } } },
            { name: 'pay', arguments: { method: { kind: 'card', last4: '4242', iban: 'DE00' } } },
            { name: 'book', arguments: '{"room":"a","tags":{"__proto__":"x","vip":"yes"}}' },
          ],
        },
        { text: 'gave up', final: true },
      ],
    });
    expect(result.status).toBe('completed');
    expect(observations.map((o) => o.code)).toEqual(Array(6).fill('INVALID_ARGUMENTS'));
    expect(observations[0]?.message).toContain('lone UTF-16 surrogate');
    expect(observations[1]?.message).toContain('nesting deeper than');
    expect(observations[2]?.hint).toContain('remove the unknown field `constructor`');
    expect(observations[4]?.hint).toContain('remove the unknown field `iban` in `method`');
    expect(observations[5]?.hint).toContain('remove the forbidden field `__proto__` in `tags`');
    expect(ran).toEqual([]);
    expect(result.steps.every((step) => step.status === 'failed' && step.undo === undefined)).toBe(true);
  });

  test("the worker's argumentGuard limits apply to a run's calls", async () => {
    const { result, observations, ran } = await run('worker-guard', {
      argumentGuard: { maxDepth: 4 },
      script: [
        {
          toolCalls: [
            { name: 'book', arguments: { room: 'a', extras: [[[[['too deep for this worker']]]]] } },
            { name: 'book', arguments: { room: 'b', extras: [['fine']] } },
          ],
        },
        { text: 'done', final: true },
      ],
    });
    expect(result.status).toBe('completed');
    expect(observations[0]).toMatchObject({ code: 'INVALID_ARGUMENTS' });
    expect(observations[0]?.message).toContain('nesting deeper than 4 levels');
    expect(result.steps[1]?.status).toBe('succeeded');
    expect(ran).toEqual(['book']);
  });

  test("a tool's own message is kept next to the HTTP status, and a downstream 422 is not a schema error", async () => {
    const { observations } = await run('truthful-tools', {
      script: [
        {
          toolCalls: [
            { name: 'pay', arguments: { method: { kind: 'card', last4: '4242' } } },
            { name: 'check_dates', arguments: { nights: 40 } },
          ],
        },
        { text: 'done', final: true },
      ],
    });
    expect(observations[0]).toMatchObject({ code: 'PAYMENT_REQUIRED' });
    expect(observations[0]?.message).toContain('Card declined: insufficient funds');
    expect(observations[1]).toMatchObject({ code: 'REQUEST_REJECTED' });
    expect(observations[1]?.message).toContain('nights must be at most 30');
  });

  test('empty model turns are observations for the model and then fail the run saying why, never completed', async () => {
    const { result } = await run('empty-turn', { script: [{}, {}] });
    expect(result.status).toBe('failed');
    expect(result.reason).toContain('MODEL_EMPTY_RESPONSE');
    expect(result.reason).toContain('neither text nor tool calls');
    expect(result.reason).not.toContain('Activity task failed');
  });

  test('a custom provider answering {} every turn fails the run with MODEL_EMPTY_RESPONSE, never completed', async () => {
    const { result } = await run('empty-provider', {
      script: [],
      provider: 'silent',
      providers: { silent: async () => ({}) as never },
    });
    expect(result.status).toBe('failed');
    expect(result.reason).toContain('MODEL_EMPTY_RESPONSE');
    expect(result.reason).toContain('neither text nor tool calls');
  });

  test('an empty turn {} from a custom provider is an observation the model reads before it answers', async () => {
    const requests: ModelRequest[] = [];
    const { result } = await run('empty-once', {
      script: [],
      provider: 'emptyOnce',
      providers: {
        emptyOnce: async (request) => {
          requests.push(request);
          return (request.turn === 0 ? {} : { text: 'Here is the answer.', toolCalls: [], done: true }) as never;
        },
      },
    });
    expect(result.status).toBe('completed');
    expect(result.answer).toBe('Here is the answer.');
    const seen = requests[1]?.transcript.at(-1);
    expect(seen).toMatchObject({ role: 'user' });
    expect(seen?.role === 'user' ? seen.content : '').toContain('MODEL_EMPTY_RESPONSE');
  });

  test('a malformed model turn fails the run quoting the turn and what was wrong with it', async () => {
    const { result } = await run('malformed-turn', {
      script: [],
      provider: 'broken',
    });
    expect(result.status).toBe('failed');
    expect(result.reason).toContain('MODEL_OUTPUT_INVALID');
    expect(result.reason).toContain('"toolCalls":"call everything"');
  });

  test('an unknown model provider fails the run naming the provider', async () => {
    const { result } = await run('unknown-provider', { script: [], provider: 'constructor' });
    expect(result.status).toBe('failed');
    expect(result.reason).toContain('UNKNOWN_MODEL_PROVIDER');
    expect(result.reason).toContain('No model provider "constructor"');
  });

  test('a compensation that fails deterministically ends compensation_failed naming the step, without retrying', async () => {
    const { result, ran } = await run('deterministic-undo', {
      script: [
        { toolCalls: [{ name: 'book', arguments: { room: 'a' } }] },
        { toolCalls: [{ name: 'explode', arguments: {} }] },
        { text: 'unreachable', final: true },
      ],
      critical: ['explode'],
    });
    expect(result.status).toBe('compensation_failed');
    expect(result.failedCompensationStep).toBe(1);
    expect(result.reason).toContain('Compensation of step 1 (book) failed: INVALID_OUTPUT');
    expect(ran.filter((name) => name === 'unbook')).toHaveLength(1);
  });
});

describe('a call cancelled while its tool fails, on the real server', () => {
  test("the step's observation is CANCELLED and keeps the tool's own error, and the run ends cancelled", async () => {
    let entered = false;
    const flush = defineTool({
      name: 'flush_ledger',
      description: 'Flushes the ledger; slow.',
      input: z.object({}),
      output: z.object({ flushed: z.boolean() }),
      effect: 'read-only',
      idempotent: true,
    }).implement(async (_input, ctx) => {
      entered = true;
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
      // The tool notices the abort and fails with its own error, not an AbortError.
      throw new Error('ledger locked: the flush was interrupted half way');
    });
    const taskQueue = uniqueTaskQueue('cancelled-and-failed');
    const { namespace, bundlePath } = testServer();
    const { worker } = await createWorker({
      // Stores not given here stay in memory (durable ones are the default).
      stores: 'memory',
      tools: [flush],
      connection: temporal.nativeConnection,
      settings: { namespace, taskQueue },
      workflowBundle: { codePath: bundlePath },
      // Flush heartbeats quickly, so the cancellation reaches the blocked call at once.
      workerOptions: { defaultHeartbeatThrottleInterval: '100 ms', maxHeartbeatThrottleInterval: '100 ms' },
    });
    const { error, state } = await worker.runUntil(async () => {
      const handle = await startAgentRun(
        temporal.client,
        {
          goal: 'flush',
          model: { provider: 'scripted', script: [{ toolCalls: [{ name: 'flush_ledger', arguments: {} }] }] },
          // Regular activities: the server delivers the cancellation to the running call through its heartbeat
          // (a local call is cancelled only when its workflow task ends, docs/fast-path.md).
          fastPath: false,
        },
        { taskQueue },
      );
      await waitFor('the tool to run', () => entered);
      return cancelAndWait(temporal.client, handle);
    });
    expect((error as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    expect(state.status).toBe('cancelled');
    const observation = state.steps[0]?.observation as ToolErrorObservation;
    expect(state.steps[0]?.status).toBe('failed');
    expect(observation.code).toBe('CANCELLED');
    expect(observation.message).toContain('was cancelled, and the tool failed');
    expect(observation.message).toContain('ledger locked: the flush was interrupted half way');
  });
});

describe('stored outputs past their retention, on the real server', () => {
  test('a page read after the output expired is a NOT_FOUND observation saying so, and the run goes on', async () => {
    let now = 1_000_000;
    const transcripts = new MemoryTranscriptStore({ clock: () => now, payloadRetentionMs: 60_000 });
    const report = defineTool({
      name: 'big_report',
      description: 'Returns a large report.',
      input: z.object({}),
      output: z.object({ data: z.string() }),
      effect: 'read-only',
      idempotent: true,
    }).implement(async () => ({ data: 'r'.repeat(40 * 1024) }));
    const lateReader: ModelProvider = async (request) => {
      if (request.turn === 0) return { toolCalls: [{ id: 'c1', name: 'big_report', arguments: {} }], done: false };
      if (request.turn === 1) {
        const stored = request.transcript.find(
          (m) =>
            m.role === 'tool' &&
            isStoredOutputReference(m.observation.status === 'ok' ? m.observation.output : undefined),
        );
        const handle =
          stored?.role === 'tool' && stored.observation.status === 'ok'
            ? (stored.observation.output as { handle: string }).handle
            : 'none';
        now += 60_000; // the retention passes before the model reads on
        return { toolCalls: [{ id: 'c2', name: 'read_stored_output', arguments: { handle, offset: 0 } }], done: false };
      }
      return { text: 'gave up on the report', toolCalls: [], done: true };
    };
    const taskQueue = uniqueTaskQueue('expired-output');
    const { namespace, bundlePath } = testServer();
    const { worker } = await createWorker({
      // Stores not given here stay in memory (durable ones are the default).
      stores: 'memory',
      tools: [report],
      transcripts,
      modelProviders: { lateReader },
      connection: temporal.nativeConnection,
      settings: { namespace, taskQueue },
      workflowBundle: { codePath: bundlePath },
    });
    const result = await worker.runUntil(async () =>
      waitForAgentRun(
        await startAgentRun(temporal.client, { goal: 'report', model: { provider: 'lateReader' } }, { taskQueue }),
      ),
    );
    expect(result.status).toBe('completed');
    expect(isStoredOutputReference((result.steps[0]?.observation as { output?: unknown }).output)).toBe(true);
    const expired = result.steps[1]?.observation as ToolErrorObservation;
    expect(expired.code).toBe('NOT_FOUND');
    expect(expired.message).toContain('or it expired');
    expect(await transcripts.reapPayloads()).toBe(1);
  });
});
