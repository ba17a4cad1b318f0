/**
 * Shapes of the approval gate shared by the workflow, the worker's activities, the client and the command
 * line. Types only: workflow code imports them without pulling anything into its bundle.
 */
import type { ToolErrorObservation } from './activity-protocol';
import type { CallerIdentity } from './caller-identity';

/** What a run says about approvals (part of `AgentRunInput`). */
export interface RunApprovalPolicy {
  /**
   * Per-tool overrides. `'always'` requires approval for every call of the tool, whatever it declares.
   * `'never'` waives the tool's own approval only when the worker allows runs to (`createWorker({ approvals:
   * { allowRunsToWaive: true } })`); otherwise it is ignored and the run's `policyWarnings` say so.
   */
  tools?: Record<string, 'always' | 'never'>;
  /** Require approval for every call of a tool that is not read-only. */
  requireForEffects?: boolean;
  /**
   * How long each call waits for a decision, in milliseconds, instead of the tool's `approvalTimeout`.
   * No decision in time counts as a rejection.
   */
  timeoutMs?: number;
  /**
   * What a rejection (or a timeout) does: `'observe'` (default) gives it to the model as an error
   * observation; `'abort'` aborts the run and compensates what was done.
   */
  onRejection?: 'observe' | 'abort';
}

/** Input of the engine's `evaluateApproval` activity. */
export interface EvaluateApprovalInput {
  workflowId: string;
  stepId: number;
  idempotencyKey: string;
  tool: string;
  /** The model's raw arguments. */
  arguments: unknown;
  /** What the run asks for this tool, if anything. */
  runOverride?: 'always' | 'never';
  /** Workflow time of the request and of its deadline (ms since epoch), for the audit record. */
  requestedAt: number;
  deadline: number;
}

/** What `evaluateApproval` decided, recorded in history so replay never evaluates again. */
export type ApprovalEvaluation =
  | {
      /** The arguments do not validate (or the tool is missing): nobody is asked to approve them. */
      status: 'invalid';
      observation: ToolErrorObservation;
      notes: string[];
    }
  | { status: 'not_required'; notes: string[] }
  | {
      status: 'required';
      /** Lowercase hex SHA-256 of the canonical JSON of the validated arguments. */
      digest: string;
      /** The validated arguments, as the tool will receive them. */
      arguments: unknown;
      notes: string[];
    };

/** A human's (or the timeout's) decision on one gated call. */
export type ApprovalDecisionKind = 'approved' | 'rejected' | 'timed_out';

/** The approval part of a step, as the run's state shows it. */
export interface StepApproval {
  /** Lowercase hex SHA-256 of the canonical JSON of the validated arguments; a decision must name it. */
  digest: string;
  /** The validated arguments the decision is about. */
  arguments: unknown;
  /** Workflow time (ms since epoch) of the request and of the deadline after which it counts as rejected. */
  requestedAt: number;
  deadline: number;
  decision?: ApprovalDecisionKind;
  decidedBy?: string;
  /** Who decided, as authentication established it (subject, issuer, client), when known. */
  decidedByIdentity?: CallerIdentity;
  reason?: string;
  decidedAt?: number;
  /**
   * Set when the approver approved with edited arguments: the arguments the call runs with, validated by the
   * tool's schema (`arguments` stays what the model proposed).
   */
  editedArguments?: unknown;
  /** Digest of {@link StepApproval.editedArguments}: the one the tool activity checks. */
  editedDigest?: string;
}

/** Argument of the `decideApproval` update. */
export interface ApprovalDecisionInput {
  stepId: number;
  /** The digest of the arguments the decider reviewed: refused when it is not the step's. */
  digest: string;
  decision: 'approve' | 'reject';
  /** Who decides (a user name, an e-mail, a service). */
  approver: string;
  /**
   * Who decides, as an authenticated door established it (the MCP server: subject, issuer, client); recorded in the
   * run's state and the audit trail next to `approver`.
   */
  approverIdentity?: CallerIdentity;
  /** Why; required to reject (the model reads it). */
  reason?: string;
  /**
   * Approve with these arguments instead of the model's (approve only; a JSON object): the worker validates them
   * with the tool's schema, they get their own digest, and the call runs with them. Invalid ones refuse the
   * decision (`APPROVAL_INVALID_ARGUMENTS`) and the call keeps waiting.
   */
  arguments?: Record<string, unknown>;
}

