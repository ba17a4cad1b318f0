import type { Client } from '@temporalio/client';
import { z } from 'zod';
import { agentRunInputOf, type AgentAnswer, type AgentDefinition } from '../agents/define-agent';
import type { AgentRunInput, AgentRunResult } from '../contract/agent-run-types';
import { AgentAnswerError } from './agent-answer-error';
import {
  startAgentRun,
  waitForAgentRun,
  type AgentRunHandle,
  type StartAgentRunOptions,
} from './agent-run-client';

/** Run input fields a start of an agent may set besides the agent's own (`startAgent(..., { input })`). */
export type AgentRunExtras = Partial<
  Omit<AgentRunInput, 'goal' | 'instructions' | 'output' | 'subAgent' | 'carriedOver' | 'fork' | 'dryRun'>
>;

/** Options of {@link startAgent}: those of `startAgentRun`, and run input fields over the agent's. */
export interface StartAgentOptions extends StartAgentRunOptions {
  /** Run settings over the agent's (`fastPath`, `costTable`, `limits`, ...). */
  input?: AgentRunExtras;
}

/** The handle of an agent's run: an agent run's handle, and `wait()` for its typed result. */
export type AgentHandle<O = unknown> = AgentRunHandle & {
  /** The agent's name. */
  readonly agent: string;
  /**
   * Waits for the run to end (as `waitForAgentRun`) and returns its result, its `output` typed and validated
   * again with the agent's schema when it completed.
   * @throws {@link AgentAnswerError} `INVALID_ANSWER` when the client's schema refuses a completed run's output.
   */
  wait(): Promise<AgentRunResult<O>>;
};

/**
 * Starts a run of an agent defined with `defineAgent`: its instructions, model, tools, limits and policies, and
 * its typed answer (docs/agents.md). Returns the run's handle; `handle.wait()` gives the result, typed
 * (`AgentRunResult<z.infer<typeof output>>`) and validated again at the client.
 *
 * @example
 * ```ts
 * const handle = await startAgent(client, planner, 'Plan a weekend in Berlin');
 * const { status, output } = await handle.wait(); // output: { city: string; nights: number }
 * ```
 */
export async function startAgent<A extends AgentDefinition>(
  client: Client,
  agent: A,
  goal: string,
  options: StartAgentOptions = {},
): Promise<AgentHandle<AgentAnswer<A>>> {
  const { input: extras, ...startOptions } = options;
  const handle = await startAgentRun(client, { ...agentRunInputOf(agent, goal), ...extras }, startOptions);
  return {
    ...handle,
    agent: agent.name,
    wait: async () => typedAgentResult(agent, await waitForAgentRun(handle)),
  };
}

/**
 * The result of an agent's run with its `output` validated by the agent's own schema (refinements and transforms
 * included) and typed by it. A run that did not complete is returned as it is.
 *
 * @throws {@link AgentAnswerError} `INVALID_ANSWER` when a completed run's output does not match.
 */
export function typedAgentResult<A extends AgentDefinition>(
  agent: A,
  result: AgentRunResult,
): AgentRunResult<AgentAnswer<A>> {
  const schema = agent.output;
  if (!schema || result.status !== 'completed') return result as AgentRunResult<AgentAnswer<A>>;
  const parsed = schema.safeParse(result.output);
  if (!parsed.success) {
    throw new AgentAnswerError(
      `The run ${result.workflowId} of agent ${agent.name} completed with an output its schema refuses: ${z.prettifyError(parsed.error)}`,
      'INVALID_ANSWER',
      result,
    );
  }
  return { ...result, output: parsed.data as AgentAnswer<A> };
}
