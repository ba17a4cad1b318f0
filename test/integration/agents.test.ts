import { agentTool } from '../../src/agents/agent-tool';
import { startAgent } from '../../src/client/agent-client';
import { FINAL_ANSWER_STEP_TOOL } from '../../src/contract/agent-output';
import type { SubAgentOutput } from '../../src/contract/sub-agent-spec';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { callTurn, scriptedRun } from '../support/agent-runs';
import { useMcpTestListener } from '../support/mcp-test-listener';
import { plannerAgent } from '../support/planner-agent';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { defineAgent } from '../../src/agents/define-agent';
import { z } from 'zod';

/**
 * Agents defined once (issue 45, parts 1 and 2) on the real dev server: `defineAgent`'s typed answer is checked on
 * the worker (a wrong shape is an observation the model corrects), and the same definition runs on its own, as a
 * sub-agent and as a tool of the MCP server.
 */

const taskQueue = uniqueTaskQueue('agents');
const temporal = useTestTemporal({
  worker: (connected) => createTestWorker(connected, { tools: [agentTool(plannerAgent)], taskQueue }),
});
const mcp = useMcpTestListener(temporal, {
  taskQueue,
  catalog: () => [agentTool(plannerAgent).contract.catalogEntry],
  tokens: [{ name: 'default', token: 'agents-token' }],
  agents: [plannerAgent],
});

test('an agent whose model first answers a wrong shape, then a right one, completes with the typed answer and records the wrong one', async () => {
  const handle = await startAgent(temporal.client, plannerAgent, 'Plan a weekend in Berlin', { taskQueue });
  const result = await handle.wait();

  expect(result.status).toBe('completed');
  const plan: { city: string; nights: number } | undefined = result.output;
  expect(plan).toEqual({ city: 'Berlin', nights: 2 });
  expect(result.turns).toBe(2);
  const [refused] = result.steps;
  expect(refused).toMatchObject({
    tool: FINAL_ANSWER_STEP_TOOL,
    finalAnswer: true,
    status: 'failed',
    arguments: 'Berlin, for two nights.',
    observation: { status: 'error', code: 'INVALID_ANSWER' },
  });
});

test('an agent that keeps answering the wrong shape fails with INVALID_ANSWER, never completes', async () => {
  const stubborn = defineAgent({
    name: 'stubborn',
    instructions: 'Answer with a city.',
    model: { provider: 'scripted', script: [{ text: '{"town":"Berlin"}', final: true }], repeat: 5 },
    tools: [],
    output: z.object({ city: z.string() }),
    maxAnswerAttempts: 2,
  });
  const result = await (await startAgent(temporal.client, stubborn, 'Name a city', { taskQueue })).wait();

  expect(result).toMatchObject({ status: 'failed', failureCode: 'INVALID_ANSWER' });
  expect(result.output).toBeUndefined();
  expect(result.steps.filter((step) => step.finalAnswer)).toHaveLength(2);
});

test('one defineAgent object runs on its own, as a sub-agent and as a tool of the MCP server', async () => {
  const own = await (await startAgent(temporal.client, plannerAgent, 'Plan Berlin', { taskQueue })).wait();
  expect(own.output).toEqual({ city: 'Berlin', nights: 2 });

  const parent = await startAgentRun(
    temporal.client,
    scriptedRun('Plan my trip', [callTurn(plannerAgent.name, { task: 'Plan Berlin' }), { text: 'Planned.', final: true }], {
      allowedTools: [plannerAgent.name],
    }),
    { taskQueue },
  );
  const parentResult = await waitForAgentRun(parent);
  expect(parentResult.status).toBe('completed');
  const sub = parentResult.steps[0]?.observation;
  expect(sub?.status).toBe('ok');
  expect((sub as { output: SubAgentOutput }).output.output).toEqual({ city: 'Berlin', nights: 2 });

  const client = await mcp.connect('agents-token');
  const { tools } = await client.listTools();
  expect(tools.map((tool) => tool.name)).toContain(plannerAgent.name);
  const answer = await client.callTool({ name: plannerAgent.name, arguments: { task: 'Plan Berlin' } });
  expect(answer.isError).toBeFalsy();
  expect(answer.structuredContent).toMatchObject({ status: 'completed', output: { city: 'Berlin', nights: 2 } });
});
