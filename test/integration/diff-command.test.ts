/**
 * `durable-tools diff` against the test server: two scripted runs that share step 1 and charge different
 * amounts at step 2 are read as `show` reads them, step 2 is marked as their first divergence (text and
 * `--json`), and an unknown run or an unreachable server is said clearly, with diff(1)'s exit codes.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { diffAgentRuns } from '../../src/client/diff-agent-runs';
import type { RunDiff } from '../../src/client/run-diff';
import { findFreePort } from '../../src/dev-server/free-port';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { callTurn, scriptedRun } from '../support/agent-runs';
import { runCliInProcess } from '../support/cli-in-process';
import { createTestWorker, testServer, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { addContract, chargeCardContract } from '../support/test-tools';

const taskQueue = uniqueTaskQueue('diff-command');
const tools = [
  addContract.implement(async ({ a, b }) => ({ sum: a + b })),
  chargeCardContract.implement(async ({ amountCents }) => ({ chargeId: `charge-${amountCents}` })),
];
const temporal = useTestTemporal({ worker: (temporal) => createTestWorker(temporal, { tools, taskQueue }) });

/** The environment the in-process command line reads its connection settings from. */
const commandEnv: NodeJS.ProcessEnv = {
  TEMPORAL_ADDRESS: testServer().address,
  TEMPORAL_NAMESPACE: testServer().namespace,
  TEMPORAL_CONFIG_FILE: join(mkdtempSync(join(tmpdir(), 'diff-command-')), 'no-temporal.toml'),
};
const savedEnv = { ...process.env };
let runA: string;
let runB: string;

/** A run that adds 1 + 2, then charges `amountCents`, then answers. */
async function chargeRun(amountCents: number): Promise<string> {
  const input = scriptedRun('add, then charge', [
    callTurn('add', { a: 1, b: 2 }),
    callTurn('charge_card', { amountCents }),
    { text: 'charged', final: true },
  ]);
  const handle = await startAgentRun(temporal.client, input, { taskQueue });
  expect((await waitForAgentRun(handle)).status).toBe('completed');
  return handle.workflowId;
}

beforeAll(async () => {
  Object.assign(process.env, commandEnv);
  runA = await chargeRun(1000);
  runB = await chargeRun(2500);
});
afterAll(() => {
  for (const name of Object.keys(commandEnv)) delete process.env[name];
  Object.assign(process.env, savedEnv);
});

test('diff marks step 2, where the runs charge different amounts, and exits 1 as diff(1) does', async () => {
  const { code, stdout } = await runCliInProcess(['diff', runA, runB]);
  const lines = stdout.trimEnd().split('\n');
  expect(lines[0]).toMatch(
    new RegExp(`^run-a  ${runA}  completed · 2 tool calls · 3 model turns · tokens not reported by the model`),
  );
  expect(lines[1]).toMatch(new RegExp(`^run-b  ${runB}  completed · 2 tool calls · 3 model turns`));
  expect(lines.filter((line) => line.startsWith('>'))).toEqual([
    expect.stringMatching(/^>\s+2\s+a\s+charge_card\s+\{"amountCents":1000\}\s+succeeded\s+ok/),
    expect.stringMatching(/^>\s+b\s+charge_card\s+\{"amountCents":2500\}\s+succeeded\s+ok/),
  ]);
  expect(lines).toContainEqual(expect.stringMatching(/^ {3}1\s+a\s+add\s+\{"a":1,"b":2\}\s+succeeded\s+ok/));
  expect(lines.at(-1)).toBe('first divergence: step 2 (arguments differ)');
  expect(code).toBe(1);
});

test('diff --json says firstDivergence: 2, with both runs aligned step by step', async () => {
  const { code, stdout } = await runCliInProcess(['diff', runA, runB, '--json']);
  const diff = JSON.parse(stdout) as RunDiff;
  expect(diff.firstDivergence).toBe(2);
  expect(diff.divergenceReason).toBe('arguments');
  expect(diff.rows.map((row) => [row.stepId, row.differences])).toEqual([
    [1, []],
    [2, ['arguments']],
  ]);
  expect(diff.rows[1]!.b).toMatchObject({ tool: 'charge_card', arguments: { amountCents: 2500 }, outcome: 'ok' });
  expect(code).toBe(1);
});

test('a run compared with itself has no divergence and exits 0', async () => {
  const { code, stdout } = await runCliInProcess(['diff', runA, runA]);
  expect(stdout.trimEnd().split('\n').at(-1)).toBe('no divergence');
  expect(code).toBe(0);
});

test('diffAgentRuns gives the client the same diff the command prints as JSON', async () => {
  const printed = await runCliInProcess(['diff', runA, runB, '--json']);
  const diff = await diffAgentRuns(temporal.client, runA, runB);
  expect(diff.a).toMatchObject({ workflowId: runA, status: 'completed', steps: 2, turns: 3 });
  expect(JSON.parse(printed.stdout)).toEqual(JSON.parse(JSON.stringify(diff)));
});

test('an unknown run id exits 2 and names the run, the namespace and the server', async () => {
  const { code, stderr } = await runCliInProcess(['diff', runA, `${taskQueue}-nothing`]);
  expect(stderr).toContain(
    `No run ${taskQueue}-nothing in namespace ${testServer().namespace} at ${testServer().address}.`,
  );
  expect(code).toBe(2);
});

test('an unreachable server exits 2 and says where it looked', async () => {
  const address = `127.0.0.1:${await findFreePort()}`;
  process.env.TEMPORAL_ADDRESS = address;
  try {
    const { code, stderr } = await runCliInProcess(['diff', runA, runB]);
    expect(stderr).toMatch(/^durable-tools diff: /);
    expect(stderr).toContain(`Cannot reach a Temporal server at ${address}`);
    expect(code).toBe(2);
  } finally {
    process.env.TEMPORAL_ADDRESS = commandEnv.TEMPORAL_ADDRESS;
  }
});

test('diff with one run id exits 2 and says which argument is missing', async () => {
  const { code, stderr } = await runCliInProcess(['diff', 'agent-run-x']);
  expect(stderr).toMatch(/Missing argument: <run a> <run b>[\s\S]*durable-tools diff --help/);
  expect(code).toBe(2);
});
