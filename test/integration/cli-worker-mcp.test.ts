import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { callTurn, scriptedRun } from '../support/agent-runs';
import { startCli, type CliProcess } from '../support/cli-process';
import { everythingStdio } from '../support/mcp-everything';
import { testServer, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

/*
 * `durable-tools worker` serves the tools of MCP servers (issue 43): given by `--mcp-config <file>` (or
 * DURABLE_TOOLS_MCP_CONFIG, the same file), or by the tools module's `mcp` export — as `durable-tools mcp` takes them.
 */

const temporal = useTestTemporal();
const dir = mkdtempSync(join(tmpdir(), 'cli-worker-mcp-'));

function workerEnv(taskQueue: string): NodeJS.ProcessEnv {
  return {
    TEMPORAL_ADDRESS: testServer().address,
    TEMPORAL_NAMESPACE: testServer().namespace,
    DURABLE_TOOLS_TASK_QUEUE: taskQueue,
    DURABLE_TOOLS_SQLITE_PATH: join(dir, `${taskQueue}-keys.sqlite`),
    DURABLE_TOOLS_TRANSCRIPT_SQLITE_PATH: join(dir, `${taskQueue}-transcripts.sqlite`),
    DURABLE_TOOLS_AUDIT_SQLITE_PATH: join(dir, `${taskQueue}-audit.sqlite`),
    DURABLE_TOOLS_STREAM_STORE: 'off',
    TEMPORAL_CONFIG_FILE: join(dir, 'no-temporal.toml'),
  };
}

/** Starts `durable-tools worker <args>`, waits until it says it serves the everything server's tools. */
async function startWorker(args: string[], taskQueue: string): Promise<CliProcess> {
  const worker = startCli(['worker', ...args], workerEnv(taskQueue));
  await waitFor(
    'the worker to start',
    () => {
      if (worker.child.exitCode !== null) throw new Error(`worker exited:\n${worker.stdout()}\n${worker.stderr()}`);
      return /durable-tools worker: .*MCP servers everything/.test(worker.stdout());
    },
    { timeoutMs: 120_000 },
  );
  return worker;
}

/** Runs an agent run calling the everything server's `get-sum` on `taskQueue`. */
async function runGetSum(taskQueue: string) {
  const input = scriptedRun('add over MCP', [
    callTurn('everything__get-sum', { a: 2, b: 40 }),
    { text: '42', final: true },
  ]);
  return waitForAgentRun(await startAgentRun(temporal.client, input, { taskQueue }));
}

async function stop(worker: CliProcess | undefined): Promise<void> {
  if (!worker || worker.child.exitCode !== null) return;
  process.kill(-worker.child.pid!, 'SIGTERM');
  await worker.exited;
}

test('worker --mcp-config serves the tools of the configured MCP servers in a run', async () => {
  const taskQueue = uniqueTaskQueue('cli-mcp-flag');
  const config = join(dir, 'mcp.json');
  writeFileSync(config, JSON.stringify({ mcpServers: { everything: everythingStdio() } }));
  let worker: CliProcess | undefined;
  try {
    worker = await startWorker(['--tools', 'test/support/cli-tools.ts', '--mcp-config', config], taskQueue);
    const result = await runGetSum(taskQueue);

    expect(result.status).toBe('completed');
    expect(result.steps.map((step) => [step.tool, step.status])).toEqual([['everything__get-sum', 'succeeded']]);
    expect(JSON.stringify(result.steps[0]?.observation)).toContain('42');
  } finally {
    await stop(worker);
  }
}, 300_000);

test('worker --tools serves the MCP servers the tools module exports as `mcp`', async () => {
  const taskQueue = uniqueTaskQueue('cli-mcp-module');
  let worker: CliProcess | undefined;
  try {
    worker = await startWorker(['--tools', 'test/support/cli-mcp-tools.ts'], taskQueue);
    const result = await runGetSum(taskQueue);

    expect(result.status).toBe('completed');
    expect(result.steps.map((step) => [step.tool, step.status])).toEqual([['everything__get-sum', 'succeeded']]);
  } finally {
    await stop(worker);
  }
}, 300_000);
