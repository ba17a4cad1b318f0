/**
 * Determinism guard for tracing: the recorded histories of `test/fixtures/histories` replay with the workflows
 * bundled as a traced worker bundles them (Temporal's OpenTelemetry workflow interceptors, the engine's spans:
 * `invoke_agent`, `model_turn`, `execute_tool`, `compensate`). Spans are not commands: a worker that turns tracing
 * on (or a version that adds spans) takes over runs in flight without a nondeterminism error.
 */
import { DefaultLogger, Runtime, type WorkerOptions } from '@temporalio/worker';
import { withWorkerTracing } from '../../src/telemetry/worker-tracing';
import { loadHistoryFixtures, replayFailures, replayHistoryFixtures } from '../support/history-fixtures';
import { inMemoryTracing } from '../support/in-memory-telemetry';

const fixtures = loadHistoryFixtures();

beforeAll(() => {
  Runtime.install({ logger: new DefaultLogger('WARN') });
});

test('every recorded history replays deterministically on a traced worker', async () => {
  const { spanProcessor } = inMemoryTracing();
  const traced = withWorkerTracing<Pick<WorkerOptions, 'interceptors' | 'sinks'>>({}, { spanProcessor });
  const results = await replayHistoryFixtures(fixtures, {
    replayName: 'workflow-replay-traced-test',
    interceptors: { workflowModules: traced.interceptors?.workflowModules ?? [] },
    ...(traced.sinks ? { sinks: traced.sinks } : {}),
  });
  expect(replayFailures(results, fixtures)).toEqual([]);
  expect(results).toHaveLength(fixtures.length);
});
