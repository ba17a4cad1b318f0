/**
 * The pure parts of a dry run (docs/fork.md): the record a dry fork takes from the source's state
 * (`buildDryRunRecord`, `fitDryRunRecord`) and how the workflow spends it (`dryRunCall`, `takeRecordedAnswer`).
 * No server.
 */
import { buildDryRunRecord, fitDryRunRecord } from '../../src/client/dry-run-record';
import type { AgentRunState, StepRecord } from '../../src/contract/agent-run-types';
import { succeededStep } from '../support/step-records';
import { jsonByteLength } from '../../src/contract/payload-limits';
import { dryRunCall, takeRecordedAnswer, type DryRunRecord } from '../../src/workflows/dry-run-step';
import { initialRunUsage } from '../../src/workflows/run-usage';

/** A succeeded step (test/support/step-records.ts) with the digest of its arguments. */
function step(stepId: number, tool: string, fields: Partial<StepRecord> = {}): StepRecord {
  return succeededStep(stepId, tool, { argumentsDigest: `digest-${stepId}`, ...fields });
}

function source(steps: StepRecord[]): { workflowId: string; state: AgentRunState } {
  return {
    workflowId: 'src',
    state: {
      workflowId: 'src',
      runId: 'src',
      runKey: 'src/first',
      goal: 'Book a trip',
      status: 'completed',
      turns: steps.length,
      stepCount: steps.length,
      generation: 0,
      steps,
      policyWarnings: [],
      usage: { ...initialRunUsage(undefined), turns: [] },
    },
  };
}

describe('the record of a dry run', () => {
  test('holds the source steps from the fork point on, with their tool, digest and recorded observation', () => {
    const record = buildDryRunRecord(source([step(1, 'a'), step(2, 'b'), step(3, 'a')]), 2, 'run');
    expect(record).toEqual({
      sourceWorkflowId: 'src',
      readOnlyTools: 'run',
      recorded: [
        { stepId: 2, tool: 'b', digest: 'digest-2', observation: { status: 'ok', output: { done: 2 } } },
        { stepId: 3, tool: 'a', digest: 'digest-3', observation: { status: 'ok', output: { done: 3 } } },
      ],
    });
  });

  test('keeps recorded failures (they answer with the same error) but not calls without a digest', () => {
    const failed = step(1, 'a', {
      status: 'failed',
      observation: {
        status: 'error',
        code: 'PAYMENT_REQUIRED',
        message: 'm',
        hint: 'h',
        retryable: false,
        attempts: 1,
      },
    });
    const refusedBeforeTheActivity = step(2, 'a', { argumentsDigest: undefined });
    const record = buildDryRunRecord(source([failed, refusedBeforeTheActivity]), 1, 'run');
    expect(record.recorded.map((call) => [call.stepId, call.observation.status])).toEqual([[1, 'error']]);
  });

  test('says which source calls a human approved (an approved irreversible call does not block compensable ones)', () => {
    const approval = { digest: 'd', arguments: {}, requestedAt: 1, deadline: 2 };
    const approved = step(1, 'a', { approval: { ...approval, decision: 'approved' } });
    const unapproved = step(2, 'a');
    const record = buildDryRunRecord(source([approved, unapproved]), 1, 'run');
    expect(record.recorded.map((call) => call.approved)).toEqual([true, undefined]);
  });

  test('leaves out the refusals of an earlier dry run: they recorded no outcome of the tool', () => {
    const refused = step(1, 'a', { dryRun: { answer: 'refused' } });
    expect(buildDryRunRecord(source([refused]), 1, 'run').recorded).toEqual([]);
  });

  test('carries a claim-checked output as its preview, naming the source', () => {
    const stored = step(1, 'a', {
      observation: {
        status: 'ok',
        output: { $durableTools: 'stored-output', handle: 'out:src/first/1', bytes: 9000, preview: 'abc' },
      },
    });
    const [call] = buildDryRunRecord(source([stored]), 1, 'record').recorded;
    expect(call!.observation).toEqual({
      status: 'ok',
      output: {
        $durableTools: 'shortened',
        bytes: 9000,
        preview: 'abc',
        note: expect.stringContaining('run src'),
      },
    });
  });

  test('fits a budget by replacing the largest recorded outputs with previews, largest first', () => {
    const big = (n: number) =>
      step(n, 'a', { observation: { status: 'ok', output: { text: 'x'.repeat(n * 10_000) } } });
    const record = buildDryRunRecord(source([big(1), big(2), big(3)]), 1, 'run');
    const fitted = fitDryRunRecord(record, jsonByteLength(record) - 25_000);
    expect(jsonByteLength(fitted)).toBeLessThanOrEqual(jsonByteLength(record) - 25_000);
    const shortened = fitted.recorded.map(
      (call) => (call.observation as { output: { $durableTools?: string } }).output,
    );
    expect(shortened.map((output) => output.$durableTools)).toEqual([undefined, undefined, 'shortened']);
  });
});

describe('a dry run spending its record', () => {
  function record(): DryRunRecord {
    return {
      plan: buildDryRunRecord(
        source([step(1, 'a'), step(2, 'b'), step(3, 'a', { argumentsDigest: 'digest-1' })]),
        1,
        'run',
      ),
      answered: new Set(),
    };
  }

  test("tells the activity the unused recorded calls of the call's tool only", () => {
    const spending = record();
    spending.answered.add(1);
    expect(dryRunCall(spending, 'a')).toEqual({
      readOnlyTools: 'run',
      candidates: [{ stepId: 3, digest: 'digest-1' }],
    });
  });

  test('answers each recorded call once; a second call with the same digest takes the next such record', () => {
    const spending = record();
    expect(takeRecordedAnswer(spending, 'a', 1, 'digest-1')?.sourceStep).toBe(1);
    // A call settled in parallel was matched to step 1 too: it gets step 3, which has the same digest.
    expect(takeRecordedAnswer(spending, 'a', 1, 'digest-1')?.sourceStep).toBe(3);
    expect(takeRecordedAnswer(spending, 'a', 1, 'digest-1')).toBeUndefined();
  });
});
