import { workflowInfo } from '@temporalio/workflow';
import { patchedBefore } from './engine-patches';

/**
 * The `patched()` id under which a run's keys carry its first execution's run id. Runs started before it keep
 * keys of the workflow id only (`${workflowId}/${stepId}`), so their histories replay unchanged.
 */
export const RUN_SCOPED_KEYS_PATCH = 'durable-tools/run-scoped-keys';

/**
 * Who owns a run's keys and stored data (docs/run-ownership.md). A workflow id may start again (an id
 * reused after a failed run, `ALLOW_DUPLICATE_FAILED_ONLY`); the first execution's run id may not: it is
 * Temporal's own, the same across continue-as-new and a reset, new for every new start.
 */
export interface RunScope {
  /** What every key of the run starts with: `${workflowId}/${firstExecutionRunId}` (older runs: the workflow id). */
  keyPrefix: string;
  /**
   * The run's owner, sent to every tool activity (`ToolActivityInput.runKey`): `${workflowId}/${firstExecutionRunId}`.
   * Undefined for runs started before run-scoped keys: their stored data belongs to the workflow id.
   */
  runKey?: string;
}

/**
 * The scope of this run. A new run takes run-scoped keys (recorded with `patched()`, or implied by the engine's
 * one patch, `current`: see engine-patches.ts); a generation after continue-as-new keeps what its first
 * generation took (`runScopedKeys` of the carry-over), so a run never mixes owners of its claim checks.
 */
export function runScope(carried?: { runScopedKeys?: boolean }, current = false): RunScope {
  const { workflowId, firstExecutionRunId } = workflowInfo();
  const scoped = carried ? carried.runScopedKeys === true : patchedBefore(current, RUN_SCOPED_KEYS_PATCH);
  if (!scoped) return { keyPrefix: workflowId };
  const runKey = `${workflowId}/${firstExecutionRunId}`;
  return { keyPrefix: runKey, runKey };
}

/**
 * The scope of a sub-agent run (docs/sub-agents.md): its keys live under the parent call's key
 * (`${callKey}/agent/${stepId}`), so a child never shares effects with another parent's child, even under a
 * reused workflow id; its stored data belongs to the child itself (`${workflowId}/${firstExecutionRunId}`).
 */
export function subAgentScope(callKey: string): RunScope {
  const { workflowId, firstExecutionRunId } = workflowInfo();
  return { keyPrefix: `${callKey}/agent`, runKey: `${workflowId}/${firstExecutionRunId}` };
}

/** The idempotency key of a step: `${workflowId}/${firstExecutionRunId}/${stepId}`. */
export function stepKey(scope: RunScope, stepId: number): string {
  return `${scope.keyPrefix}/${stepId}`;
}

/** The key of the compensation of the call made under `key`. */
export function compensationKey(key: string): string {
  return `${key}/undo`;
}
