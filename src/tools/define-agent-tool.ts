import { z } from 'zod';
import type { Duration } from '@temporalio/common';
import type { ToolApprovalPolicy } from '../contract/approval-policy';
import type { AgentRunLimits, FailurePolicy } from '../contract/agent-run-types';
import type { ModelSettings } from '../contract/model-types';
import type { AgentOutputSpec } from '../contract/agent-output';
import { SUB_AGENT_GOAL_MAX_CHARS, type SubAgentSpec } from '../contract/sub-agent-spec';
import { ToolDefinitionError } from '../contract/tool-definition-error';
import { PAYLOAD_LIMITS } from '../contract/payload-limits';
import { defineTool, type Tool, type ToolContract } from './define-tool';

/** A value of an agent tool's spec, or a function of the call's validated arguments that gives it. */
export type FromArguments<I, T> = T | ((input: I) => T);

/** What {@link defineAgentTool} takes: a tool the model calls, run as another agent (a child workflow). */
export interface AgentToolSpec<I extends z.ZodType = z.ZodType> {
  /** Unique name; also the activity type of the call's preparation. Letters, digits, `_` and `-`, at most 64. */
  name: string;
  /** When the model should hand work to this agent and when not: the model reads this. */
  description: string;
  /** The arguments the parent's model passes; validated on the worker before the child starts. */
  input: I;
  /** The child's goal, built from the validated arguments (at most 32,000 characters). */
  goal: (input: z.output<I>) => string;
  /** Tools the child may call, by name (tools of this worker; an agent tool may name other agent tools). */
  tools: FromArguments<z.output<I>, readonly string[]>;
  /** The child's model (default: the parent's). */
  model?: FromArguments<z.output<I>, ModelSettings>;
  /** The child's own limits; the parent's remaining steps, tokens and cost cap them. */
  limits?: AgentRunLimits;
  /** The child's failure policy (default: none, a failed call is an observation for the child's model). */
  failurePolicy?: FailurePolicy;
  /** Run the child's tool calls of one turn concurrently. */
  parallelToolCalls?: boolean;
  /** Whether calling the agent waits for a human decision (default `'never'`: the child's tools have their own). */
  approval?: ToolApprovalPolicy<z.output<I>>;
  /** How long such a decision may take. */
  approvalTimeout?: Duration;
  /**
   * A handoff (see {@link defineHandoff}): the child gets the parent's conversation so far, and the parent ends
   * with the child's answer instead of taking another turn.
   */
  handoff?: boolean;
  /** The child's standing instructions (its system prompt); `agentTool` sets the agent's. */
  instructions?: string;
  /** The child's typed answer (a JSON Schema); `agentTool` sets the agent's `output`. */
  output?: AgentOutputSpec;
}

const SPEC_OUTPUT = z.object({
  goal: z.string().min(1).max(SUB_AGENT_GOAL_MAX_CHARS),
  allowedTools: z.array(z.string()).max(256),
  model: z.object({ provider: z.string() }).catchall(z.unknown()).optional(),
  limits: z
    .object({
      maxSteps: z.number().optional(),
      maxTurns: z.number().optional(),
      maxInputTokens: z.number().optional(),
      maxOutputTokens: z.number().optional(),
      maxCost: z.number().optional(),
    })
    .optional(),
  failurePolicy: z
    .object({
      criticalTools: z.union([z.array(z.string()).readonly(), z.literal('*')]).optional(),
      maxConsecutiveToolErrors: z.number().optional(),
      compensateOnLimit: z.boolean().optional(),
    })
    .optional(),
  parallelToolCalls: z.boolean().optional(),
  instructions: z.string().max(SUB_AGENT_GOAL_MAX_CHARS).optional(),
  output: z
    .object({ schema: z.record(z.string(), z.unknown()), maxAttempts: z.number().int().min(1).max(10).optional() })
    .optional(),
});

/** The JSON Schema of what the parent's model reads back from a completed sub-agent (`SubAgentOutput`). */
const OBSERVATION_SCHEMA: Record<string, unknown> = {
  type: 'object',
  properties: {
    answer: { type: 'string' },
    output: { description: "The child's typed answer, when it has one." },
    childWorkflowId: { type: 'string' },
    steps: { type: 'integer' },
    usage: { type: 'object' },
  },
  required: ['answer', 'childWorkflowId', 'steps', 'usage'],
};

