/**
 * Determinism guard for tracing: the recorded histories of `test/fixtures/histories` replay with the workflows
 * bundled as a traced worker bundles them (Temporal's OpenTelemetry workflow interceptors, the engine's spans:
 * `invoke_agent`, `model_turn`, `execute_tool`, `compensate`). Spans are not commands: a worker that turns tracing
 * on (or a version that adds spans) takes over runs in flight without a nondeterminism error.
 */
import { DefaultLogger, Runtime, Worker, type ReplayResult, type WorkerOptions } from '@temporalio/worker';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { engineBundleOptions } from '../../src/runtime/engine-bundle-options';
import { withWorkerTracing } from '../../src/telemetry/worker-tracing';
import { inMemoryTracing } from '../support/in-memory-telemetry';

const dir = join(__dirname, '..', 'fixtures', 'histories');
const fixtures = readdirSync(dir)
  .filter((file) => file.endsWith('.json'))
  .sort()
  .map((file) => ({
    file,
    // The recorder's workflow ids: `replay-<scenario>` (see workflow-replay.test.ts).
    workflowId: `replay-${file.replace(/(\.\d+)?\.json$/, '')}`,
    history: JSON.parse(readFileSync(join(dir, file), 'utf8')) as unknown,
  }));

beforeAll(() => {
  Runtime.install({ logger: new DefaultLogger('WARN') });
});

test('every recorded history replays deterministically on a traced worker', async () => {
  const { spanProcessor } = inMemoryTracing();
  const traced = withWorkerTracing<Pick<WorkerOptions, 'interceptors' | 'sinks'>>({}, { spanProcessor });
  const results: ReplayResult[] = [];
  const replay = Worker.runReplayHistories(
    {
      workflowsPath: require.resolve('../../src/workflows'),
      bundlerOptions: engineBundleOptions(),
      replayName: 'workflow-replay-traced-test',
      interceptors: { workflowModules: traced.interceptors?.workflowModules ?? [] },
      ...(traced.sinks ? { sinks: traced.sinks } : {}),
    },
    fixtures.map(({ workflowId, history }) => ({ workflowId, history })),
  );
  for await (const result of replay) results.push(result);
  const failures = results
    .map((result, i) => ({ file: fixtures[i]?.file, error: result.error }))
    .filter((r) => r.error !== undefined)
    .map((r) => `${r.file}: ${r.error?.name}: ${r.error?.message}`);
  expect(failures).toEqual([]);
  expect(results).toHaveLength(fixtures.length);
});
