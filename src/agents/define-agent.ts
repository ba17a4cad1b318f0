import { z } from 'zod';
import type { AgentOutputSpec } from '../contract/agent-output';
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
  /** The run's limits (steps, turns, tokens, cost). */
  limits?: AgentRunLimits;
  /** When a failed tool call aborts the run (and compensates). */
  failurePolicy?: FailurePolicy;
  /** The run's approval overrides, timeout and what a rejection does. */
  approval?: RunApprovalPolicy;
  /** Run the tool calls of one model turn concurrently. */
  parallelToolCalls?: boolean;
  /**
   * A zod schema of the final answer, an object (docs/agents.md, "Typed answers"): the worker checks the answer
   * like tool arguments (its JSON Schema travels in the run input), a wrong one is an observation the model
   * corrects, and the client validates the result's `output` again with this schema (refinements included).
   */
  output?: O;
  /** Wrong answers the model may correct before the run fails with `INVALID_ANSWER` (default 3). */
  maxAnswerAttempts?: number;
}

/** An agent made by {@link defineAgent}: frozen, and reusable as a run, a conversation, a sub-agent or an MCP tool. */
export interface AgentDefinition<O extends z.ZodType | undefined = z.ZodType | undefined> extends Readonly<
  AgentSpec<O>
> {
  readonly kind: 'durable-tools.agent';
  readonly tools: readonly string[];
  /** What the run input carries of `output`: its JSON Schema (absent without `output`). */
  readonly outputSpec?: AgentOutputSpec;
}

/** The type of an agent's typed answer: `z.output` of its `output` schema, `unknown` without one. */
export type AgentAnswer<A> =
  A extends AgentDefinition<infer O> ? (O extends z.ZodType ? z.output<O> : unknown) : unknown;

const AGENT_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Defines an agent once: its instructions, model, tools, limits, failure and approval policy, and optionally the
 * zod schema of its answer (docs/agents.md). The same object starts a run (`startAgent(client, agent, goal)` of
 * durable-tools/client), serves as a sub-agent or handoff (`agentTool(agent)`) and as a tool of the MCP server (the
 * tools module's `agents` export).
 *
 * @example
 * ```ts
 * export const planner = defineAgent({
 *   name: 'trip_planner',
 *   instructions: 'You plan trips.',
 *   model: { provider: 'openai', model: 'gpt-4.1', temperature: 0.2 },
 *   tools: ['get_weather'],
 *   output: z.object({ city: z.string(), nights: z.number().int() }),
 * });
 * ```
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
  if (!Array.isArray(spec.tools) || spec.tools.some((tool) => typeof tool !== 'string')) {
    throw new ToolDefinitionError(`Agent ${spec.name}: tools must be tool names.`, 'INVALID_OPTION');
  }
  const outputSpec = spec.output ? outputSpecOf(spec.name, spec.output, spec.maxAnswerAttempts) : undefined;
  return Object.freeze({
    ...spec,
    tools: Object.freeze([...spec.tools]),
    kind: 'durable-tools.agent' as const,
    ...(outputSpec ? { outputSpec: Object.freeze(outputSpec) } : {}),
  });
}

/** The output schema as JSON Schema, for the worker; refused unless it describes a JSON object. */
function outputSpecOf(name: string, output: z.ZodType, maxAttempts: number | undefined): AgentOutputSpec {
  let schema: Record<string, unknown>;
  try {
    // Refinements and transforms have no JSON Schema: the worker checks the shape, the client the whole schema.
    schema = closedObjects(z.toJSONSchema(output, { unrepresentable: 'any', io: 'input' })) as Record<string, unknown>;
  } catch (error) {
    throw new ToolDefinitionError(
      `Agent ${name}: output has no JSON Schema (${(error as Error).message}).`,
      'INVALID_OPTION',
    );
  }
  if (schema.type !== 'object') {
    throw new ToolDefinitionError(
      `Agent ${name}: output must be an object schema (z.object(...)); wrap other answers in a field.`,
      'INVALID_OPTION',
    );
  }
  if (maxAttempts !== undefined && (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > 10)) {
    throw new ToolDefinitionError(
      `Agent ${name}: maxAnswerAttempts must be an integer from 1 to 10.`,
      'INVALID_OPTION',
    );
  }
  return { schema, ...(maxAttempts !== undefined ? { maxAttempts } : {}) };
}

/**
 * An object schema without `additionalProperties` gets `false` (as `z.object` means: a field the schema does not
 * name is an invented one, refused like in tool arguments); a loose object keeps what it says.
 */
function closedObjects(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closedObjects);
  if (typeof node !== 'object' || node === null) return node;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) copy[key] = closedObjects(value);
  if (copy.type === 'object' && copy.properties !== undefined && copy.additionalProperties === undefined) {
    copy.additionalProperties = false;
  }
  return copy;
}

/** The run input of one goal given to an agent (its settings, its tools as the run's allowed tools). */
export function agentRunInputOf(agent: AgentDefinition, goal: string): AgentRunInput {
  return {
    goal,
    model: agent.model,
    agentName: agent.name,
    instructions: agent.instructions,
    ...(agent.outputSpec && { output: agent.outputSpec }),
    allowedTools: [...agent.tools],
    ...(agent.limits && { limits: agent.limits }),
    ...(agent.failurePolicy && { failurePolicy: agent.failurePolicy }),
    ...(agent.approval && { approval: agent.approval }),
    ...(agent.parallelToolCalls !== undefined && { parallelToolCalls: agent.parallelToolCalls }),
  };
}
