/**
 * `durable-tools worker --workflow-stack-traces` (or DURABLE_TOOLS_WORKFLOW_STACK_TRACES=on) keeps Temporal's
 * per-promise stack traces in its workflow threads, so the UI's "Stack Trace" tab (the `__stack_trace` query)
 * answers for the runs it serves; without it the query says they are off (test/integration/workflow-stack-traces).
 */
import { Client, Connection } from '@temporalio/client';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getAgentRunState, startAgentRun } from '../../src/client/agent-run-client';
import { runCliToEnd, startCli, waitForCliOutput, type CliProcess } from '../support/cli-process';
import { testServer, uniqueTaskQueue } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

const TOOLS = 'test/support/cli-tools.ts';
const dir = mkdtempSync(join(tmpdir(), 'durable-tools-stack-traces-'));
let client: Client;

beforeAll(async () => {
  client = new Client({
    connection: await Connection.connect({ address: testServer().address }),
    namespace: testServer().namespace,
  });
});
afterAll(async () => {
  await client?.connection.close();
});

/** The environment of a worker process on its own task queue, against the test server. */
function workerEnv(taskQueue: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    TEMPORAL_ADDRESS: testServer().address,
    TEMPORAL_NAMESPACE: testServer().namespace,
    TEMPORAL_CONFIG_FILE: join(dir, 'no-temporal.toml'),
    DURABLE_TOOLS_TASK_QUEUE: taskQueue,
    DURABLE_TOOLS_SQLITE_PATH: join(dir, `${taskQueue}-keys.sqlite`),
    DURABLE_TOOLS_TRANSCRIPT_STORE: 'memory',
    DURABLE_TOOLS_STREAM_STORE: 'off',
    ...extra,
  };
}

/** Starts a worker process with these arguments, runs a call that holds, and returns the stack trace query's answer. */
async function stackTraceOnAWorkerProcess(
  args: string[],
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<{ answer: PromiseSettledResult<string>; stdout: string }> {
  const taskQueue = uniqueTaskQueue('cli-stack-traces');
  const worker: CliProcess = startCli(['worker', '--tools', TOOLS, ...args], workerEnv(taskQueue, extraEnv));
  try {
    await waitForCliOutput(worker, /durable-tools worker: \d+ tools/);
    const handle = await startAgentRun(
      client,
      {
        goal: 'Hold',
        model: { provider: 'scripted', script: [{ toolCalls: [{ name: 'hold', arguments: {} }] }] },
      },
      { taskQueue },
    );
    try {
      await waitFor('the hold call to run', async () => {
        const state = await getAgentRunState(client, handle.workflowId).catch(() => undefined);
        return state?.steps.some((step) => step.tool === 'hold' && step.status === 'running');
      });
      const [answer] = await Promise.allSettled([
        client.workflow.getHandle(handle.workflowId).query<string>('__stack_trace'),
      ]);
      return { answer, stdout: worker.stdout() };
    } finally {
      await client.workflow.getHandle(handle.workflowId).terminate('test over');
    }
  } finally {
    if (worker.child.exitCode === null) {
      process.kill(-worker.child.pid!, 'SIGTERM');
      await worker.exited;
    }
  }
}

test('worker --workflow-stack-traces says so at start and answers the stack trace query of its runs', async () => {
  const { answer, stdout } = await stackTraceOnAWorkerProcess(['--workflow-stack-traces']);

  expect(stdout).toContain('workflow stack traces on');
  expect(answer.status).toBe('fulfilled');
  expect((answer as PromiseFulfilledResult<string>).value).toMatch(/src\/workflows\/.*\.ts/);
});

test('a worker without the option answers the stack trace query that the traces are off', async () => {
  const { answer, stdout } = await stackTraceOnAWorkerProcess([]);

  expect(stdout).not.toContain('workflow stack traces on');
  expect(answer.status).toBe('rejected');
  expect(String((answer as PromiseRejectedResult).reason)).toMatch(/stack traces are not enabled/);
});

test('DURABLE_TOOLS_WORKFLOW_STACK_TRACES=on turns the traces on like the option', async () => {
  const { answer } = await stackTraceOnAWorkerProcess([], { DURABLE_TOOLS_WORKFLOW_STACK_TRACES: 'on' });

  expect(answer.status).toBe('fulfilled');
});

test('a DURABLE_TOOLS_WORKFLOW_STACK_TRACES that is neither on nor off is a usage error (exit 2)', async () => {
  const taskQueue = uniqueTaskQueue('cli-stack-traces-bad');
  const { code, stderr } = await runCliToEnd(
    ['worker', '--tools', TOOLS],
    workerEnv(taskQueue, { DURABLE_TOOLS_WORKFLOW_STACK_TRACES: 'maybe' }),
  );

  expect(code).toBe(2);
  expect(stderr).toContain('DURABLE_TOOLS_WORKFLOW_STACK_TRACES must be on or off (got "maybe")');
});
