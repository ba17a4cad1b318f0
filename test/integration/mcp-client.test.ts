import type { WorkflowHandle } from '@temporalio/client';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { createMcpHost, type McpHost } from '../../src/mcp/client/mcp-host';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import type { AgentRunInput, AgentRunResult } from '../../src/contract/agent-run-types';
import { everythingStdio, startEverythingHttp, type EverythingHttp } from '../support/mcp-everything';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

let http: EverythingHttp;
let host: McpHost;
const taskQueue = uniqueTaskQueue('mcp-client');

const temporal = useTestTemporal({
  worker: async (temporal) => {
    http = await startEverythingHttp();
    // One stdio server we may kill, one HTTP server whose descriptions are untrusted.
    host = createMcpHost(
      { mcpServers: { everything: everythingStdio('trusted'), web: { url: http.url } } },
      { warn: () => {} },
    );
    // Heartbeats reach the server within a second (instead of 80% of the heartbeat timeout), so progress shows soon.
    return createTestWorker(temporal, {
      tools: [],
      taskQueue,
      mcp: host,
      workerOptions: { maxHeartbeatThrottleInterval: '1s' },
    });
  },
});
afterAll(async () => {
  await host?.close();
  await http?.stop();
});

const FINISH: ScriptedTurn = { text: 'done', final: true };

/**
 * Runs a scripted agent run on the shared worker; `during` runs while the run is live; `more` is merged into its
 * input (`fastPath: false`: every step a regular activity).
 */
async function runScript(
  name: string,
  script: ScriptedTurn[],
  during?: (handle: WorkflowHandle) => Promise<void>,
  more: Partial<AgentRunInput> = {},
): Promise<{ result: AgentRunResult; handle: WorkflowHandle }> {
  const handle = await startAgentRun(
    temporal.client,
    { goal: name, model: { provider: 'scripted', script }, ...more },
    { taskQueue },
  );
  await during?.(handle);
  return { handle, result: await waitForAgentRun(handle) };
}

async function pendingHeartbeat(handle: WorkflowHandle): Promise<unknown> {
  const { raw } = await handle.describe();
  const payload = raw.pendingActivities?.[0]?.heartbeatDetails?.payloads?.[0]?.data;
  return payload ? JSON.parse(Buffer.from(payload).toString('utf8')) : undefined;
}

describe('MCP tools of server-everything (stdio) in an agent run', () => {
  test('a call returns the server result and the catalog with namespaced names is recorded in history', async () => {
    // Regular activities: the catalog is describeTools' result, the call an activity of the tool's name (on the
    // fast path, the default, both are inside the first step's marker).
    const { result, handle } = await runScript(
      'mcp-sum',
      [{ toolCalls: [{ name: 'everything__get-sum', arguments: { a: 2, b: 40 } }] }, FINISH],
      undefined,
      { fastPath: false },
    );
    expect(result.status).toBe('completed');
    expect(result.steps[0]?.observation).toEqual({
      status: 'ok',
      output: { content: [{ type: 'text', text: 'The sum of 2 and 40 is 42.' }] },
    });
    const history = await handle.fetchHistory();
    const described = history.events?.find((e) => e.activityTaskCompletedEventAttributes)
      ?.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data;
    const catalog = JSON.parse(Buffer.from(described ?? []).toString('utf8')) as { name: string; effect: string }[];
    expect(catalog).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'everything__get-sum', effect: 'read-only' }),
        expect.objectContaining({ name: 'everything__echo' }),
      ]),
    );
    const types = history.events?.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name);
    expect(types).toContain('everything__get-sum');
  });

  test('progress notifications of a long call become the activity heartbeat details', async () => {
    const { result } = await runScript(
      'mcp-progress',
      [
        { toolCalls: [{ name: 'everything__trigger-long-running-operation', arguments: { duration: 4, steps: 4 } }] },
        FINISH,
      ],
      async (handle) => {
        const details = await waitFor('MCP progress in the heartbeat details', async () => {
          const beat = (await pendingHeartbeat(handle)) as {
            tool?: { mcpProgress?: { progress: number; total: number } };
          };
          return beat?.tool?.mcpProgress;
        });
        expect(details.total).toBe(4);
        expect(details.progress).toBeGreaterThanOrEqual(1);
      },
    );
    expect(result.steps[0]?.status).toBe('succeeded');
  });

  test('a tool the server does not list is refused as UNKNOWN_TOOL and nothing is called', async () => {
    const { result, handle } = await runScript('mcp-unknown', [
      { toolCalls: [{ name: 'everything__no-such-tool', arguments: {} }] },
      FINISH,
    ]);
    expect(result.steps[0]?.observation).toMatchObject({ status: 'error', code: 'UNKNOWN_TOOL' });
    const types = (await handle.fetchHistory()).events?.map(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name,
    );
    expect(types).not.toContain('everything__no-such-tool');
  });

  test('bad arguments (type drift, an invented field) are refused by the guard built from the input schema', async () => {
    const { result } = await runScript('mcp-bad-args', [
      { toolCalls: [{ name: 'everything__get-sum', arguments: '{"a":"2","b":40}' }] },
      { toolCalls: [{ name: 'everything__get-sum', arguments: { a: 2, b: 40, c: 1 } }] },
      FINISH,
    ]);
    expect(result.steps.map((s) => s.observation)).toEqual([
      expect.objectContaining({ code: 'INVALID_ARGUMENTS', hint: expect.stringContaining('`a` must be a number') }),
      expect.objectContaining({
        code: 'INVALID_ARGUMENTS',
        hint: expect.stringContaining('remove the unknown field `c`'),
      }),
    ]);
  });

  test('a server killed in the middle of a read-only call is restarted and the call retried', async () => {
    const { result } = await runScript(
      'mcp-killed',
      [
        { toolCalls: [{ name: 'everything__trigger-long-running-operation', arguments: { duration: 3, steps: 3 } }] },
        FINISH,
      ],
      async () => {
        const pid = await waitFor('the long call to reach the server', async () =>
          host.pool.inFlightCalls('everything') > 0 ? host.pool.processId('everything') : undefined,
        );
        process.kill(pid, 'SIGKILL');
      },
    );
    expect(result.steps[0]).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(result.steps[0]?.observation).toMatchObject({
      status: 'ok',
      output: { content: [{ type: 'text', text: expect.stringContaining('Long running operation completed') }] },
    });
  });
});

describe('MCP tools of server-everything over Streamable HTTP in an agent run', () => {
  test('a call returns the server result, progress works, and a tool error is a permanent observation with its text', async () => {
    const { result } = await runScript('mcp-http', [
      { toolCalls: [{ name: 'web__echo', arguments: { message: 'hello over http' } }] },
      { toolCalls: [{ name: 'web__trigger-long-running-operation', arguments: { duration: 1, steps: 2 } }] },
      { toolCalls: [{ name: 'web__get-resource-reference', arguments: { resourceType: 'Text', resourceId: 1.5 } }] },
      FINISH,
    ]);
    expect(result.steps.map((s) => [s.tool, s.status])).toEqual([
      ['web__echo', 'succeeded'],
      ['web__trigger-long-running-operation', 'succeeded'],
      ['web__get-resource-reference', 'failed'],
    ]);
    expect(result.steps[0]?.observation).toEqual({
      status: 'ok',
      output: { content: [{ type: 'text', text: 'Echo: hello over http' }] },
    });
    expect(result.steps[2]?.observation).toMatchObject({
      status: 'error',
      retryable: false,
      message: expect.stringContaining('Invalid resourceId: 1.5'),
    });
  });
});
