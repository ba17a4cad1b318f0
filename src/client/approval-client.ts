import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { CallerIdentity } from '../contract/caller-identity';
import { ApplicationFailure } from '@temporalio/common';
import { SEARCH_ATTRIBUTES } from '../contract/search-attributes';
import { getRunStateQuery } from '../contract/agent-run-messages';
import type { AgentRunState } from '../contract/agent-run-types';
import { decideApprovalUpdate } from '../contract/approval-messages';
import { ApprovalError } from './approval-error';
import {
  APPROVAL_REFUSAL_CODES,
  type ApprovalDecisionResult,
  type ApprovalRefusalCode,
} from '../contract/approval-types';

/** One call waiting for a human decision. */
export interface PendingApproval {
  /** The run (workflow id). */
  workflowId: string;
  stepId: number;
  tool: string;
  /** The validated arguments the decision is about. */
  arguments: unknown;
  /** Lowercase hex SHA-256 of their canonical JSON: a decision must name it. */
  digest: string;
  /** Workflow time (ms since epoch) of the request, and of the deadline after which it counts as rejected. */
  requestedAt: number;
  deadline: number;
  /** The run's goal. */
  goal: string;
  /**
   * Set when the waiting run is a sub-agent (docs/sub-agents.md): the parent run and its step that called it.
   * Decide the call with `workflowId` (the child's), as for any run.
   */
  parent?: { workflowId: string; stepId: number };
}

/** How deep {@link getPendingApprovals} follows sub-agents of sub-agents. */
const MAX_SUB_AGENT_DEPTH = 8;

/** What approving or rejecting names. */
export interface StepDecision {
  stepId: number;
  /** The digest of the arguments the decider reviewed (from {@link PendingApproval.digest}). */
  digest: string;
  /** Who decides. */
  approver: string;
  /** Who decides, as an authenticated door established it (recorded in the run's state and the audit trail). */
  approverIdentity?: CallerIdentity;
  reason?: string;
}

/** What approving names: the decision, and optionally the edited arguments the call runs with instead. */
export interface StepApprovalDecision extends StepDecision {
  /**
   * Approve with these arguments instead of the model's (docs/approvals.md, "Approve with edits"): the worker
   * validates them with the tool's schema, they get their own digest, the call runs with them, and the audit
   * record keeps both. Invalid ones refuse the approval (`APPROVAL_INVALID_ARGUMENTS`); the call keeps waiting.
   */
  arguments?: Record<string, unknown>;
}

/**
 * The calls of one run that wait for a decision, read from the run's state (a query: a worker must be up).
 *
 * @example
 * ```ts
 * const [pending] = await getPendingApprovals(client, 'agent-run-1');
 * ```
 */
export async function getPendingApprovals(client: Client, workflowId: string): Promise<PendingApproval[]> {
  return pendingOfRun(client, workflowId, 0);
}

/** The calls of a run that wait for a decision, then those of its running sub-agents (their own ids). */
async function pendingOfRun(client: Client, workflowId: string, depth: number): Promise<PendingApproval[]> {
  const state = await client.workflow.getHandle(workflowId).query(getRunStateQuery);
  const own = ownPending(workflowId, state);
  if (depth >= MAX_SUB_AGENT_DEPTH) return own;
  const children = state.steps.flatMap((step) =>
    step.status === 'running' && step.childWorkflowId ? [step.childWorkflowId] : [],
  );
  // A child that just ended cannot answer the query any more: it waits for nothing.
  const nested = await Promise.all(children.map((id) => pendingOfRun(client, id, depth + 1).catch(() => [])));
  return [...own, ...nested.flat()];
}

function ownPending(workflowId: string, state: AgentRunState): PendingApproval[] {
  return state.steps.flatMap((step) =>
    step.status === 'awaiting_approval' && step.approval
      ? [
          {
            workflowId,
            stepId: step.stepId,
            tool: step.tool,
            arguments: step.approval.arguments,
            digest: step.approval.digest,
            requestedAt: step.approval.requestedAt,
            deadline: step.approval.deadline,
            goal: state.goal,
            ...(state.parent ? { parent: state.parent } : {}),
          },
        ]
      : [],
  );
}

/** Options of {@link listPendingApprovals}. */
export interface ListPendingApprovalsOptions {
  /** Only runs on this task queue. */
  taskQueue?: string;
  /** Only runs waiting on this tool. */
  tool?: string;
  /**
   * Only this run and its sub-agents, however deep (the visibility query's `RootWorkflowId`; a server that does
   * not index it refuses the query).
   */
  rootWorkflowId?: string;
  /** At most this many runs are read (default 100). */
  limit?: number;
  /** Called for a run the visibility query found but whose state could not be read (no worker, just ended). */
  onUnreadable?: (workflowId: string, error: unknown) => void;
}

