import { defineUpdate } from '@temporalio/workflow';
import type { ApprovalDecisionInput, ApprovalDecisionResult } from './approval-types';

/**
 * Update: approve or reject one call waiting for approval. Bound to the step and to the digest of the exact
 * validated arguments; the validator refuses a wrong digest, an unknown step and a step already decided.
 */
export const decideApprovalUpdate = defineUpdate<ApprovalDecisionResult, [ApprovalDecisionInput]>('decideApproval');
