import type { z } from 'zod';
import type { AgentRunInput, AgentRunLimits, FailurePolicy } from '../contract/agent-run-types';
import type { RunApprovalPolicy } from '../contract/approval-types';
import type { ModelSettings } from '../contract/model-types';
import { ToolDefinitionError } from '../contract/tool-definition-error';

/**
 * What {@link defineAgent} takes: an agent defined once (instructions, model, tools, limits, policies and an
 * optional typed answer) and used as a run, a conversation, a sub-agent or handoff, and a tool of the MCP server.
 */
export interface AgentSpec<O extends z.ZodType | undefined = undefined> {
  /** Unique name (letters, digits, `_` and `-`, at most 64): the agent's name in the UI, as a sub-agent and on MCP. */
  name: string;
  /** What the agent does, for a parent model or an MCP client choosing it. */
  description?: string;
  /** The agent's standing instructions (the system prompt of every turn). */
  instructions: string;
  /**
   * The model and every setting its provider takes (`temperature`, `maxOutputTokens`, `providerOptions`, …),
   * passed through to the AI SDK as given.
   */
  model: ModelSettings;
  /** Tools the agent may call, by name (tools of the worker; agent tools included). */
  tools: readonly string[];
  limits?: AgentRunLimits;
  failurePolicy?: FailurePolicy;
  approval?: RunApprovalPolicy;
  /** Run the tool calls of one model turn concurrently. */
  parallelToolCalls?: boolean;
  /** A zod schema of the final answer: the run's result is validated against it and typed by it. */
  output?: O;
}

/** An agent made by {@link defineAgent}: frozen, and reusable as a run, a conversation, a sub-agent or an MCP tool. */
export interface AgentDefinition<O extends z.ZodType | undefined = z.ZodType | undefined> extends Readonly<
  AgentSpec<O>
> {
  readonly kind: 'durable-tools.agent';
  readonly tools: readonly string[];
}

const AGENT_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Defines an agent once: its instructions, model, tools, limits, failure and approval policy, and optionally the
 * zod schema of its answer. The same object starts a run (`startAgentRun(client, agent, goal)`), a conversation,
 * serves as a sub-agent or handoff and as a tool of the MCP server.
 */
export function defineAgent<O extends z.ZodType | undefined = undefined>(spec: AgentSpec<O>): AgentDefinition<O> {
  if (!AGENT_NAME.test(spec.name)) {
    throw new ToolDefinitionError(
      `An agent's name is letters, digits, _ and - (at most 64); got ${JSON.stringify(spec.name)}.`,
      'INVALID_NAME',
    );
  }
  if (typeof spec.instructions !== 'string' || spec.instructions.trim() === '') {
    throw new ToolDefinitionError(`Agent ${spec.name}: instructions must be a non-empty string.`, 'INVALID_OPTION');
  }
  if (!spec.model || typeof spec.model.provider !== 'string') {
    throw new ToolDefinitionError(`Agent ${spec.name}: model needs a provider.`, 'INVALID_OPTION');
  }
  return Object.freeze({ ...spec, tools: Object.freeze([...spec.tools]), kind: 'durable-tools.agent' as const });
}

/** The run input of one goal given to an agent (its settings, its tools as the run's allowed tools). */
export function agentRunInputOf(agent: AgentDefinition, goal: string): AgentRunInput {
  return {
    goal,
    model: agent.model,
    allowedTools: [...agent.tools],
    ...(agent.limits && { limits: agent.limits }),
    ...(agent.failurePolicy && { failurePolicy: agent.failurePolicy }),
    ...(agent.approval && { approval: agent.approval }),
    ...(agent.parallelToolCalls !== undefined && { parallelToolCalls: agent.parallelToolCalls }),
  };
}
