import type { DryRunCall } from './dry-run-types';

/**
 * Shapes crossing the wire between the agent-run workflow and tool activities. Types only.
 */

/** Input of every tool activity. */
export interface ToolActivityInput {
  /**
   * The model's raw arguments: a JSON string or an object, validated by the activity. For a compensation,
   * the engine builds them: `{ originalInput, originalOutput?, originalKey }` (see {@link CompensationArguments}).
   */
  arguments: unknown;
  /**
   * `${workflowId}/${firstExecutionRunId}/${stepId}` (a compensation: `${key}/undo`; runs started before
   * run-scoped keys: `${workflowId}/${stepId}`): the same for every attempt of this call, never another run's.
   */
  idempotencyKey: string;
  stepId: number;
  /**
   * The run that owns the call's stored data (claim checks, checkpoints, job records):
   * `${workflowId}/${firstExecutionRunId}`. Absent for runs started before run-scoped keys: their data
   * belongs to the workflow id.
   */
  runKey?: string;
  /** Set when this call undoes an earlier call of the named tool: retried until it succeeds or fails permanently. */
  compensationOf?: string;
  /**
   * Set by the workflow for a compensable call whose arguments are too large to carry inline in the
   * compensation: the activity stores them (handle `args:<key>`) before the tool runs.
   */
  storeArguments?: boolean;
  /**
   * Set when a human approved the call: the digest of the validated arguments that were approved. The
   * wrapper refuses to run the tool (`APPROVAL_MISMATCH`) when the arguments it validates have another digest.
   */
  approvedDigest?: string;
  /**
   * Set on every call of a dry run: the wrapper validates the arguments, then answers from the recorded calls
   * it is given or refuses (`DRY_RUN_NO_RECORD`); it never runs the code of a tool with effects.
   */
  dryRun?: DryRunCall;
  /**
   * Set by the engine on an agent tool's call of a run with `allowedTools`: those tools. The activity records the
   * child's grant within them (and within the run's own grant): they only ever narrow it (docs/security.md).
   */
  runTools?: string[];
  /**
   * Set on a call's own local activity when the turn's fused step ran the call's first attempt and it failed
   * (docs/fast-path.md, "Attempts"): the activity's attempt 1 ends with that failure without running the tool
   * again, so the call's retry policy (attempts, backoff, a non-retryable failure, a Retry-After) goes on from it.
   */
  fusedAttemptFailure?: FusedAttemptFailure;
}

/** The failure of a call's attempt inside a fused step, as the tool's activity threw it. */
export interface FusedAttemptFailure {
  message: string;
  /** The failure's type (the error code, or the error's name). */
  type?: string;
  nonRetryable: boolean;
  details?: unknown[];
  /** The retry delay the failure asked for (a Retry-After), in ms. */
  nextRetryDelayMs?: number;
}

/** What an undo tool receives: what the forward call was given, what it returned if known, and its key. */
export interface CompensationArguments<I = unknown, O = unknown> {
  originalInput: I;
  /** Absent when the forward call's outcome is unknown (it timed out, or the worker died after its effect). */
  originalOutput?: O;
  /** The forward call's idempotency key: undo "whatever was done under this key". */
  originalKey: string;
}

/** Result of a successful tool activity. */
export interface ToolActivityResult {
  output: unknown;
  /** The attempt that produced the output (1 when the first attempt succeeded). */
  attempt: number;
  /** True when the output was replayed from the idempotency store (or adopted from `reconcile`). */
  replayed?: boolean;
  /** Digest of the validated arguments (what a later dry run of this run matches on). */
  argumentsDigest?: string;
  /** In a dry run: the source step whose record answers this call; the tool did not run. */
  dryRunAnswer?: { sourceStep: number };
  /**
   * An agent tool's call in a run with a grant: the tools of the child's grant the activity recorded (docs/security.md,
   * "Authority of a run"), so the run's history shows them.
   */
  childGrant?: string[];
  /** True when a cached read answered from the cache (`defineTool({ cache })`): the tool did not run. */
  cached?: boolean;
}
