import { checkStoreUnavailable } from './store-failure';
import { TOOL_ERROR_CODES, toolFailure, type ToolErrorObservation } from '../contract/activity-protocol';
import type { ApprovalAuditRecord } from '../contract/approval-types';
import type { ToolActivityInput } from '../contract/tool-activity-types';
import type { ToolRetrySettings } from '../contract/tool-catalog-entry';
import type { AuditStore } from '../stores/audit/audit-store';
import type { Tool } from '../tools/define-tool';
import type { ToolRegistry } from '../tools/tool-registry';
import { declaredRequirement } from './approval-requirement';

/** What the tool activity checks a gated call against. */
export interface RecordedApprovalDeps {
  registry: ToolRegistry;
  /** The audit trail the engine's approval gate writes (`createApprovalActivities({ auditStore })`). */
  auditStore: AuditStore;
  /** Whether this worker lets runs waive a tool's approval: only then does a `'waived'` record count. */
  allowRunsToWaive: boolean;
}

/** The call being checked: its tool, input, validated arguments and their digest. */
export interface GatedCall {
  tool: Tool;
  input: ToolActivityInput;
  validated: unknown;
  /** Digest of the validated arguments; undefined when they are not JSON (no record can match them). */
  digest: string | undefined;
  attempt: number;
  retry: ToolRetrySettings;
}

/**
 * The approval check of the tool activity, whoever scheduled the call (an agent run, a user's workflow, a
 * hand-made activity call): a call of a tool that itself requires approval for these validated arguments runs
 * only when the audit store holds, under the call's idempotency key, the record the engine's gate wrote for this
 * tool and argument digest with the decision `'approved'` (or `'waived'`, when this worker allows runs to
 * waive). Tools without a requirement never read the store. A compensation the engine runs (`compensationOf`
 * names the tool this one undoes, under a `/undo` key) is not gated, as in the run's saga.
 *
 * @throws a non-retryable `APPROVAL_REQUIRED` failure that had no effect; a retryable `UNAVAILABLE` one when the
 * audit store cannot be read.
 */
export async function assertRecordedApproval(call: GatedCall, deps: RecordedApprovalDeps): Promise<void> {
  const entry = call.tool.contract.catalogEntry;
  if (entry.approval === 'never' || isEngineCompensation(call, deps.registry)) return;
  if (!(await declaredRequirement(call.tool, call.validated))) return;
  let record: ApprovalAuditRecord | undefined;
  try {
    record = await deps.auditStore.get(call.input.idempotencyKey);
  } catch (error) {
    throw checkStoreUnavailable(call, 'audit store could not be read to check the approval', error);
  }
  const missing = missingApproval(record, call, deps.allowRunsToWaive);
  if (missing === undefined) return;
  throw toolFailure(approvalRequired(entry.name, call.input.idempotencyKey, missing), { mayHaveHadEffect: false });
}

/** An undo call of the run's saga: the tool it undoes names this tool as its undo, under the `/undo` key. */
function isEngineCompensation(call: GatedCall, registry: ToolRegistry): boolean {
  const forward = call.input.compensationOf;
  if (typeof forward !== 'string' || !call.input.idempotencyKey.endsWith('/undo')) return false;
  return registry.get(forward)?.contract.catalogEntry.undo === call.tool.contract.name;
}

/** Why the record does not let the call run, or undefined when it does. */
function missingApproval(
  record: ApprovalAuditRecord | undefined,
  call: GatedCall,
  allowRunsToWaive: boolean,
): string | undefined {
  if (!record) return 'no approval was recorded for this call';
  if (record.tool !== call.tool.contract.name) return `the approval recorded under this key is for "${record.tool}"`;
  // Approved with edits: only the edited arguments' digest lets the call run, never the model's.
  const approvedDigest = record.editedArgumentsDigest ?? record.argumentsDigest;
  if (call.digest === undefined || approvedDigest !== call.digest)
    return `the approval recorded for this call is for other arguments (digest ${approvedDigest}, these ${call.digest ?? 'not JSON'})`;
  if (record.decision === 'approved') return undefined;
  if (record.decision === 'waived')
    return allowRunsToWaive ? undefined : 'its run waived the approval, but this worker does not allow runs to waive';
  if (record.decision === undefined) return 'the call is still waiting for a decision';
  return `the call was ${record.decision === 'timed_out' ? 'not decided in time' : 'rejected'}`;
}

function approvalRequired(tool: string, key: string, why: string): ToolErrorObservation {
  return {
    status: 'error',
    code: TOOL_ERROR_CODES.APPROVAL_REQUIRED,
    message:
      `"${tool}" requires approval for these arguments and ${why} (key ${key}); nothing was run. ` +
      'Call it through the engine (an agent run, callTool / proxyTools or the MCP server): the call waits for a ' +
      'decision (`durable-tools approve <workflowId> <step>`), which is recorded in the audit store this worker reads.',
    hint: 'Do not repeat the call; it needs a human approval. Tell the user it must be approved first.',
    retryable: false,
    attempts: 0,
  };
}
