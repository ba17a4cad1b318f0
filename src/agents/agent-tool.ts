import { z } from 'zod';
import type { Duration } from '@temporalio/common';
import type { ToolApprovalPolicy } from '../contract/approval-policy';
import { defineAgentTool } from '../tools/define-agent-tool';
import type { AgentDefinition } from './define-agent';

/** The arguments a parent's model passes an agent by default: the task, in words. */
const TASK_INPUT = z.object({ task: z.string().min(1).describe('What the agent should do, in words.') });

/** What {@link agentTool} takes besides the agent; every field has a default from the agent. */
export interface AgentToolOptions<I extends z.ZodType = typeof TASK_INPUT> {
  /** The tool's name (default: the agent's name). */
  name?: string;
  /** When the parent's model should call the agent (default: the agent's description). */
  description?: string;
  /** The arguments the parent's model passes (default `{ task: string }`). */
  input?: I;
  /** The child's goal from the arguments (default: the `task` argument). */
  goal?: (input: z.output<I>) => string;
  /** Whether calling the agent waits for a human decision (default `'never'`). */
  approval?: ToolApprovalPolicy<z.output<I>>;
  /** How long such a decision may take. */
  approvalTimeout?: Duration;
  /** A handoff: the child gets the conversation, and the parent ends with its answer (docs/sub-agents.md). */
  handoff?: boolean;
}

/**
 * The agent as a tool another agent calls (docs/sub-agents.md): a sub-agent, or with `handoff: true` a handoff,
 * run with the agent's instructions, model, tools, limits, failure policy and typed answer. Register the tool on
 * the worker with the agent's tools; the parent's model passes `{ task }` unless `input` says otherwise.
 *
 * @example
 * ```ts
 * export const tools = [search, agentTool(researcher), agentTool(billing, { handoff: true })];
 * ```
 */
export function agentTool<I extends z.ZodType = typeof TASK_INPUT>(
  agent: AgentDefinition,
  options: AgentToolOptions<I> = {},
): ReturnType<typeof defineAgentTool<I>> {
  const input = (options.input ?? TASK_INPUT) as I;
  const goal = options.goal ?? ((args: z.output<I>) => String((args as { task?: unknown }).task ?? ''));
  return defineAgentTool({
    name: options.name ?? agent.name,
    description: options.description ?? agent.description ?? `Hands a task to the ${agent.name} agent.`,
    input,
    goal,
    tools: [...agent.tools],
    model: agent.model,
    instructions: agent.instructions,
    ...(agent.outputSpec ? { output: agent.outputSpec } : {}),
    ...(agent.limits ? { limits: agent.limits } : {}),
    ...(agent.failurePolicy ? { failurePolicy: agent.failurePolicy } : {}),
    ...(agent.parallelToolCalls !== undefined ? { parallelToolCalls: agent.parallelToolCalls } : {}),
    ...(options.approval !== undefined ? { approval: options.approval } : {}),
    ...(options.approvalTimeout !== undefined ? { approvalTimeout: options.approvalTimeout } : {}),
    ...(options.handoff ? { handoff: true } : {}),
  });
}