/**
 * Every call waiting for a decision: the runs come from a visibility query on the `DurableAwaitingApproval`
 * search attribute, their waiting calls (arguments and digest) from each run's state. Visibility lags a
 * little behind: a run that just started waiting may show up a moment later.
 *
 * @example
 * ```ts
 * for (const p of await listPendingApprovals(client)) console.log(p.workflowId, p.stepId, p.tool, p.digest);
 * ```
 */
export async function listPendingApprovals(
  client: Client,
  options: ListPendingApprovalsOptions = {},
): Promise<PendingApproval[]> {
  const name = SEARCH_ATTRIBUTES.awaitingApproval.name;
  const query = [
    options.tool === undefined ? `${name} IS NOT NULL` : `${name} = ${JSON.stringify(options.tool)}`,
    `ExecutionStatus = "Running"`,
    ...(options.taskQueue === undefined ? [] : [`TaskQueue = ${JSON.stringify(options.taskQueue)}`]),
    ...(options.rootWorkflowId === undefined ? [] : [`RootWorkflowId = ${JSON.stringify(options.rootWorkflowId)}`]),
  ].join(' AND ');
  const limit = options.limit ?? 100;
  const pending: PendingApproval[] = [];
  const listed = new Set<string>();
  let seen = 0;
  for await (const execution of client.workflow.list({ query })) {
    if (seen++ >= limit) break;
    try {
      const calls = await getPendingApprovals(client, execution.workflowId);
      for (const call of calls) {
        // A sub-agent is found by the query itself and through its parent: list it once.
        const id = `${call.workflowId}#${call.stepId}`;
        if ((options.tool === undefined || call.tool === options.tool) && !listed.has(id)) {
          listed.add(id);
          pending.push(call);
        }
      }
    } catch (error) {
      options.onUnreadable?.(execution.workflowId, error);
    }
  }
  return pending.sort((a, b) => a.requestedAt - b.requestedAt || a.stepId - b.stepId);
}

/**
 * Approves one waiting call, bound to the digest of the arguments the approver reviewed. The tool then runs
 * once, under the step's idempotency key: with the model's arguments, or with `decision.arguments` when the
 * approver edited them.
 *
 * @throws {@link ApprovalError} when the digest is not the step's, the step is unknown or already decided,
 * or the run is not running. Nothing is approved then.
 *
 * @example
 * ```ts
 * const [p] = await getPendingApprovals(client, workflowId);
 * await approveStep(client, workflowId, { stepId: p.stepId, digest: p.digest, approver: 'alice' });
 * ```
 */
export function approveStep(
  client: Client,
  workflowId: string,
  decision: StepApprovalDecision,
): Promise<ApprovalDecisionResult> {
  return decide(client, workflowId, 'approve', decision);
}

/**
 * Rejects one waiting call. The model gets the rejection as an observation, or the run aborts and compensates,
 * as the run's `approval.onRejection` says.
 *
 * @throws {@link ApprovalError} like {@link approveStep}; also when `reason` is empty.
 */
export function rejectStep(
  client: Client,
  workflowId: string,
  decision: StepDecision & { reason: string },
): Promise<ApprovalDecisionResult> {
  return decide(client, workflowId, 'reject', decision);
}

async function decide(
  client: Client,
  workflowId: string,
  kind: 'approve' | 'reject',
  decision: StepApprovalDecision,
): Promise<ApprovalDecisionResult> {
  try {
    return await client.workflow.getHandle(workflowId).executeUpdate(decideApprovalUpdate, {
      args: [
        {
          stepId: decision.stepId,
          digest: decision.digest,
          decision: kind,
          approver: decision.approver,
          ...(decision.approverIdentity ? { approverIdentity: decision.approverIdentity } : {}),
          ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
          ...(decision.arguments !== undefined ? { arguments: decision.arguments } : {}),
        },
      ],
    });
  } catch (error) {
    throw asApprovalError(error, workflowId);
  }
}

const REFUSALS = new Set<string>(Object.values(APPROVAL_REFUSAL_CODES));

function asApprovalError(error: unknown, workflowId: string): ApprovalError {
  if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
    const type = error.cause.type ?? '';
    return new ApprovalError(
      error.cause.message,
      REFUSALS.has(type) ? (type as ApprovalRefusalCode) : 'APPROVAL_FAILED',
      {
        cause: error,
      },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof WorkflowNotFoundError || /already completed|not found/i.test(message)) {
    return new ApprovalError(`Run ${workflowId} is not running: ${message}`, 'APPROVAL_RUN_NOT_RUNNING', {
      cause: error,
    });
  }
  return new ApprovalError(`The decision could not be delivered to run ${workflowId}: ${message}`, 'APPROVAL_FAILED', {
    cause: error,
  });
}
