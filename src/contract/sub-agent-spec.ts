/**
 * What an agent tool's activity returns to the workflow: the child run it asks for. Pure data, shared by the
 * worker (`defineAgentTool`) and the workflow (the child call step). See docs/sub-agents.md.
 */
import type { AgentRunLimits, FailurePolicy } from './agent-run-types';
import type { ModelSettings } from './model-types';
import type { AgentOutputSpec } from './agent-output';

/** The child run an agent tool's call asks for, built on the worker from the call's validated arguments. */
export interface SubAgentSpec {
  /** The child's goal (its instructions and the call's arguments, in words). */
  goal: string;
  /** Tools the child's model may call (this worker's tools, by name). */
  allowedTools: string[];
  /** The child's model; the parent's when absent. */
  model?: ModelSettings;
  /** The child's own limits; the parent's remaining budget caps them (docs/sub-agents.md, "Budgets"). */
  limits?: AgentRunLimits;
  failurePolicy?: FailurePolicy;
  parallelToolCalls?: boolean;
  /** The child agent's standing instructions (its system prompt), when it has them. */
  instructions?: string;
  /** The child agent's typed answer: its final answer is checked against this schema. */
  output?: AgentOutputSpec;
}

/**
 * The workflow id of the child a call starts: derived from the call's key (the parent's workflow id, its first
 * execution's run id and the step), so replay and a retried workflow task start the same child, and a parent
 * whose workflow id is used again never meets an earlier parent's children. The tool activity that prepares the
 * child records the child's grant under it (docs/security.md, "Authority of a run").
 */
export function subAgentWorkflowId(callKey: string, tool: string): string {
  return `${callKey}/${tool}`;
}

/** Largest goal an agent tool may build, in characters (the child's input stays far below the payload limits). */
export const SUB_AGENT_GOAL_MAX_CHARS = 32_000;

/** Largest share of the parent's conversation a handoff passes to the child, in characters. */
export const HANDOFF_CONVERSATION_MAX_CHARS = 16_000;

/** What the parent's model sees when a sub-agent completed: the child's answer and what it cost. */
export interface SubAgentOutput {
  /** The child's final answer. */
  answer: string;
  /** The child's typed answer, validated on the worker, when the child agent has an `output` schema. */
  output?: unknown;
  /** The child's workflow id (its history is in the Temporal UI, under the parent's Relationships tab). */
  childWorkflowId: string;
  /** Tool calls the child (and its own sub-agents) made. */
  steps: number;
  usage: { inputTokens: number; outputTokens: number; cost?: number };
}
