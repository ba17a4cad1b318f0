/**
 * Determinism guard: replays the recorded histories of `test/fixtures/histories` against the current
 * workflow code, without a server. A change that makes a recorded run take another path (activities in
 * another order, an activity more or less, a timer, ...) fails here; runs in flight would fail the same way
 * in production. Intended changes need `patched()`; new code paths deserve a new fixture
 * (`npm run fixtures:record`, see `test/support/record-histories.ts`).
 *
 * Temporal's check compares activity types and sequence numbers only, so the replay also reports every
 * scheduled activity's arguments (`test/support/replay-activity-interceptor.ts`) and the test compares them
 * with the recorded ones: a replayed run that calls the right tool with other arguments (e.g. compensations
 * of one undo tool in another order) silently takes the recorded results of other calls. A deliberate
 * change of an activity's arguments (a new field) is safe for runs in flight when the activity accepts
 * both shapes: re-record the fixtures then.
 */
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { DefaultLogger, Runtime, type InjectedSinks } from '@temporalio/worker';
import type { WorkflowInfo } from '@temporalio/workflow';
import { loadHistoryFixtures, replayFailures, replayHistoryFixtures, scenarioOf } from '../support/history-fixtures';
import type { ReplayProbeSinks } from '../support/replay-activity-interceptor';

/** The recorded scenarios (see the recorder) and what sets some of them apart. */
const REPLAY = {
  scenarios: [
    'success',
    'retries',
    'compensation',
    'continue-as-new',
    'run-scoped-compensation',
    'run-scoped-continue-as-new',
    'run-scoped-sub-agents',
    'forked',
    'dry-run',
    'fast-path',
    'fast-path-fused',
    'fast-path-chained',
    'fast-path-compensation',
    'engine-2026-12-fast-path',
    'engine-2026-12-continue-as-new',
    'engine-first-step-fast-path',
    'engine-first-step-compensation',
    'engine-fast-default',
    'engine-fast-default-sub-agents',
    'engine-fast-default-opt-out',
  ],
  /** Scenarios whose tool calls all ran as local activities: their keys are in markers, not scheduled activities. */
  localCallsOnly: [
    'fast-path',
    'fast-path-fused',
    'fast-path-chained',
    'engine-2026-12-fast-path',
    'engine-first-step-fast-path',
    'engine-fast-default',
  ] as readonly string[],
  /** Scenarios recorded by code older than run-scoped keys (`${workflowId}/${stepId}`). */
  keyedByWorkflowId: ['success', 'retries', 'compensation', 'continue-as-new'] as readonly string[],
} as const;

/** One scheduled activity: its type and its arguments. */
interface ScheduledActivity {
  activityType: string;
  args: unknown[];
}

/** The activities a recorded history scheduled, in order, with their JSON arguments decoded. */
function recordedActivities(history: unknown): ScheduledActivity[] {
  const events = historyFromJSON(history).events ?? [];
  return events
    .map((event) => event.activityTaskScheduledEventAttributes)
    .filter((attributes) => attributes !== null && attributes !== undefined)
    .map((attributes) => ({
      activityType: attributes.activityType?.name ?? '',
      args: (attributes.input?.payloads ?? []).map((payload) =>
        JSON.parse(Buffer.from(payload.data ?? []).toString('utf8')),
      ),
    }));
}

const fixtures = loadHistoryFixtures();

beforeAll(() => {
  // The replay worker's lifecycle messages are noise here; a determinism error is reported by the test.
  Runtime.install({ logger: new DefaultLogger('WARN') });
});

/** The idempotency keys of the tool calls a recorded history scheduled. */
function toolKeysOf(history: unknown): string[] {
  return recordedActivities(history)
    .map((activity) => (activity.args[0] as { idempotencyKey?: unknown } | undefined)?.idempotencyKey)
    .filter((key): key is string => typeof key === 'string');
}

/** The first execution run id of the chain a recorded history belongs to. */
function firstRunIdOf(history: unknown): string {
  return historyFromJSON(history).events?.[0]?.workflowExecutionStartedEventAttributes?.firstExecutionRunId ?? '';
}

describe('recorded agent-run histories', () => {
  test('cover every scenario, and each continue-as-new generation', () => {
    expect(new Set(fixtures.map((f) => scenarioOf(f.file)))).toEqual(new Set(REPLAY.scenarios));
    expect(fixtures.filter((f) => scenarioOf(f.file) === 'continue-as-new').length).toBeGreaterThan(1);
    expect(fixtures.filter((f) => scenarioOf(f.file) === 'run-scoped-continue-as-new').length).toBeGreaterThan(1);
  });

  test('include runs of older code keyed by workflow id and step, and runs keyed by their first execution too', () => {
    for (const { file, workflowId, history } of fixtures) {
      const keys = toolKeysOf(history);
      const local = REPLAY.localCallsOnly.includes(scenarioOf(file));
      expect({ file, some: keys.length > 0 }).toEqual({ file, some: !local });
      // The first four scenarios were recorded before run-scoped keys; every later one has them.
      const prefix = REPLAY.keyedByWorkflowId.includes(scenarioOf(file))
        ? `${workflowId}/`
        : `${workflowId}/${firstRunIdOf(history)}/`;
      for (const key of keys)
        // A sub-agent's keys (undone by its parent) are under the parent's call key: `${prefix}1/agent/1/undo`.
        expect({ file, key }).toEqual({
          file,
          key: expect.stringMatching(new RegExp(`^${prefix}\\d+(/agent/\\d+)?(/undo)?$`)),
        });
    }
  });

  test('replay deterministically with the current workflow code, scheduling the same activities', async () => {
    const scheduled = new Map<string, ScheduledActivity[]>();
    const sinks: InjectedSinks<ReplayProbeSinks> = {
      replayProbe: {
        activityScheduled: {
          fn: (info: WorkflowInfo, activityType: string, args: unknown[]) => {
            const list = scheduled.get(info.runId) ?? [];
            list.push({ activityType, args });
            scheduled.set(info.runId, list);
          },
          callDuringReplay: true,
        },
      },
    };
    const results = await replayHistoryFixtures(fixtures, {
      replayName: 'workflow-replay-test',
      interceptors: { workflowModules: [require.resolve('../support/replay-activity-interceptor')] },
      sinks,
    });
    expect(replayFailures(results, fixtures)).toEqual([]);
    expect(results).toHaveLength(fixtures.length);
    results.forEach((result, i) => {
      const fixture = fixtures[i]!;
      // JSON round trip: the recorded arguments went through the JSON payload converter.
      const replayed = JSON.parse(JSON.stringify(scheduled.get(result.runId) ?? [])) as ScheduledActivity[];
      expect({ file: fixture.file, activities: replayed }).toEqual({
        file: fixture.file,
        activities: recordedActivities(fixture.history),
      });
    });
  });
});