/**
 * Declares a tool that is another agent: calling it runs a child agent run (the same workflow, as a Temporal
 * child workflow) with its own tools and limits, carved out of the parent's remaining budget. The child's
 * answer is the call's output; a child that does not complete is a `SUB_AGENT_FAILED` observation. The
 * child's keys live under the parent call's key, its approvals show on the parent (`pending`), cancelling the
 * parent cancels it, and a parent that aborts later undoes the child's effects too. See docs/sub-agents.md.
 *
 * On the worker the tool's activity only validates the arguments and builds the child's goal; register it with
 * the child's tools (`createWorker({ tools: [researcher, search, ...] })`).
 *
 * @example
 * ```ts
 * const researcher = defineAgentTool({
 *   name: 'research',
 *   description: 'Hands a research question to the research agent. Use for questions that need several searches.',
 *   input: z.object({ question: z.string() }),
 *   goal: ({ question }) => `Answer with sources: ${question}`,
 *   tools: ['web_search', 'read_page'],
 *   limits: { maxSteps: 10 },
 * });
 * ```
 */
export function defineAgentTool<I extends z.ZodType>(spec: AgentToolSpec<I>): Tool<I, typeof SPEC_OUTPUT> {
  checkAgentSpec(spec);
  const contract = defineTool({
    name: spec.name,
    description: spec.description,
    input: spec.input,
    output: SPEC_OUTPUT,
    effect: 'read-only',
    ...(spec.approval !== undefined ? { approval: spec.approval } : {}),
    ...(spec.approvalTimeout !== undefined ? { approvalTimeout: spec.approvalTimeout } : {}),
    // The child's spec is small by construction; it must come back inline, never as a claim check.
    budget: { maxOutputBytes: PAYLOAD_LIMITS.maxToolOutputBytes, maxOutputTokens: PAYLOAD_LIMITS.maxToolOutputBytes },
  });
  const agentContract: ToolContract<I, typeof SPEC_OUTPUT> = Object.freeze({
    ...contract,
    catalogEntry: Object.freeze({
      ...contract.catalogEntry,
      outputSchema: OBSERVATION_SCHEMA,
      agent: spec.handoff === true ? { handoff: true } : {},
    }),
  });
  return Object.freeze({
    contract: agentContract,
    execute: (input: z.output<I>) => Promise.resolve(childSpec(spec, input)),
    hooks: Object.freeze({}),
  });
}

/**
 * Declares a handoff: an agent tool whose call transfers the conversation to another agent, and the parent
 * run ends with that agent's answer. Same options as {@link defineAgentTool}.
 *
 * @example
 * ```ts
 * const toBilling = defineHandoff({
 *   name: 'transfer_to_billing',
 *   description: 'Transfers the customer to the billing agent. Use for invoices and refunds only.',
 *   input: z.object({ summary: z.string() }),
 *   goal: ({ summary }) => `You are the billing agent. The triage agent says: ${summary}`,
 *   tools: ['lookup_invoice', 'refund'],
 * });
 * ```
 */
export function defineHandoff<I extends z.ZodType>(
  spec: Omit<AgentToolSpec<I>, 'handoff'>,
): Tool<I, typeof SPEC_OUTPUT> {
  return defineAgentTool({ ...spec, handoff: true });
}

function valueFor<I, T>(value: FromArguments<I, T>, input: I): T {
  return typeof value === 'function' ? (value as (input: I) => T)(input) : value;
}

function childSpec<I extends z.ZodType>(spec: AgentToolSpec<I>, input: z.output<I>): SubAgentSpec {
  const model = spec.model === undefined ? undefined : valueFor(spec.model, input);
  return {
    goal: spec.goal(input),
    allowedTools: [...valueFor(spec.tools, input)],
    ...(model !== undefined ? { model } : {}),
    ...(spec.limits !== undefined ? { limits: { ...spec.limits } } : {}),
    ...(spec.failurePolicy !== undefined ? { failurePolicy: spec.failurePolicy } : {}),
    ...(spec.parallelToolCalls !== undefined ? { parallelToolCalls: spec.parallelToolCalls } : {}),
    ...(spec.instructions !== undefined ? { instructions: spec.instructions } : {}),
    ...(spec.output !== undefined ? { output: spec.output } : {}),
  };
}

function checkAgentSpec<I extends z.ZodType>(spec: AgentToolSpec<I>): void {
  if (typeof spec?.goal !== 'function') {
    throw new ToolDefinitionError(
      `Agent tool "${String(spec?.name)}" needs goal: a function of the arguments.`,
      'INVALID_OPTION',
    );
  }
  const tools = spec.tools;
  if (typeof tools !== 'function' && (!Array.isArray(tools) || tools.some((name) => typeof name !== 'string'))) {
    throw new ToolDefinitionError(
      `Agent tool "${spec.name}": tools must be tool names (or a function of the arguments giving them).`,
      'INVALID_OPTION',
    );
  }
  if (Array.isArray(tools) && tools.includes(spec.name)) {
    throw new ToolDefinitionError(`Agent tool "${spec.name}" may not list itself among its tools.`, 'INVALID_OPTION');
  }
}
