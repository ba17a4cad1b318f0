/**
 * `durable-tools replay`: recorded runs fetched from the test server and replayed against the current workflow
 * code (ok, exit 0) or against a deliberately changed module (`test/support/changed-workflows`: nondeterministic
 * at the first command, exit 1); runs selected by a visibility query; clear errors for what cannot be replayed.
 */
import { temporal as proto } from '@temporalio/proto';
import { join } from 'node:path';
import type { AgentRunsReplayReport } from '../../src/runtime/replay-agent-runs';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { callTurn, scriptedRun, type FinishedRun } from '../support/agent-runs';
import { runCliInProcess } from '../support/cli-in-process';
import { createTestWorker, testServer, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { createRecordingTools } from '../support/test-tools';
import { waitFor } from '../support/wait-for';

const taskQueue = uniqueTaskQueue('replay');
const temporal = useTestTemporal();
const CHANGED_WORKFLOWS = 'test/support/changed-workflows';

/** Two finished runs on this file's task queue: two tool calls and an answer each. */
const runs: FinishedRun[] = [];

beforeAll(async () => {
  // The command connects with the settings of the environment, as it would in CI.
  process.env.TEMPORAL_ADDRESS = testServer().address;
  process.env.TEMPORAL_NAMESPACE = testServer().namespace;
  process.env.TEMPORAL_CONFIG_FILE = join(process.env.DT_TEST_DIR ?? '/nonexistent', 'no-temporal.toml');
  const worker = await createTestWorker(temporal, { tools: createRecordingTools().tools, taskQueue });
  // One worker runs once: both runs start and end while it runs.
  await worker.runUntil(async () => {
    for (const goal of ['add twice', 'add twice again']) {
      const input = scriptedRun(goal, [
        callTurn('add', { a: 1, b: 2 }),
        callTurn('add', { a: 3, b: 4 }),
        { text: 'The sums are 3 and 7.', final: true },
      ]);
      const handle = await startAgentRun(temporal.client, input, { taskQueue });
      runs.push({ handle, result: await waitForAgentRun(handle) });
    }
  });
});

const first = (): FinishedRun => runs[0]!;

test('a completed run replays against the current workflow code, and the command exits 0', async () => {
  const { workflowId, firstExecutionRunId } = first().handle;
  const { code, stdout } = await runCliInProcess(['replay', workflowId]);
  expect({ code, stdout }).toEqual({ code: 0, stdout: expect.stringContaining(`${workflowId}  run `) });
  expect(stdout).toContain(`${workflowId}  run ${firstExecutionRunId}  ok`);
  expect(stdout).toContain('replayed 1, nondeterministic 0, failed 0');
});

test('the same run replayed against a changed workflow module is nondeterministic at its first command, and the command exits 1', async () => {
  const { workflowId } = first().handle;
  const history = await temporal.client.workflow.getHandle(workflowId).fetchHistory();
  // The run's first command: the marker of the run-scoped keys patch, recorded before anything is scheduled.
  const firstCommand = history.events!.find(
    (event) => event.eventType === proto.api.enums.v1.EventType.EVENT_TYPE_MARKER_RECORDED,
  )!;
  const { code, stdout } = await runCliInProcess(['replay', workflowId, '--workflows', CHANGED_WORKFLOWS]);
  expect(code).toBe(1);
  expect(stdout).toMatch(
    new RegExp(
      `${workflowId} {2}run \\S+ {2}nondeterministic at event ${firstCommand.eventId} \\(MarkerRecorded\\): .*Nondeterminism error`,
    ),
  );
  expect(stdout).toContain('replayed 1, nondeterministic 1, failed 0');
});

test('--query replays every run the visibility query matches', async () => {
  const query = `TaskQueue = '${taskQueue}'`;
  await waitFor('both runs in visibility', async () => (await temporal.client.workflow.count(query)).count === 2);
  const { code, stdout } = await runCliInProcess(['replay', '--query', query, '--json']);
  expect(code).toBe(0);
  const report = JSON.parse(stdout) as AgentRunsReplayReport;
  expect(new Set(report.results.map((r) => r.workflowId))).toEqual(new Set(runs.map((r) => r.handle.workflowId)));
  expect(report).toMatchObject({ replayed: 2, nondeterministic: 0, failed: 0 });
  expect(report.results.every((r) => r.outcome === 'ok')).toBe(true);
});

test('an unknown workflow id is reported as not found, and the command exits 1', async () => {
  const workflowId = `${taskQueue}-no-such-run`;
  const { code, stdout } = await runCliInProcess(['replay', workflowId]);
  expect(code).toBe(1);
  expect(stdout).toContain(
    `${workflowId}  run -  failed: No workflow ${workflowId} in namespace ${testServer().namespace}.`,
  );
  expect(stdout).toContain('replayed 1, nondeterministic 0, failed 1');
});

test('a query the server cannot parse is reported in its words, and the command exits 1', async () => {
  const { code, stderr } = await runCliInProcess(['replay', '--query', 'TaskQueue = = nonsense']);
  expect(code).toBe(1);
  expect(stderr).toMatch(/The server refused the query "TaskQueue = = nonsense": \S+/);
});

test('workflow ids and --query together are a usage error, exit 2', async () => {
  const { code, stderr } = await runCliInProcess(['replay', 'some-run', '--query', `TaskQueue = '${taskQueue}'`]);
  expect(code).toBe(2);
  expect(stderr).toMatch(/Give workflow ids or --query, not both[\s\S]*durable-tools replay --help/);
});

test('a server that does not answer is reported with its address, and the command exits 1', async () => {
  const address = process.env.TEMPORAL_ADDRESS;
  process.env.TEMPORAL_ADDRESS = '127.0.0.1:1';
  try {
    const { code, stderr } = await runCliInProcess(['replay', 'some-run']);
    expect(code).toBe(1);
    expect(stderr).toContain('Cannot reach a Temporal server at 127.0.0.1:1');
  } finally {
    process.env.TEMPORAL_ADDRESS = address;
  }
});
