import { failureOf } from '../support/application-failure';
import { MockActivityEnvironment } from '@temporalio/testing';
import { z } from 'zod';
import { createToolActivities, type ToolActivity } from '../../src/activities/tool-activities';
import type { ToolActivityInput, ToolActivityResult } from '../../src/contract/tool-activity-types';
import { IdempotencyStoreError } from '../../src/stores/idempotency/idempotency-store-error';
import { MemoryIdempotencyStore } from '../../src/stores/idempotency/memory-idempotency-store';
import type { IdempotencyStore } from '../../src/stores/idempotency/idempotency-store';
import { defineTool } from '../../src/tools/define-tool';
import { createToolRegistry } from '../../src/tools/tool-registry';

const KEY = 'run-guard/1';

function chargeTool(input: z.ZodObject, run: () => unknown) {
  return defineTool({
    name: 'charge',
    description: 'Charges an amount.',
    input,
    output: z.unknown(),
    effect: 'irreversible',
    approval: 'never', // not a test of approvals (tool-activities-approval.test.ts)
    idempotent: false,
    retry: { maximumAttempts: 3 },
  }).implement(async () => run());
}

function activityOf(tool: ReturnType<typeof chargeTool>, store: IdempotencyStore): ToolActivity {
  return createToolActivities({ registry: createToolRegistry([tool]), idempotencyStore: store }).charge as ToolActivity;
}

function attempt(activity: ToolActivity, n: number, input: Partial<ToolActivityInput>): Promise<ToolActivityResult> {
  const env = new MockActivityEnvironment({ attempt: n, scheduledTimestampMs: Date.now() });
  return env.run(activity, { arguments: { amount: 5 }, idempotencyKey: KEY, stepId: 1, ...input });
}

describe('the tool wrapper and the idempotency store agree', () => {
  test('fingerprints what the model sent, so a new version with a defaulted field replays the same call', async () => {
    const store = new MemoryIdempotencyStore();
    let runs = 0;
    const v1 = activityOf(
      chargeTool(z.object({ amount: z.number() }), () => ({ id: ++runs })),
      store,
    );
    const first = await attempt(v1, 1, { arguments: '{"amount":5}' });
    const v2Schema = z.object({ amount: z.number(), currency: z.string().default('EUR') });
    const v2 = activityOf(
      chargeTool(v2Schema, () => ({ id: ++runs })),
      store,
    );
    const retried = await attempt(v2, 2, { arguments: '{"amount":5}' });
    expect(retried).toMatchObject({ output: first.output, replayed: true });
    expect(runs).toBe(1);
  });

  test('a result that cannot be stored is a permanent INVALID_OUTPUT, recorded so it never runs again', async () => {
    const store = new MemoryIdempotencyStore();
    let runs = 0;
    const activity = activityOf(
      chargeTool(z.object({ amount: z.number() }), () => ({ note: `bad \ud800 ${++runs}` })),
      store,
    );
    const failure = await failureOf(attempt(activity, 1, {}));
    expect(failure.type).toBe('INVALID_OUTPUT');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toMatch(/cannot be recorded/);
    const again = await failureOf(attempt(activity, 2, {}));
    expect(again.type).toBe('INVALID_OUTPUT');
    expect(runs).toBe(1);
  });

  test('a result nested deeper than the engine can serialise is a permanent INVALID_OUTPUT', async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 5_000; i++) deep = [deep];
    const activity = activityOf(
      chargeTool(z.object({ amount: z.number() }), () => deep),
      new MemoryIdempotencyStore(),
    );
    const failure = await failureOf(attempt(activity, 1, {}));
    expect(failure.type).toBe('INVALID_OUTPUT');
    expect(failure.nonRetryable).toBe(true);
  });

  test('a store that cannot fingerprint the arguments gives a permanent INVALID_ARGUMENTS, never UNAVAILABLE', async () => {
    const store = new MemoryIdempotencyStore();
    store.begin = async () => {
      throw new IdempotencyStoreError('Value at $.input.x is not JSON: bigint.', 'NOT_JSON');
    };
    let runs = 0;
    const activity = activityOf(
      chargeTool(z.object({ amount: z.number() }), () => ++runs),
      store,
    );
    for (const compensationOf of [undefined, 'book']) {
      const failure = await failureOf(attempt(activity, 1, compensationOf ? { compensationOf } : {}));
      expect(failure.type).toBe('INVALID_ARGUMENTS');
      expect(failure.nonRetryable).toBe(true);
    }
    expect(runs).toBe(0);
  });

  test('a store outage stays transient', async () => {
    const store = new MemoryIdempotencyStore();
    store.begin = async () => {
      throw new IdempotencyStoreError('connection refused', 'STORE_UNAVAILABLE');
    };
    const activity = activityOf(
      chargeTool(z.object({ amount: z.number() }), () => 1),
      store,
    );
    const failure = await failureOf(attempt(activity, 1, {}));
    expect(failure.type).toBe('UNAVAILABLE');
    expect(failure.nonRetryable).toBe(false);
  });
});

describe("a tool activity's arguments sent as JSON text", () => {
  const CARD = '4111111111111111';
  const declined = () =>
    activityOf(
      chargeTool(z.object({ amount: z.number(), card: z.string().meta({ sensitive: true }) }), () => {
        throw new Error(`The card ${CARD} was declined.`);
      }),
      new MemoryIdempotencyStore(),
    );

  test("keep their sensitive values out of the tool's own error", async () => {
    const failure = await failureOf(attempt(declined(), 1, { arguments: JSON.stringify({ amount: 5, card: CARD }) }));

    expect(failure.message).toContain('The card [redacted] was declined.');
    expect(JSON.stringify([failure.message, failure.details])).not.toContain(CARD);
  });

  test('that are not JSON are explained as such', async () => {
    expect((await failureOf(attempt(declined(), 1, { arguments: '{amount: 5' }))).message).toMatch(/not valid JSON/);
  });

  test('that are the JSON of a string are refused as not an object', async () => {
    const failure = await failureOf(attempt(declined(), 1, { arguments: JSON.stringify('{"amount":5}') }));

    expect(failure.message).toMatch(/must be a JSON object, not/);
  });
});
