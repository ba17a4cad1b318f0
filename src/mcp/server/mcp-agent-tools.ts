import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import type { AgentDefinition } from '../../agents/define-agent';
import { startAgent } from '../../client/agent-client';
import { AgentAnswerError } from '../../client/agent-answer-error';
import { parseToolArguments } from '../../guard/parse-tool-arguments';
import type { AgentRunTool } from './mcp-agent-run-tools';
import { builtInToolListing } from './mcp-built-in-tool-listing';
import { mcpAgentRunIdIn } from './mcp-caller';
import { callToolErrorOf, structuredResultOf } from './mcp-tool-call-result';

const agentInput = z.strictObject({ task: z.string().min(1).describe('What the agent should do, in words.') });
const agentOutput = z.strictObject({
  workflowId: z.string().describe("The agent run's workflow id (get_agent_run reads it)."),
  status: z.string(),
  answer: z.string().optional(),
  output: z.unknown().optional().describe("The agent's typed answer, when it has an output schema."),
});

/**
 * The agents of the tools module (its `agents` export) as tools of the MCP server (docs/agents.md): calling one
 * with `{ task }` runs the agent (its instructions, model, tools, limits, typed answer) as an agent run of the
 * caller (`agent-run-mcp-<scope>-...`, read by `get_agent_run`) and answers with its result once it ends. With an
 * idempotency key the run's id derives from it: a repeated call answers the same run and starts nothing.
 */
export function agentTools(
  client: Client,
  taskQueue: string,
  scope: string,
  agents: readonly AgentDefinition[],
): Map<string, AgentRunTool> {
  const tools = new Map<string, AgentRunTool>();
  for (const agent of agents) {
    tools.set(agent.name, {
      listing: builtInToolListing(
        agent.name,
        agent.description ?? `Runs the ${agent.name} agent durably on Temporal and answers with its result.`,
        agentInput,
        { readOnly: false, openWorld: true },
        agentOutput,
      ),
      call: (args, key) => runAgentTool(client, { taskQueue, scope, agent }, args, key),
    });
  }
  return tools;
}

async function runAgentTool(
  client: Client,
  served: { taskQueue: string; scope: string; agent: AgentDefinition },
  args: Record<string, unknown>,
  key: string | undefined,
): Promise<CallToolResult> {
  const parsed = parseToolArguments(agentInput, args);
  if (!parsed.ok) return callToolErrorOf(`INVALID_ARGUMENTS: ${parsed.error.message}\nHint: ${parsed.error.hint}`);
  const handle = await startAgent(client, served.agent, parsed.value.task, {
    taskQueue: served.taskQueue,
    workflowId: mcpAgentRunIdIn(served.scope, key),
  });
  try {
    const result = await handle.wait();
    const summary = {
      workflowId: handle.workflowId,
      status: result.status,
      ...(result.answer !== undefined ? { answer: result.answer } : {}),
      ...(result.output !== undefined ? { output: result.output } : {}),
    };
    if (result.status === 'completed') return structuredResultOf(summary);
    return callToolErrorOf(`AGENT_RUN_${result.status.toUpperCase()}: ${result.reason ?? ''} (${handle.workflowId})`);
  } catch (error) {
    if (error instanceof AgentAnswerError) return callToolErrorOf(`${error.code}: ${error.message}`);
    throw error;
  }
}
