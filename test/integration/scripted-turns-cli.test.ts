/**
 * `durable-tools run --script <file>` with the documented turn format: the example file runs the trip against
 * a worker of the demo tools, and a bad file is refused before anything starts, naming the problem by path.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tools as tripTools } from '../../examples/trip-tools';
import { runCliToEnd } from '../support/cli-process';
import { createTestWorker, testServer, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';

const dir = mkdtempSync(join(tmpdir(), 'scripted-turns-cli-'));
const taskQueue = uniqueTaskQueue('scripted-turns');
const env: NodeJS.ProcessEnv = {
  TEMPORAL_ADDRESS: testServer().address,
  TEMPORAL_NAMESPACE: testServer().namespace,
  TEMPORAL_CONFIG_FILE: join(dir, 'no-temporal.toml'),
  DURABLE_TOOLS_TASK_QUEUE: taskQueue,
};

useTestTemporal({ worker: (temporal) => createTestWorker(temporal, { tools: tripTools, taskQueue }) });

test('run --script examples/trip-turns.json books the trip, correcting the drifted argument, and exits 0', async () => {
  const run = await runCliToEnd(['run', 'Book a trip to Berlin', '--script', 'examples/trip-turns.json'], env);
  expect(run.stderr).not.toMatch(/Error|turn format/);
  expect(run.stdout).toContain('INVALID_ARGUMENTS');
  expect(run.stdout).toMatch(/completed/);
  expect(run.stdout).toContain('Your trip is booked: flight FR2381 for two and 3 nights in Berlin.');
  expect(run.code).toBe(0);
});

test('a script that calls a tool no worker has is warned of before the run starts', async () => {
  const file = join(dir, 'typo.json');
  writeFileSync(
    file,
    JSON.stringify([
      { toolCalls: [{ name: 'search_flight', arguments: { from: 'LIS', to: 'BER' } }] },
      { text: 'Done.', final: true },
    ]),
  );
  const run = await runCliToEnd(['run', 'Find a flight', '--script', file], env);
  expect(run.stderr).toMatch(
    new RegExp(`the script calls "search_flight", which no worker of task queue "${taskQueue}" has[^]*search_flights`),
  );
  expect(run.stdout).toMatch(/Run \S+ started/);
  expect(run.stdout).toContain('UNKNOWN_TOOL');
});

test('a script whose tools all exist starts without a warning', async () => {
  const run = await runCliToEnd(['run', 'Book a trip to Berlin', '--script', 'examples/trip-turns.json'], env);
  expect(run.stderr).not.toMatch(/no worker of task queue/);
});

test('a script file with a bad turn exits 2 naming the path of the problem and a minimal script', async () => {
  const file = join(dir, 'bad.json');
  writeFileSync(file, JSON.stringify([{ text: 'a' }, { text: 'b' }, { toolCalls: [{ name: 7 }] }]));
  const run = await runCliToEnd(['run', 'Anything', '--script', file], env);
  expect(run.stderr).toContain(`--script ${file}: The script does not have the scripted turn format:`);
  expect(run.stderr).toContain('turns[2].toolCalls[0].name: expected a string (the name of a tool)');
  expect(run.stderr).toContain('A script is a JSON array of turns, e.g. [{"toolCalls": [{"name": "search_flights"');
  expect(run.code).toBe(2);
});

test('run --help shows a minimal script', async () => {
  const help = await runCliToEnd(['run', '--help'], {});
  expect(help.stdout).toContain(
    '[{"toolCalls": [{"name": "search_flights", "arguments": {"from": "LIS", "to": "BER"}}]},',
  );
  expect(help.stdout).toContain('{"text": "Found a flight.", "final": true}]');
  expect(help.code).toBe(0);
});
