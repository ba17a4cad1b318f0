import type { CallToolResult, Tool as McpToolListing } from '@modelcontextprotocol/sdk/types.js';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { z } from 'zod';
import { getAgentRunState, startAgentRun } from '../../client/agent-run-client';
import { parseToolArguments } from '../../guard/parse-tool-arguments';
import type { AgentRunInput } from '../../contract/agent-run-types';
import { isMcpAgentRunOf, mcpAgentRunIdIn } from './mcp-caller';
import { builtInToolListing } from './mcp-built-in-tool-listing';
import { callToolErrorOf, structuredResultOf } from './mcp-tool-call-result';

/** A tool of the MCP server that works on agent runs rather than running a registry tool. */
export interface AgentRunTool {
  listing: McpToolListing;
  call(args: Record<string, unknown>, idempotencyKey: string | undefined): Promise<CallToolResult>;
}

const startInput = z.strictObject({
  goal: z.string().min(1).describe('What the agent should achieve.'),
  model: z
    .looseObject({ provider: z.string().min(1) })
    .describe('Model settings: { provider, ... } naming a provider registered on the worker (e.g. "scripted").'),
  allowedTools: z.array(z.string()).optional().describe('The only tools the agent may see and call.'),
  limits: z
    .strictObject({
      maxSteps: z.number().int().positive().optional(),
      maxTurns: z.number().int().positive().optional(),
    })
    .optional(),
});
const getInput = z.strictObject({ runId: z.string().min(1).describe('The run id start_agent_run returned.') });

/**
 * `start_agent_run` (starts an agent run; with an idempotency key, the run id derives from it, so a repeated start
 * returns the same run, running or closed, with `started: false`, and never starts a second one) and
 * `get_agent_run` (the run's state: status, steps, observations). Run ids carry the caller's `scope`
 * (`agent-run-mcp-<scope>-...`): `get_agent_run` reads only runs its caller started through MCP and answers any
 * other id, existing or not, with the same `NOT_FOUND`.
 */
export function agentRunTools(client: Client, taskQueue: string, scope: string): Map<string, AgentRunTool> {
  const start: AgentRunTool = {
    listing: builtInToolListing(
      'start_agent_run',
      'Starts a durable agent run on Temporal and returns its run id at once. Use get_agent_run to follow it.',
      startInput,
      { readOnly: false, openWorld: true },
    ),
    call: async (args, key) => {
      const parsed = parseToolArguments(startInput, args);
      if (!parsed.ok) return invalid(parsed.error.message, parsed.error.hint);
      const runId = mcpAgentRunIdIn(scope, key);
      // A repeated start (same caller and key, so same id) starts nothing: it answers the existing run, running or closed.
      const handle = await startAgentRun(client, parsed.value as AgentRunInput, { taskQueue, runId });
      if (handle.started) return structuredResultOf({ runId: handle.workflowId, started: true });
      const { status } = await handle.describe();
      return structuredResultOf({ runId: handle.workflowId, started: false, status: status.name.toLowerCase() });
    },
  };
  const get: AgentRunTool = {
    listing: builtInToolListing(
      'get_agent_run',
      "Reads an agent run's state: its status, and each step with tool, arguments, status and observation.",
      getInput,
      { readOnly: true, openWorld: true },
    ),
    call: async (args) => {
      const parsed = parseToolArguments(getInput, args);
      if (!parsed.ok) return invalid(parsed.error.message, parsed.error.hint);
      const notFound = () => callToolErrorOf(`NOT_FOUND: There is no agent run "${parsed.value.runId}".`);
      if (!isMcpAgentRunOf(scope, parsed.value.runId)) return notFound();
      try {
        return structuredResultOf(await getAgentRunState(client, parsed.value.runId));
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return notFound();
        throw error;
      }
    },
  };
  return new Map([
    ['start_agent_run', start],
    ['get_agent_run', get],
  ]);
}

function invalid(message: string, hint: string): CallToolResult {
  return callToolErrorOf(`INVALID_ARGUMENTS: ${message}\nHint: ${hint}`);
}
