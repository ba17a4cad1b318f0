import type { ApprovalRefusalCode } from '../contract/approval-types';
import { DurableToolsError } from '../contract/durable-tools-error';

/** Codes of {@link ApprovalError}: the update validator's refusals, and the client's own. */
export type ApprovalErrorCode =
  | ApprovalRefusalCode
  /** The run does not exist or has already ended. */
  | 'APPROVAL_RUN_NOT_RUNNING'
  /** The run has no call waiting, or several and no step was named. */
  | 'APPROVAL_STEP_REQUIRED'
  /** Anything else the server or the workflow answered. */
  | 'APPROVAL_FAILED';

/**
 * A decision was refused or could not be delivered: a wrong digest, an unknown step, a step already
 * decided, a run that is not running. Nothing was approved or rejected.
 */
export class ApprovalError extends DurableToolsError<ApprovalErrorCode> {
  override readonly name = 'ApprovalError';
}
