import { MockActivityEnvironment } from '@temporalio/testing';
import { failureOf } from '../support/application-failure';
import { z } from 'zod';
import { createToolActivities, type ToolActivity } from '../../src/activities/tool-activities';
import { defineTool } from '../../src/tools/define-tool';
import { createToolRegistry } from '../../src/tools/tool-registry';
import type { ToolErrorObservation } from '../../src/contract/activity-protocol';

function setup(implementation: (input: { n: number }) => Promise<unknown>) {
  const calls: unknown[] = [];
  const tool = defineTool({
    name: 'double',
    description: 'Doubles n.',
    input: z.object({ n: z.number() }),
    output: z.object({ doubled: z.number() }),
    effect: 'read-only',
    idempotent: true,
  }).implement(async (input) => {
    calls.push(input);
    return (await implementation(input)) as { doubled: number };
  });
  const activities = createToolActivities({ registry: createToolRegistry([tool]) });
  return { activity: activities.double as ToolActivity, describe: activities.describeTools, calls };
}

const env = () => new MockActivityEnvironment({ attempt: 1, scheduledTimestampMs: Date.now() });
const input = (args: unknown) => ({ arguments: args, idempotencyKey: 'run-1/1', stepId: 1 });

/** The failure of a call whose tool throws an error with `message` and HTTP `status`. */
async function failureWhenToolThrows(message: string, status: number) {
  const { activity } = setup(async () => {
    throw Object.assign(new Error(message), { status });
  });
  return failureOf(env().run(activity, input({ n: 1 })));
}

describe('a tool activity', () => {
  test('runs the implementation with validated input and returns its output', async () => {
    const { activity, calls } = setup(async ({ n }) => ({ doubled: n * 2 }));
    await expect(env().run(activity, input('{"n":21}'))).resolves.toEqual({
      output: { doubled: 42 },
      attempt: 1,
      argumentsDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(calls).toEqual([{ n: 21 }]);
  });

  test('refuses bad arguments with a non-retryable INVALID_ARGUMENTS failure carrying the observation', async () => {
    const { activity, calls } = setup(async ({ n }) => ({ doubled: n * 2 }));
    const failure = await failureOf(env().run(activity, input('{"n":"21"}')));
    expect(failure.type).toBe('INVALID_ARGUMENTS');
    expect(failure.nonRetryable).toBe(true);
    expect((failure.details?.[0] as ToolErrorObservation).hint).toContain('without quotes');
    expect(calls).toEqual([]);
  });

  test('refuses an output that breaks the output schema as INVALID_OUTPUT', async () => {
    const { activity } = setup(async () => ({ doubled: 'lots' }));
    const failure = await failureOf(env().run(activity, input({ n: 1 })));
    expect(failure.type).toBe('INVALID_OUTPUT');
    expect(failure.nonRetryable).toBe(true);
  });

  test('turns a transient downstream error into a retryable failure with an engine-chosen delay', async () => {
    const failure = await failureWhenToolThrows('upstream down', 503);
    expect(failure.type).toBe('UNAVAILABLE');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBeDefined();
  });

  test('turns a permanent downstream error into a non-retryable failure', async () => {
    const failure = await failureWhenToolThrows('no such thing', 404);
    expect(failure.type).toBe('NOT_FOUND');
    expect(failure.nonRetryable).toBe(true);
  });

  test('describes the tools as a JSON catalog', async () => {
    const { describe: describeTools } = setup(async () => ({ doubled: 0 }));
    expect((await describeTools()).map((entry) => entry.name)).toEqual(['double']);
  });
});
