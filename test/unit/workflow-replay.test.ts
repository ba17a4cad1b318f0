/**
 * Determinism guard: replays the recorded histories of `test/fixtures/histories` against the current
 * workflow code, without a server. A change that makes a recorded run take another path (activities in
 * another order, an activity more or less, a timer, ...) fails here; runs in flight would fail the same way
 * in production. Intended changes need `patched()`; new code paths deserve a new fixture
 * (`npm run fixtures:record`, see `test/support/record-histories.ts`).
 */
import { DefaultLogger, Runtime, Worker, type ReplayResult } from '@temporalio/worker';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the fixtures are and how a file name maps to its workflow id (see the recorder). */
const REPLAY = {
  dir: join(__dirname, '..', 'fixtures', 'histories'),
  workflowIdPrefix: 'replay-',
  scenarios: ['success', 'retries', 'compensation', 'continue-as-new'],
} as const;

/** `compensation.json` → `compensation`; `continue-as-new.1.json` → `continue-as-new`. */
function scenarioOf(file: string): string {
  return file.replace(/(\.\d+)?\.json$/, '');
}

const fixtures = readdirSync(REPLAY.dir)
  .filter((file) => file.endsWith('.json'))
  .sort()
  .map((file) => ({
    file,
    workflowId: `${REPLAY.workflowIdPrefix}${scenarioOf(file)}`,
    history: JSON.parse(readFileSync(join(REPLAY.dir, file), 'utf8')) as unknown,
  }));

beforeAll(() => {
  // The replay worker's lifecycle messages are noise here; a determinism error is reported by the test.
  Runtime.install({ logger: new DefaultLogger('WARN') });
});

describe('recorded agent-run histories', () => {
  test('cover every scenario, and each continue-as-new generation', () => {
    expect(new Set(fixtures.map((f) => scenarioOf(f.file)))).toEqual(new Set(REPLAY.scenarios));
    expect(fixtures.filter((f) => scenarioOf(f.file) === 'continue-as-new').length).toBeGreaterThan(1);
  });

  test('replay deterministically with the current workflow code', async () => {
    const results: ReplayResult[] = [];
    const replay = Worker.runReplayHistories(
      { workflowsPath: require.resolve('../../src/workflows'), replayName: 'workflow-replay-test' },
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
});
