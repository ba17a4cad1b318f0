import type { Client } from '@temporalio/client';
import { readRun, type RunView } from './read-run';
import { diffRuns, type RunDiff, type RunToDiff } from './run-diff';

/**
 * Reads two agent runs and compares them step by step ({@link diffRuns}): tool, recorded arguments and outcome
 * of each step, the first divergence, and a header per run (status, steps, turns, tokens, cost). A run is read
 * as `durable-tools show` reads it: a closed run's result from its history, a running or cancelled run's state
 * from its worker, or, when no worker answers within 5 s, its tool calls from the history.
 *
 * @throws `WorkflowNotFoundError` (`@temporalio/client`, with the `workflowId` it did not find) when a run
 * does not exist.
 *
 * @example
 * ```ts
 * const diff = await diffAgentRuns(client, 'agent-run-a', 'agent-run-b');
 * console.log(diff.firstDivergence === null ? 'no divergence' : `diverge at step ${diff.firstDivergence}`);
 * ```
 */
export async function diffAgentRuns(client: Client, workflowIdA: string, workflowIdB: string): Promise<RunDiff> {
  const [a, b] = await Promise.all([readRun(client, workflowIdA), readRun(client, workflowIdB)]);
  return diffRuns(runToDiff(workflowIdA, a), runToDiff(workflowIdB, b));
}

/** A run as read for `show`, as {@link diffRuns} takes it. */
export function runToDiff(workflowId: string, view: RunView): RunToDiff {
  const state = view.state;
  if (!state) {
    return {
      workflowId,
      status: view.description.status.name.toLowerCase(),
      steps: view.historySteps ?? [],
      fromHistory: true,
    };
  }
  return {
    workflowId,
    status: state.status,
    steps: state.steps,
    turns: state.turns,
    stepCount: state.stepCount,
    usage: state.usage,
    generation: state.generation,
    ...(state.omittedSteps !== undefined ? { omittedSteps: state.omittedSteps } : {}),
  };
}
