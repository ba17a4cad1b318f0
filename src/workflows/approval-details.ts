/**
 * What the Temporal UI shows of a run waiting for approval: the workflow's current details (the "Current
 * Details" panel, also in the `__temporal_workflow_metadata` query) name each waiting call — tool, step, digest,
 * deadline — and the commands that decide it; the approval timer carries a summary instead of a bare duration.
 * Neither holds the arguments (they may be sensitive): `durable-tools pending` prints them.
 */
import type { StepRecord } from '../contract/agent-run-types';

/** How the details spell the command line (the installed package's form). */
const CLI = 'npx durable-tools';

/** A call waiting for a decision, as the details show it. */
export interface WaitingCallView {
  step: Pick<StepRecord, 'stepId' | 'tool' | 'approval'>;
  digest: string;
}

/** The current details of a run while calls wait for approval (markdown); empty when none waits. */
export function waitingDetails(workflowId: string, waiting: readonly WaitingCallView[]): string {
  if (waiting.length === 0) return '';
  const calls = [...waiting].sort((a, b) => a.step.stepId - b.step.stepId);
  const lines = [
    `**Waiting for approval:** ${calls.map((c) => `step ${c.step.stepId} (\`${c.step.tool}\`)`).join(', ')}`,
  ];
  for (const { step, digest } of calls) {
    const deadline = step.approval?.deadline;
    lines.push(
      [
        `**Step ${step.stepId}: \`${step.tool}\`** — arguments digest \`${digest}\`` +
          (deadline !== undefined ? `, rejected if undecided by ${new Date(deadline).toISOString()}` : ''),
        `Approve: \`${CLI} approve ${workflowId} ${step.stepId} --digest ${digest}\``,
        `Reject: \`${CLI} reject ${workflowId} ${step.stepId} --digest ${digest} --reason "<why>"\``,
      ].join('\n\n'),
    );
  }
  lines.push(`The arguments: \`${CLI} pending\` or \`${CLI} approve ${workflowId}\` (it prints them, then asks).`);
  return lines.join('\n\n').slice(0, 10_000);
}

/** The summary of the timer that rejects a call nobody decided (the UI shows it instead of `1 (1d)`). */
export function approvalTimerSummary(step: Pick<StepRecord, 'stepId' | 'tool'>, digest: string): string {
  return `Approval deadline of step ${step.stepId} (${step.tool}), digest ${digest.slice(0, 12)}: undecided means rejected`.slice(
    0,
    200,
  );
}
