import type { AgentRunState, StepRecord } from '../contract/agent-run-types';

/** A call of a sub-agent (at any depth) that waits for a human decision. */
export interface SubAgentApprovalWait {
  /** The parent run's step that called the agent tool. */
  parentStep: number;
  /** The sub-agent's workflow id: the run to approve in. */
  workflowId: string;
  stepId: number;
  tool: string;
}

/** How deep the watch looks into sub-agents of sub-agents. */
const MAX_DEPTH = 4;

/**
 * The calls of a run's running sub-agents that wait for approval, read from each child's state (`readState`; a
 * child that does not answer is left out). A parent's agent-tool step only says `running` while its child waits.
 */
export async function subAgentApprovalWaits(
  state: AgentRunState,
  readState: (workflowId: string) => Promise<AgentRunState | undefined>,
): Promise<SubAgentApprovalWait[]> {
  const waits: SubAgentApprovalWait[] = [];
  const visit = async (steps: readonly StepRecord[], parentStep: number | undefined, depth: number) => {
    for (const step of steps) {
      if (step.status !== 'running' || !step.childWorkflowId || depth > MAX_DEPTH) continue;
      const child = await readState(step.childWorkflowId);
      if (!child) continue;
      const top = parentStep ?? step.stepId;
      for (const waiting of child.steps.filter((s) => s.status === 'awaiting_approval')) {
        waits.push({ parentStep: top, workflowId: child.workflowId, stepId: waiting.stepId, tool: waiting.tool });
      }
      await visit(child.steps, top, depth + 1);
    }
  };
  await visit(state.steps, undefined, 1);
  return waits;
}

/**
 * The line that says a sub-agent waits and how to decide: with `--approver` when `$USER` is unset (as in many
 * containers), since `approve` then needs it.
 */
export function subAgentApprovalLine(
  wait: SubAgentApprovalWait,
  self: string,
  env: Readonly<Record<string, string | undefined>>,
): string {
  const approver = env.USER?.trim() ? '' : ' --approver <your name>';
  return (
    `  step ${wait.parentStep}  ⏸ sub-agent ${wait.workflowId} waits for approval of its step ${wait.stepId} ` +
    `(${wait.tool}): ${self} approve ${wait.workflowId} ${wait.stepId}${approver}`
  );
}