/** What the `decideApproval` update returns. */
export interface ApprovalDecisionResult {
  workflowId: string;
  stepId: number;
  tool: string;
  digest: string;
  decision: 'approved' | 'rejected';
  approver: string;
  /** Who decided, as an authenticated door established it, when it said. */
  approverIdentity?: CallerIdentity;
  reason?: string;
  decidedAt: number;
  /** The validated edited arguments the call runs with, when the approver edited them. */
  editedArguments?: unknown;
  /** Their digest. */
  editedDigest?: string;
}

/** Codes of the update's validator, as the `type` of the ApplicationFailure it throws. */
export const APPROVAL_REFUSAL_CODES = {
  UNKNOWN_STEP: 'APPROVAL_UNKNOWN_STEP',
  ALREADY_DECIDED: 'APPROVAL_ALREADY_DECIDED',
  DIGEST_MISMATCH: 'APPROVAL_DIGEST_MISMATCH',
  INVALID_DECISION: 'APPROVAL_INVALID_DECISION',
  /** The edited arguments of an approval do not validate against the tool's schema; the call keeps waiting. */
  INVALID_ARGUMENTS: 'APPROVAL_INVALID_ARGUMENTS',
} as const;

/** One of {@link APPROVAL_REFUSAL_CODES}. */
export type ApprovalRefusalCode = (typeof APPROVAL_REFUSAL_CODES)[keyof typeof APPROVAL_REFUSAL_CODES];

/** How a gated call ended, for the audit record. */
export type ApprovalOutcome = 'succeeded' | 'failed' | 'not_run';

/** The audit record of one gated call: written when approval is requested, completed as it goes. */
export interface ApprovalAuditRecord {
  /** The call's idempotency key `${workflowId}/${firstExecutionRunId}/${stepId}`: one record per gated call. */
  idempotencyKey: string;
  workflowId: string;
  stepId: number;
  tool: string;
  argumentsDigest: string;
  /** The validated arguments. */
  arguments: unknown;
  requestedAt: number;
  deadline: number;
  /**
   * The decision; `'waived'` when the run waived the tool's approval on a worker that allows runs to
   * (`approvals: { allowRunsToWaive: true }`). The tool activity runs a gated call only with `'approved'` (or
   * `'waived'`, on such a worker) for its idempotency key, tool and argument digest.
   */
  decision?: ApprovalDecisionKind | 'waived';
  decidedBy?: string;
  /**
   * Who decided, as authentication established it (subject, issuer, client), when the decision came through an
   * authenticated door (the MCP server's `decide_approval`); `decidedBy` is the name shown for it.
   */
  decidedByIdentity?: CallerIdentity;
  reason?: string;
  decidedAt?: number;
  /**
   * The arguments an approver approved instead of the model's (`arguments`), validated by the tool's schema: the
   * call runs with them, and the tool activity checks their digest ({@link ApprovalAuditRecord.editedArgumentsDigest}).
   */
  editedArguments?: unknown;
  /** Digest of the edited arguments; when set, the only digest the approval lets run. */
  editedArgumentsDigest?: string;
  outcome?: ApprovalOutcome;
  /** The error code when the call failed or was not run (e.g. `APPROVAL_REJECTED`). */
  outcomeCode?: string;
  completedAt?: number;
}

/** Input of the engine's `reviewEditedArguments` activity: an approver's edited arguments of a gated call. */
export interface ReviewEditedArgumentsInput {
  tool: string;
  arguments: unknown;
}

/** What `reviewEditedArguments` found: the validated arguments and their digest, or why they are refused. */
export type EditedArgumentsReview =
  { ok: true; digest: string; arguments: unknown } | { ok: false; observation: ToolErrorObservation };
