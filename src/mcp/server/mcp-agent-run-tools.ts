import type { CallToolResult, Tool as McpToolListing } from '@modelcontextprotocol/sdk/types.js';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { z } from 'zod';
import { getAgentRunState, startAgentRun } from '../../client/agent-run-client';
import { parseToolArguments } from '../../guard/parse-tool-arguments';
import type { AgentRunInput } from '../../contract/agent-run-types';
import { isMcpAgentRunOf, mcpAgentRunIdIn } from './mcp-caller';
import { builtInToolListing } from './mcp-built-in-tool-listing';
import { callToolErrorOf, structuredResultOf } from './mcp-tool-call-result';
import type { McpStarting } from './mcp-run-authority';

/** A tool of the MCP server that works on agent runs rather than running a registry tool. */
export interface AgentRunTool {
  listing: McpToolListing;
  /** `scopes`: those of the request's OAuth access token, when the server is an OAuth resource server. */
  call(
    args: Record<string, unknown>,
    idempotencyKey: string | undefined,
    scopes?: ReadonlySet<string>,
  ): Promise<CallToolResult>;
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
const startOutput = z.strictObject({
  workflowId: z.string().describe("The run's workflow id: pass it to get_agent_run."),
  runId: z.string().describe('Deprecated: the workflow id again, under its old name. Use workflowId.'),
  started: z.boolean().describe('False when a run with this id already existed: nothing was started.'),
  status: z.string().optional().describe("The existing run's workflow status, when started is false."),
});
const getInput = z.strictObject({
  workflowId: z.string().min(1).optional().describe('The workflowId start_agent_run returned.'),
  runId: z
    .string()
    .min(1)
    .optional()
    .describe('Deprecated: the workflow id under its old name. Give workflowId instead (not both).'),
});

/**
 * `start_agent_run` (starts an agent run; with an idempotency key, the workflow id derives from it, so a repeated
 * start returns the same run, running or closed, with `started: false`, and never starts a second one; it answers
 * `{ workflowId, runId, started, status? }`, `runId` being the deprecated old name of the workflow id) and
 * `get_agent_run` (`{ workflowId }`, or the deprecated `{ runId }`, exactly one: the run's state: status, steps,
 * observations). Workflow ids carry the caller's `scope` (`agent-run-mcp-<scope>-...`): `get_agent_run` reads only
 * runs its caller started through MCP and answers any other id, existing or not, with the same `NOT_FOUND`.
 */
export function agentRunTools(
  client: Client,
  taskQueue: string,
  scope: string,
  starting?: McpStarting,
): Map<string, AgentRunTool> {
  const start: AgentRunTool = {
    listing: builtInToolListing(
      'start_agent_run',
      'Starts a durable agent run on Temporal and returns its workflowId at once (also as runId, its deprecated ' +
        'old name). Use get_agent_run with the workflowId to follow it.',
      startInput,
      { readOnly: false, openWorld: true },
      startOutput,
    ),
    call: async (args, key, scopes) => {
      const parsed = parseToolArguments(startInput, args);
      if (!parsed.ok) return invalid(parsed.error.message, parsed.error.hint);
      const workflowId = mcpAgentRunIdIn(scope, key);
      const input = parsed.value as AgentRunInput;
      // Who starts it and, with the server's authority, what it may call: asked for, and allowed to its caller.
      const authority = starting?.(scopes, input.allowedTools) ?? {};
      // A repeated start (same caller and key, so same id) starts nothing: it answers the existing run, running or closed.
      const handle = await startAgentRun(client, input, { taskQueue, workflowId, ...authority });
      // `runId`: the workflow id under its old name, for the clients that read it.
      const ids = { workflowId: handle.workflowId, runId: handle.workflowId };
      if (handle.started) return structuredResultOf({ ...ids, started: true });
      const { status } = await handle.describe();
      return structuredResultOf({ ...ids, started: false, status: status.name.toLowerCase() });
    },
  };
  const get: AgentRunTool = {
    listing: builtInToolListing(
      'get_agent_run',
      "Reads an agent run's state: its status, and each step with tool, arguments, status and observation. " +
        'Give the workflowId start_agent_run returned (runId, its deprecated old name, is still read).',
      getInput,
      { readOnly: true, openWorld: true },
    ),
    call: async (args) => {
      const parsed = parseToolArguments(getInput, args);
      if (!parsed.ok) return invalid(parsed.error.message, parsed.error.hint);
      const { workflowId: given, runId: old } = parsed.value;
      if (given !== undefined && old !== undefined) {
        return invalid(
          'Both workflowId and runId were given.',
          'runId is the deprecated old name of workflowId: give only workflowId.',
        );
      }
      const workflowId = given ?? old;
      if (workflowId === undefined) {
        return invalid(
          'No workflowId was given.',
          'Give the workflowId start_agent_run returned: { "workflowId": "..." }.',
        );
      }
      const notFound = () => callToolErrorOf(`NOT_FOUND: There is no agent run "${workflowId}".`);
      if (!isMcpAgentRunOf(scope, workflowId)) return notFound();
      try {
        return structuredResultOf(await getAgentRunState(client, workflowId));
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
