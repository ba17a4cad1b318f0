/**
 * The recorded histories of test/fixtures/histories (`npm run fixtures:record`, test/support/record-histories.ts)
 * and their replay with the engine's workflows, for the determinism guards (workflow-replay*.test.ts).
 */
import { Worker, type ReplayResult, type ReplayWorkerOptions } from '@temporalio/worker';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { engineBundleOptions } from '../../src/runtime/engine-bundle-options';

/** One recorded history: its file, the workflow id the recorder gave its run, the history as JSON. */
export interface HistoryFixture {
  file: string;
  workflowId: string;
  history: unknown;
}

const DIR = join(__dirname, '..', 'fixtures', 'histories');

/** `compensation.json` → `compensation`; `continue-as-new.1.json` → `continue-as-new`. */
export function scenarioOf(file: string): string {
  return file.replace(/(\.\d+)?\.json$/, '');
}

/** Every recorded history, by file name; the workflow id is the recorder's `replay-<scenario>`. */
export function loadHistoryFixtures(): HistoryFixture[] {
  return readdirSync(DIR)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => ({
      file,
      workflowId: `replay-${scenarioOf(file)}`,
      history: JSON.parse(readFileSync(join(DIR, file), 'utf8')) as unknown,
    }));
}

/**
 * Replays every fixture with the engine's workflows bundled as its workers bundle them (shared pure modules, the
 * sandbox's globals read once), plus `options` (interceptors, sinks); the results in the fixtures' order.
 */
export async function replayHistoryFixtures(
  fixtures: readonly HistoryFixture[],
  options: Pick<ReplayWorkerOptions, 'replayName' | 'interceptors' | 'sinks'>,
): Promise<ReplayResult[]> {
  const results: ReplayResult[] = [];
  const replay = Worker.runReplayHistories(
    { workflowsPath: require.resolve('../../src/workflows'), bundlerOptions: engineBundleOptions(), ...options },
    fixtures.map(({ workflowId, history }) => ({ workflowId, history })),
  );
  for await (const result of replay) results.push(result);
  return results;
}

/** The replays that failed, `<file>: <error name>: <message>` each (none when every history replayed). */
export function replayFailures(results: readonly ReplayResult[], fixtures: readonly HistoryFixture[]): string[] {
  return results
    .map((result, i) => ({ file: fixtures[i]?.file, error: result.error }))
    .filter((r) => r.error !== undefined)
    .map((r) => `${r.file}: ${r.error?.name}: ${r.error?.message}`);
}
