import { randomUUID } from 'node:crypto';
import { AgentRunStartError } from '../../src/client/agent-run-start-error';
import { getAgentRunState, startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { agentRunTools, type AgentRunTool } from '../../src/mcp/server/mcp-agent-run-tools';
import { mcpCallerScope, SHARED_MCP_CALLER } from '../../src/mcp/server/mcp-caller';
import type { AgentRunInput } from '../../src/contract/agent-run-types';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { addContract } from '../support/test-tools';

/**
 * The workflow id is called `workflowId` (docs: "say what you mean"); `runId`, its old name, is still read and
 * answered, with the same value, by `startAgentRun`, the run's state and the MCP tools `start_agent_run` and
 * `get_agent_run`.
 */

const taskQueue = uniqueTaskQueue('agent-run-workflow-id');
/** The workflow ids `add` saw, under the new name and the old one. */
const seen: Array<{ workflowId: string | undefined; runId: string }> = [];
const add = addContract.implement(async ({ a, b }, ctx) => {
  seen.push({ workflowId: ctx.workflowId, runId: ctx.runId });
  return { sum: a + b };
});
const temporal = useTestTemporal({ worker: (temporal) => createTestWorker(temporal, { tools: [add], taskQueue }) });
const input: AgentRunInput = {
  goal: 'Say done',
  model: { provider: 'scripted', script: [{ text: 'Done.', final: true }] },
};

async function executionsOf(workflowId: string): Promise<number> {
  let count = 0;
  for await (const _ of temporal.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) count += 1;
  return count;
}

describe('startAgentRun', () => {
  test('starts the run under the workflowId it is given, and the state names it under workflowId and runId', async () => {
    const workflowId = `wfid-new-${randomUUID()}`;
    const handle = await startAgentRun(temporal.client, input, { taskQueue, workflowId });
    expect(handle.workflowId).toBe(workflowId);
    const result = await waitForAgentRun(handle);
    expect(result).toMatchObject({ status: 'completed', workflowId, runId: workflowId });
    expect(await getAgentRunState(temporal.client, workflowId)).toMatchObject({ workflowId, runId: workflowId });
  });

  test('still takes the workflow id under its deprecated name runId', async () => {
    const workflowId = `wfid-old-${randomUUID()}`;
    const handle = await startAgentRun(temporal.client, input, { taskQueue, runId: workflowId });
    expect(handle.workflowId).toBe(workflowId);
    expect(await waitForAgentRun(handle)).toMatchObject({ workflowId, runId: workflowId });
  });

  test('takes workflowId and runId both given when they are the same id', async () => {
    const workflowId = `wfid-both-${randomUUID()}`;
    const handle = await startAgentRun(temporal.client, input, { taskQueue, workflowId, runId: workflowId });
    expect(handle.workflowId).toBe(workflowId);
    await waitForAgentRun(handle);
  });

  test('refuses workflowId and runId that differ with CONFLICTING_WORKFLOW_ID, before anything starts', async () => {
    const [workflowId, runId] = [`wfid-a-${randomUUID()}`, `wfid-b-${randomUUID()}`];
    const attempt = startAgentRun(temporal.client, input, { taskQueue, workflowId, runId });
    await expect(attempt).rejects.toBeInstanceOf(AgentRunStartError);
    await expect(attempt).rejects.toMatchObject({ code: 'CONFLICTING_WORKFLOW_ID' });
    await expect(attempt).rejects.toThrow(/give only workflowId/);
    expect(await executionsOf(workflowId)).toBe(0);
    expect(await executionsOf(runId)).toBe(0);
  });
});

test("a tool's context names the run's workflow id as workflowId, and as runId, its deprecated name", async () => {
  const workflowId = `wfid-ctx-${randomUUID()}`;
  const script = [{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: 'Done.', final: true }];
  const handle = await startAgentRun(
    temporal.client,
    { goal: 'Add', model: { provider: 'scripted', script } },
    { taskQueue, workflowId },
  );
  expect((await waitForAgentRun(handle)).status).toBe('completed');
  expect(seen).toContainEqual({ workflowId, runId: workflowId });
});

describe('the MCP tools start_agent_run and get_agent_run', () => {
  const tools = () =>
    agentRunTools(temporal.client, taskQueue, mcpCallerScope('agent-run-workflow-id', SHARED_MCP_CALLER));
  const start = {
    call: (...a: Parameters<AgentRunTool['call']>) =>
      tools()
        .get('start_agent_run')!
        .call(...a),
  };
  const get = {
    call: (...a: Parameters<AgentRunTool['call']>) =>
      tools()
        .get('get_agent_run')!
        .call(...a),
  };
  const args = { goal: 'Say done', model: { provider: 'scripted', script: [{ text: 'Done.', final: true }] } };
  const textOf = (result: Awaited<ReturnType<typeof get.call>>) =>
    result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

  test('start_agent_run answers the workflowId, and the same id under its deprecated name runId', async () => {
    const started = (await start.call(args, `wfid-${randomUUID()}`)).structuredContent;
    expect(started).toEqual({ workflowId: expect.any(String), runId: expect.any(String), started: true });
    expect(started!.runId).toBe(started!.workflowId);
  });

  test('start_agent_run lists an output schema with workflowId, and runId marked deprecated', () => {
    const listing = tools().get('start_agent_run')!.listing;
    const schema = listing.outputSchema as { properties: Record<string, { description?: string }> };
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['workflowId', 'runId', 'started']));
    expect(schema.properties.runId!.description).toMatch(/^Deprecated/);
    expect(listing.inputSchema).not.toHaveProperty('properties.runId');
  });

  test('get_agent_run reads the run by workflowId, and by its deprecated name runId', async () => {
    const { workflowId } = (await start.call(args, `wfid-${randomUUID()}`)).structuredContent as {
      workflowId: string;
    };
    await waitForAgentRun(temporal.client.workflow.getHandle(workflowId));
    const byWorkflowId = await get.call({ workflowId }, undefined);
    expect(byWorkflowId.isError).toBeUndefined();
    expect(byWorkflowId.structuredContent).toMatchObject({ workflowId, runId: workflowId, status: 'completed' });
    const byRunId = await get.call({ runId: workflowId }, undefined);
    expect(byRunId.structuredContent).toMatchObject({ workflowId, status: 'completed' });
  });

  test('get_agent_run with both workflowId and runId is refused with INVALID_ARGUMENTS: give only workflowId', async () => {
    const refused = await get.call({ workflowId: 'agent-run-mcp-x', runId: 'agent-run-mcp-x' }, undefined);
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^INVALID_ARGUMENTS: Both workflowId and runId were given\.[\s\S]*only workflowId/);
  });

  test('get_agent_run with neither workflowId nor runId is refused with INVALID_ARGUMENTS', async () => {
    const refused = await get.call({}, undefined);
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^INVALID_ARGUMENTS: No workflowId was given\./);
  });
});
