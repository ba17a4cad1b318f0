/**
 * The engine's half of a dry run (src/activities/dry-run-call.ts), on the tool activity alone: whatever the
 * workflow asked, a call with effects in a dry run never reaches the tool's code.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { z } from 'zod';
import { argumentsDigest } from '../../src/activities/arguments-digest';
import { createToolActivities, type ToolActivity } from '../../src/activities/tool-activities';
import type { ToolEffect } from '../../src/contract/tool-catalog-entry';
import type { ToolActivityInput, ToolActivityResult } from '../../src/contract/tool-activity-types';
import { MemoryIdempotencyStore } from '../../src/stores/idempotency/memory-idempotency-store';
import { defineTool } from '../../src/tools/define-tool';
import { createToolRegistry } from '../../src/tools/tool-registry';
import { failureOf } from '../support/application-failure';

/** Calls of the tool's code. */
let ran = 0;

function activitiesOf(effect: ToolEffect) {
  const tool = defineTool({
    name: 'pay',
    description: 'Pays an amount.',
    input: z.object({ amount: z.coerce.number() }),
    output: z.object({ paid: z.number() }),
    effect,
    idempotent: false,
    ...(effect === 'irreversible' ? { approval: 'never' as const } : {}),
  }).implement(async ({ amount }) => ({ paid: (ran++, amount) }));
  return createToolActivities({ registry: createToolRegistry([tool]), idempotencyStore: new MemoryIdempotencyStore() });
}

function activityOf(effect: ToolEffect): ToolActivity {
  return activitiesOf(effect).pay as ToolActivity;
}

function call(activity: ToolActivity, input: Partial<ToolActivityInput>): Promise<ToolActivityResult> {
  const env = new MockActivityEnvironment({ attempt: 1, scheduledTimestampMs: Date.now() });
  return env.run(activity, { arguments: { amount: 5 }, idempotencyKey: 'run-dry/1', stepId: 1, ...input });
}

const DIGEST_OF_5 = argumentsDigest({ amount: 5 });

beforeEach(() => {
  ran = 0;
});

test('a dry call with effects and no recorded candidate is refused with DRY_RUN_NO_RECORD, and the tool does not run', async () => {
  const failure = await failureOf(
    call(activityOf('irreversible'), { dryRun: { readOnlyTools: 'run', candidates: [] } }),
  );
  expect(failure).toMatchObject({ type: 'DRY_RUN_NO_RECORD', nonRetryable: true });
  expect(failure.details?.[1]).toEqual({ mayHaveHadEffect: false, argumentsDigest: DIGEST_OF_5 });
  expect(ran).toBe(0);
});

test('a dry call whose validated arguments match a candidate is answered by that source step, and the tool does not run', async () => {
  const candidates = [
    { stepId: 3, digest: argumentsDigest({ amount: 7 }) },
    { stepId: 4, digest: DIGEST_OF_5 },
  ];
  // "5" as text validates to 5: the match is on the validated arguments, not on what the model sent.
  const result = await call(activityOf('irreversible'), {
    arguments: { amount: '5' },
    dryRun: { readOnlyTools: 'run', candidates },
  });
  expect(result).toMatchObject({ dryRunAnswer: { sourceStep: 4 }, argumentsDigest: DIGEST_OF_5 });
  expect(ran).toBe(0);
});

test('a dry call with invalid arguments is refused by validation first, as in a live run', async () => {
  const failure = await failureOf(
    call(activityOf('irreversible'), {
      arguments: { amount: 'five' },
      dryRun: { readOnlyTools: 'run', candidates: [] },
    }),
  );
  expect(failure.type).toBe('INVALID_ARGUMENTS');
  expect(ran).toBe(0);
});

test('a compensation in a dry run is refused and never runs', async () => {
  const failure = await failureOf(
    call(activityOf('irreversible'), {
      compensationOf: 'pay',
      idempotencyKey: 'run-dry/1/undo',
      dryRun: { readOnlyTools: 'record', candidates: [{ stepId: 1, digest: DIGEST_OF_5 }] },
    }),
  );
  expect(failure.type).toBe('DRY_RUN_NO_RECORD');
  expect(ran).toBe(0);
});

test("a read-only tool runs for real in a dry run under readOnlyTools 'run'", async () => {
  const result = await call(activityOf('read-only'), { dryRun: { readOnlyTools: 'run', candidates: [] } });
  expect(result.output).toEqual({ paid: 5 });
  expect(ran).toBe(1);
});

test("a read-only tool is refused without a record under readOnlyTools 'record'", async () => {
  const failure = await failureOf(
    call(activityOf('read-only'), { dryRun: { readOnlyTools: 'record', candidates: [] } }),
  );
  expect(failure.type).toBe('DRY_RUN_NO_RECORD');
  expect(ran).toBe(0);
});

test('a live call returns the digest of its validated arguments, for a later dry run to match on', async () => {
  const result = await call(activityOf('irreversible'), { arguments: { amount: '5' } });
  expect(result).toMatchObject({ output: { paid: 5 }, argumentsDigest: DIGEST_OF_5 });
  expect(ran).toBe(1);
});

test("a call under the dry activity type 'dry:<tool>' is dry even when its input does not say so", async () => {
  const dry = activitiesOf('irreversible')['dry:pay'] as ToolActivity;
  const failure = await failureOf(call(dry, {}));
  expect(failure.type).toBe('DRY_RUN_NO_RECORD');
  expect(ran).toBe(0);
});
