/**
 * Approvals on MCP 2026-07-28: a call waiting for a human decision is answered with an `InputRequiredResult`
 * (multi round-trip request) whose input request is a form elicitation (approve or reject, and why), and whose
 * request state names the waiting call and the digests it was asked about. The client re-issues the same
 * `tools/call` with the answer; the server decides the step under the caller's own authority (the same rules as
 * `decide_approval`) and waits for the result.
 *
 * The request state is signed (HMAC-SHA256, the SDK's `createRequestStateCodec`), expires, and is bound to the
 * caller's scope: a state altered, expired or replayed by another caller is refused before the handler runs
 * (JSON-RPC `-32602`, `data.reason: "invalid_request_state"`). A genuine state re-issued with other arguments is
 * refused too (`APPROVAL_ARGUMENTS_CHANGED`): the approval answers the arguments it showed, never others.
 */
import { randomBytes } from 'node:crypto';
import { createRequestStateCodec, inputRequired, type RequestStateCodec } from '@modelcontextprotocol/server';
import type { InputRequest, InputRequiredResult, InputRequests, ServerContext } from '@modelcontextprotocol/server';
import type { PendingApproval } from '../../client/approval-client';
import type { ApprovalRefusalCode } from '../../contract/approval-types';
import type { McpDecisionRefusal } from './mcp-approver-rules';

/** What the request state of an approval round carries (signed, readable by the client: no secrets). */
export interface McpApprovalState {
  /** The durable call (task id) whose step waits. */
  workflowId: string;
  /** The waiting step: its own workflow (a sub-agent's, or the call's) and step number. */
  waitingWorkflowId: string;
  stepId: number;
  /** The tool the caller called, and the digest of the arguments it called it with. */
  tool: string;
  argumentsDigest: string;
  /** The digest of the waiting step's arguments: the decision is bound to it. */
  digest: string;
}

/** How long an approval's request state stays valid (the human may take a while; the call waits longer). */
export const MCP_APPROVAL_STATE_TTL_SECONDS = 24 * 60 * 60;

/**
 * The codec of approval request states. `key` (at least 32 bytes) must be the same on every server process that
 * may receive the re-issued call; without one, a random key of this process (a re-issue must reach this process).
 * `bind` names the caller's scope: a state minted for one caller is refused for any other.
 */
export function approvalStateCodec(
  key: string | Uint8Array | undefined,
  bind: () => string,
): RequestStateCodec<McpApprovalState> {
  return createRequestStateCodec<McpApprovalState>({
    key: key ?? randomBytes(32),
    ttlSeconds: MCP_APPROVAL_STATE_TTL_SECONDS,
    bind: () => bind(),
  });
}

/** The `inputRequests` key of a waiting step: unique over the task's life (a new decision is a new step or digest). */
export function approvalInputKey(waiting: Pick<PendingApproval, 'workflowId' | 'stepId' | 'digest'>): string {
  return `approval/${waiting.workflowId}/${waiting.stepId}/${waiting.digest.slice(0, 16)}`;
}

/** The form the client shows its user: the exact arguments, and approve or reject. */
export function approvalElicitation(waiting: PendingApproval): InputRequest {
  return inputRequired.elicit({
    mode: 'form',
    message:
      `"${waiting.tool}" needs your approval before it runs (nothing has run yet). Arguments: ` +
      `${JSON.stringify(waiting.arguments)} (digest ${waiting.digest}). It waits until ` +
      `${new Date(waiting.deadline).toISOString()}, then counts as rejected.`,
    requestedSchema: {
      type: 'object',
      properties: {
        decision: { type: 'string', title: 'Decision', enum: ['approve', 'reject'] },
        reason: { type: 'string', title: 'Reason', description: 'Why (required to reject: the model reads it).' },
      },
      required: ['decision'],
    },
  });
}

/** The outstanding input requests of the waiting steps, keyed by {@link approvalInputKey}. */
export function approvalInputRequests(waiting: readonly PendingApproval[]): InputRequests {
  return Object.fromEntries(waiting.map((step) => [approvalInputKey(step), approvalElicitation(step)]));
}

/** The `InputRequiredResult` of a call whose step waits: the form, and the signed state naming the call. */
export async function approvalInputRequired(
  codec: RequestStateCodec<McpApprovalState>,
  state: McpApprovalState,
  waiting: PendingApproval,
  ctx: ServerContext,
): Promise<InputRequiredResult> {
  return inputRequired({
    inputRequests: { [approvalInputKey(waiting)]: approvalElicitation(waiting) },
    requestState: await codec.mint(state, ctx),
  });
}

/** A decision read from an elicitation answer. */
export type McpApprovalAnswer = { decision: 'approve'; reason?: string } | { decision: 'reject'; reason: string };

/**
 * The decision an elicitation answer carries, or undefined when the response is missing or not an elicitation
 * result. Declining or cancelling the form rejects the call (the person said no).
 */
export function approvalAnswerOf(response: unknown): McpApprovalAnswer | undefined {
  if (typeof response !== 'object' || response === null) return undefined;
  const { action, content } = response as { action?: unknown; content?: Record<string, unknown> };
  if (action === 'decline' || action === 'cancel') {
    return {
      decision: 'reject',
      reason: `The caller ${action === 'decline' ? 'declined' : 'cancelled'} the approval.`,
    };
  }
  if (action !== 'accept' || typeof content !== 'object' || content === null) return undefined;
  const reason = typeof content['reason'] === 'string' && content['reason'].length > 0 ? content['reason'] : undefined;
  if (content['decision'] === 'approve') return { decision: 'approve', ...(reason ? { reason } : {}) };
  if (content['decision'] === 'reject') return { decision: 'reject', reason: reason ?? 'Rejected by the caller.' };
  return undefined;
}

/**
 * Why a re-issued call that answers an approval decides nothing: its arguments are not those the approval was asked
 * for, it carries no answer, or `decide_approval`'s rules refuse the caller (their codes, e.g.
 * `APPROVAL_SELF_APPROVAL`, `APPROVAL_DIGEST_MISMATCH`).
 */
export type McpApprovalAnswerRefusalCode = 'APPROVAL_ARGUMENTS_CHANGED' | 'INVALID_ARGUMENTS' | McpDecisionRefusalCode;

/** A code of `decide_approval`'s refusals (its rules, or the run's own validator). */
export type McpDecisionRefusalCode = McpDecisionRefusal['code'] | ApprovalRefusalCode | 'REQUEST_REJECTED';
