import { ApplicationFailure, patched, proxyActivities } from '@temporalio/workflow';
import type { ApprovalActivities } from '../activities/approval-activities';
import { APPROVAL_REFUSAL_CODES, type ApprovalDecisionInput } from '../contract/approval-types';
import { jsonByteLength, PAYLOAD_LIMITS } from '../contract/payload-limits';
import { APPROVE_WITH_EDITS_PATCH } from './engine-patches';

/*
 * Approve with edits (docs/approvals.md): a human approves a gated call with changed arguments. The update's
 * validator checks their shape; the update's handler has the worker validate them with the tool's schema (an
 * activity, recorded) before the decision is taken, so invalid edits refuse the decision and the call keeps waiting.
 */

const { reviewEditedArguments } = proxyActivities<ApprovalActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 5, initialInterval: '1 second', maximumInterval: '10 seconds' },
});

/** Edited arguments the worker validated: what the call runs with, and their digest. */
export interface ApprovedEdit {
  digest: string;
  arguments: unknown;
}

/** The validator's check of a decision's edited arguments: approve only, a JSON object within the size limit. */
export function checkEditShape(input: ApprovalDecisionInput): void {
  if (input.arguments === undefined) return;
  const invalid = (message: string) =>
    ApplicationFailure.create({ type: APPROVAL_REFUSAL_CODES.INVALID_DECISION, message, nonRetryable: true });
  if (input.decision !== 'approve') throw invalid('Edited arguments come with an approval only.');
  const args: unknown = input.arguments;
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw invalid('Edited arguments must be a JSON object of the tool’s parameters.');
  }
  if (jsonByteLength(args) > PAYLOAD_LIMITS.maxToolArgumentBytes) {
    throw invalid(`Edited arguments may be at most ${PAYLOAD_LIMITS.maxToolArgumentBytes} bytes of JSON.`);
  }
}

/**
 * Whether the decision edits the arguments and this history handles edits: a history recorded before approve with
 * edits took such a decision as a plain approval (its arguments ignored), and replays so.
 */
export function editsArguments(input: ApprovalDecisionInput): boolean {
  return input.arguments !== undefined && input.decision === 'approve' && patched(APPROVE_WITH_EDITS_PATCH);
}

/**
 * Has the worker validate the edited arguments with `tool`'s schema.
 * @throws an `APPROVAL_INVALID_ARGUMENTS` failure (the update's) saying what is wrong, when they do not validate.
 */
export async function reviewEdit(tool: string, edited: unknown): Promise<ApprovedEdit> {
  const review = await reviewEditedArguments({ tool, arguments: edited });
  if (review.ok) return { digest: review.digest, arguments: review.arguments };
  const { message, hint } = review.observation;
  throw ApplicationFailure.create({
    type: APPROVAL_REFUSAL_CODES.INVALID_ARGUMENTS,
    message: `The edited arguments of "${tool}" were refused: ${message} ${hint}`,
    nonRetryable: true,
    details: [review.observation],
  });
}
