import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { z } from 'zod';
import { createToolActivities, type ToolActivity } from '../../src/activities/tool-activities';
import { MemoryIdempotencyStore } from '../../src/stores/idempotency/memory-idempotency-store';
import { defineTool } from '../../src/tools/define-tool';
import { createToolRegistry } from '../../src/tools/tool-registry';

const CARD = '4111111111111111';
const pay = defineTool({
  name: 'pay',
  description: 'Pays.',
  input: z.object({ amount: z.number(), card: z.string().meta({ sensitive: true }) }),
  output: z.unknown(),
  effect: 'irreversible',
  idempotent: false,
}).implement(async (args) => {
  throw new Error(`The card ${args.card} was declined.`);
});
const activity = createToolActivities({
  registry: createToolRegistry([pay]),
  idempotencyStore: new MemoryIdempotencyStore(),
}).pay as ToolActivity;

async function failureOf(args: unknown): Promise<ApplicationFailure> {
  const env = new MockActivityEnvironment({ attempt: 1, scheduledTimestampMs: Date.now() });
  const error = await env.run(activity, { arguments: args, idempotencyKey: 'run-args/1', stepId: 1 }).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ApplicationFailure)) throw new Error(`expected an ApplicationFailure, got ${String(error)}`);
  return error;
}

describe("a tool activity's arguments sent as JSON text", () => {
  test("keep their sensitive values out of the tool's own error", async () => {
    const failure = await failureOf(JSON.stringify({ amount: 5, card: CARD }));

    expect(failure.message).toContain('The card [redacted] was declined.');
    expect(JSON.stringify([failure.message, failure.details])).not.toContain(CARD);
  });

  test('that are not JSON are explained as such', async () => {
    expect((await failureOf('{amount: 5')).message).toMatch(/not valid JSON/);
  });

  test('that are the JSON of a string are refused as not an object', async () => {
    expect((await failureOf(JSON.stringify('{"amount":5}'))).message).toMatch(/must be a JSON object, not/);
  });
});
