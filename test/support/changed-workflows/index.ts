/**
 * A deliberately changed workflow module for the replay tests: its `agentRun` starts a timer where the real
 * one first records the marker of its run-scoped keys patch, then upserts its status and schedules
 * `describeTools`, so every recorded agent run replayed against it is nondeterministic at its first command. Workflow-safe code: imports only `@temporalio/workflow`.
 */
import { sleep } from '@temporalio/workflow';

/** An agent run whose first command is a timer. */
export async function agentRun(): Promise<void> {
  await sleep('1 minute');
}
