/**
 * The contract between the agent-run workflow and the activities (tool calls, `callModel`,
 * `describeTools`): which failure types cross the wire, how a tool failure's `details` are laid out, and
 * how each side reads them. Both sides import this one module, so a new code cannot be added on one side
 * and forgotten on the other: every `type` our activities put on an `ApplicationFailure` is a member of
 * the closed union {@link ProtocolFailureType}.
 *
 * Pure: no Node built-ins, no zod; imports only `@temporalio/common` and the pure payload budget (safe in the
 * workflow sandbox).
 *
 * Layout of a tool failure (an `ApplicationFailure` thrown by a tool activity):
 * - `type`: the {@link ToolErrorCode};
 * - `message`: the observation's message;
 * - `nonRetryable`: true unless the activity chose a `nextRetryDelay`;
 * - `details[0]`: the {@link ToolErrorObservation} the model sees, unchanged;
 * - `details[1]`: the {@link ToolFailureFacts} only the engine sees (is a compensation still owed?).
 */
import { ActivityFailure, ApplicationFailure, CancelledFailure, TimeoutFailure } from '@temporalio/common';
import { boundErrorObservation } from './bound-observation';

/**
 * The string codes every tool failure is reduced to. They cross the wire as the `type` of a Temporal
 * `ApplicationFailure` and reach the model inside a {@link ToolErrorObservation}.
 *
 * @example
 * ```ts
 * if (observation.status === 'error' && observation.code === TOOL_ERROR_CODES.RATE_LIMITED) { ... }
 * ```
 */
export const TOOL_ERROR_CODES = {
  /** The model's arguments do not match the tool's input schema (or are not JSON at all). */
  INVALID_ARGUMENTS: 'INVALID_ARGUMENTS',
  /**
   * The arguments matched the tool's schema, but the service behind the tool rejected the request's content
   * (HTTP 400 or 422): the values, not the format, have to change.
   */
  REQUEST_REJECTED: 'REQUEST_REJECTED',
  /** The model asked for a tool that does not exist or is not allowed in this run. */
  UNKNOWN_TOOL: 'UNKNOWN_TOOL',
  NOT_FOUND: 'NOT_FOUND',
  PERMISSION_DENIED: 'PERMISSION_DENIED',
  /**
   * The service wants payment before it does this (HTTP 402): a declined card, an exhausted balance or quota
   * that only money lifts. Permanent; not a permission problem, so the model should not look for credentials.
   */
  PAYMENT_REQUIRED: 'PAYMENT_REQUIRED',
  CONFLICT: 'CONFLICT',
  RATE_LIMITED: 'RATE_LIMITED',
  UNAVAILABLE: 'UNAVAILABLE',
  TIMEOUT: 'TIMEOUT',
  INTERNAL: 'INTERNAL',
  /** A call may have had an effect and the engine cannot tell; it is never retried blindly. */
  OUTCOME_UNKNOWN: 'OUTCOME_UNKNOWN',
  /** The same idempotency key was used with different arguments. */
  IDEMPOTENCY_CONFLICT: 'IDEMPOTENCY_CONFLICT',
  /** The tool returned something that does not match its own output schema. */
  INVALID_OUTPUT: 'INVALID_OUTPUT',
  /** The tool is in the catalog but no worker on the task queue implements it. */
  TOOL_NOT_REGISTERED: 'TOOL_NOT_REGISTERED',
  /** The run was cancelled while the call was in flight. */
  CANCELLED: 'CANCELLED',
  /** The run's rules refused the call before anything ran (e.g. a compensable step after an irreversible one). */
  POLICY_VIOLATION: 'POLICY_VIOLATION',
  /**
   * The attempt lost its idempotency key's lease (paused, starved, or taken over) and stopped; the next
   * attempt finds out what happened before anything runs again.
   */
  LEASE_LOST: 'LEASE_LOST',
  /** A human rejected the call; it was not run. */
  APPROVAL_REJECTED: 'APPROVAL_REJECTED',
  /** Nobody decided on the call in time: it counts as rejected and was not run. */
  APPROVAL_TIMEOUT: 'APPROVAL_TIMEOUT',
  /** The arguments the tool received are not the ones that were approved; it was not run. */
  APPROVAL_MISMATCH: 'APPROVAL_MISMATCH',
  /**
   * The tool requires approval for these arguments and the engine recorded no approving decision for this call
   * (its idempotency key and the digest of its validated arguments): the activity was called past the approval
   * gate (a hand-made call, or a worker whose audit store is not the one the gate writes). It was not run.
   */
  APPROVAL_REQUIRED: 'APPROVAL_REQUIRED',
  /** A sub-agent (an agent tool's child run) did not complete, or the parent had no budget left to start it. */
  SUB_AGENT_FAILED: 'SUB_AGENT_FAILED',
  /**
   * A protected MCP server refused the call with 403 `insufficient_scope`: the worker's OAuth token lacks the scope
   * named in the observation's `missingScope`. Nothing ran; permanent until an operator grants the scope.
   */
  MCP_INSUFFICIENT_SCOPE: 'MCP_INSUFFICIENT_SCOPE',
  /**
   * A dry run (docs/fork.md): the call has effects and the source run recorded no call of this tool with the same
   * validated arguments to answer it from; it was not run.
   */
  DRY_RUN_NO_RECORD: 'DRY_RUN_NO_RECORD',
  /**
   * The model's final answer does not match the run's `output` schema (or is not JSON): the model reads why and
   * answers again; past the run's attempts the run fails with this code (docs/agents.md).
   */
  INVALID_ANSWER: 'INVALID_ANSWER',
  /**
   * The tool is outside the authority of the run that called it (docs/security.md, "Authority of a run"): not in
   * the set its trusted starter granted it (what the starter asked for and may call, and for a child its parent's
   * set), or a restricted tool called by a run with no grant. It was not run; permanent for this run.
   */
  TOOL_NOT_PERMITTED: 'TOOL_NOT_PERMITTED',
} as const;

/** One of {@link TOOL_ERROR_CODES}. */
export type ToolErrorCode = (typeof TOOL_ERROR_CODES)[keyof typeof TOOL_ERROR_CODES];

/**
 * Failure types of the engine's own activities (`callModel`, `describeTools`). They end a model step,
 * never reach the model as an observation, and are read by the workflow only through this module.
 */
export const ENGINE_FAILURE_TYPES = {
  /** The worker's transcript store lacks the start of this run's transcript: the workflow resends it whole. */
  TRANSCRIPT_MISSING: 'TRANSCRIPT_MISSING',
  /** The run names a model provider no worker registered. */
  UNKNOWN_MODEL_PROVIDER: 'UNKNOWN_MODEL_PROVIDER',
  /** The provider answered with something that is not a model turn. */
  MODEL_OUTPUT_INVALID: 'MODEL_OUTPUT_INVALID',
  // What a model provider's call failed with (classified by `classifyModelError`):
  /** 429: the provider's rate limit. Retried after Retry-After or the provider's reset time. */
  MODEL_RATE_LIMITED: 'MODEL_RATE_LIMITED',
  /** 529 (Anthropic) or 503: the provider is overloaded. Retried. */
  MODEL_OVERLOADED: 'MODEL_OVERLOADED',
  /** Other 5xx, connection refused or reset, DNS. Retried. */
  MODEL_UNAVAILABLE: 'MODEL_UNAVAILABLE',
  /** The turn's deadline passed; the provider's request was aborted. Retried. */
  MODEL_TIMEOUT: 'MODEL_TIMEOUT',
  /** The provider's response could not be read. Retried a few times. */
  MODEL_RESPONSE_INVALID: 'MODEL_RESPONSE_INVALID',
  /** The prompt does not fit the model's context window. Final. */
  MODEL_CONTEXT_LENGTH_EXCEEDED: 'MODEL_CONTEXT_LENGTH_EXCEEDED',
  /** 401 / 403 / no API key. Final. */
  MODEL_AUTHENTICATION_FAILED: 'MODEL_AUTHENTICATION_FAILED',
  /** Another 4xx (unknown model, bad parameter). Final. */
  MODEL_REQUEST_REJECTED: 'MODEL_REQUEST_REJECTED',
  /** An error of the provider nobody recognises. Final. */
  MODEL_PROVIDER_ERROR: 'MODEL_PROVIDER_ERROR',
  /** The approval audit trail could not be written (retried; the gated call is refused if it never can). */
  AUDIT_STORE_UNAVAILABLE: 'AUDIT_STORE_UNAVAILABLE',
  /** A fast-path model turn could not be recorded in (or read from) the worker's idempotency store. Retried. */
  MODEL_TURN_STORE_UNAVAILABLE: 'MODEL_TURN_STORE_UNAVAILABLE',
} as const;

/** One of {@link ENGINE_FAILURE_TYPES}. */
export type EngineFailureType = (typeof ENGINE_FAILURE_TYPES)[keyof typeof ENGINE_FAILURE_TYPES];

/** Every `ApplicationFailure.type` our activities may set: the closed union of the protocol. */
export type ProtocolFailureType = ToolErrorCode | EngineFailureType;

/** Failure types Temporal itself raises that the protocol handles. */
export const TEMPORAL_FAILURE_TYPES = {
  /** The worker that took the task has no activity of that name (a tool missing on the worker). */
  ACTIVITY_NOT_REGISTERED: 'NotFoundError',
} as const;

/** `nonRetryableErrorTypes` of a tool call and of a compensation: a tool missing on the worker fails at once. */
export const TOOL_ACTIVITY_NON_RETRYABLE_TYPES: readonly string[] = [TEMPORAL_FAILURE_TYPES.ACTIVITY_NOT_REGISTERED];

/** `nonRetryableErrorTypes` of `callModel`. */
export const MODEL_ACTIVITY_NON_RETRYABLE_TYPES: readonly string[] = [ENGINE_FAILURE_TYPES.TRANSCRIPT_MISSING];

/**
 * What the model sees when a tool call fails: a structured error it can act on, never a stack trace.
 */
export interface ToolErrorObservation {
  status: 'error';
  code: ToolErrorCode;
  message: string;
  /** The next step the model should take, e.g. "pass `nights` as a number". */
  hint: string;
  /** Whether calling again later (with the same arguments) could succeed. */
  retryable: boolean;
  /**
   * How many attempts of the call's activity ran before it gave up, the one that refused the call included (a guard
   * refusal in attempt 1 says 1, as the attempt's span does); 0 when no activity ran (refused in the workflow).
   */
  attempts: number;
  /** Field-level problems, for validation failures. */
  issues?: ReadonlyArray<{ path: string; message: string }>;
  /** For `MCP_INSUFFICIENT_SCOPE`: the scopes the server asked for, space-separated. */
  missingScope?: string;
}

/** What the model sees when a tool call succeeds. */
export interface ToolSuccessObservation {
  status: 'ok';
  output: unknown;
  /** True when the result was replayed from the idempotency store instead of executing again. */
  replayed?: boolean;
  /** True when a cached read's answer was reused (docs/tools.md, "Cached reads"): the tool did not run. */
  cached?: boolean;
}

/** The observation of one tool call. */
export type ToolObservation = ToolSuccessObservation | ToolErrorObservation;

/** Engine facts about a failed call that the workflow needs and the model does not (`details[1]`). */
export interface ToolFailureFacts {
  /** False only when the call provably changed nothing (bad arguments, refused before the effect). */
  mayHaveHadEffect: boolean;
  /** Digest of the validated arguments, when the call got past validation (a dry run matches on it). */
  argumentsDigest?: string;
}

/** The `details` of a tool failure, in order. */
export type ToolFailureDetails = [observation: ToolErrorObservation, facts: ToolFailureFacts];

/** Whether `value` is one of {@link TOOL_ERROR_CODES} (own properties only: `constructor` is not a code). */
export function isToolErrorCode(value: unknown): value is ToolErrorCode {
  return typeof value === 'string' && Object.hasOwn(TOOL_ERROR_CODES, value);
}

/** Whether `value` is one of {@link ENGINE_FAILURE_TYPES}. */
export function isEngineFailureType(value: unknown): value is EngineFailureType {
  return typeof value === 'string' && Object.hasOwn(ENGINE_FAILURE_TYPES, value);
}

/**
 * Activity side: turns a structured tool error into the failure that crosses the wire (see the layout in
 * the module notes). A retry delay makes it retryable with exactly that delay; without one it is final.
 */
export function toolFailure(
  unbounded: ToolErrorObservation,
  facts: ToolFailureFacts,
  nextRetryDelayMs?: number,
): ApplicationFailure {
  // A tool may throw a 5 MB message: what crosses the wire stays within the error budget.
  const observation = boundErrorObservation(unbounded);
  return ApplicationFailure.create({
    type: observation.code,
    message: observation.message,
    nonRetryable: nextRetryDelayMs === undefined,
    details: [observation, facts] satisfies ToolFailureDetails,
    ...(nextRetryDelayMs !== undefined ? { nextRetryDelay: Math.max(1, Math.round(nextRetryDelayMs)) } : {}),
  });
}

/**
 * Activity side: a call that was cancelled while the tool itself failed. It travels as the cancellation
 * Temporal expects, with the same details layout as {@link toolFailure}, so the workflow reports the tool's
 * own error next to the cancellation instead of only "cancelled".
 */
export function cancelledToolFailure(observation: ToolErrorObservation, facts: ToolFailureFacts): CancelledFailure {
  return new CancelledFailure(observation.message, [observation, facts] satisfies ToolFailureDetails);
}

/**
 * Activity side: a failure of the engine's own activities. Final unless `retryable`; a retryable one may
 * choose its next delay (`nextRetryDelayMs`, e.g. a model provider's Retry-After).
 */
export function engineFailure(
  type: EngineFailureType,
  message: string,
  options: { retryable?: boolean; nextRetryDelayMs?: number; details?: unknown[]; cause?: Error } = {},
): ApplicationFailure {
  const retryable = options.retryable === true;
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: !retryable,
    ...(retryable && options.nextRetryDelayMs !== undefined
      ? { nextRetryDelay: Math.max(1, Math.round(options.nextRetryDelayMs)) }
      : {}),
    ...(options.details ? { details: options.details } : {}),
    ...(options.cause ? { cause: options.cause } : {}),
  });
}

/** The `ApplicationFailure` behind an error as the workflow receives it (unwrapping `ActivityFailure`). */
export function applicationFailureOf(error: unknown): ApplicationFailure | undefined {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof ApplicationFailure ? cause : undefined;
}

/** Workflow side: whether an activity failed with the given engine failure type. */
export function isEngineFailure(error: unknown, type: EngineFailureType): boolean {
  return applicationFailureOf(error)?.type === type;
}

/** Workflow side: whether the worker that took the task had no activity of that name. */
export function isActivityNotRegistered(error: unknown): boolean {
  return applicationFailureOf(error)?.type === TEMPORAL_FAILURE_TYPES.ACTIVITY_NOT_REGISTERED;
}

/**
 * Workflow side: the observation and facts a tool activity put in its failure's details, when they are
 * there and well formed (a code outside the union is not an observation of ours).
 */
export function readToolFailureDetails(error: unknown): {
  observation?: ToolErrorObservation;
  facts?: ToolFailureFacts;
} {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  const details = cause instanceof ApplicationFailure || cause instanceof CancelledFailure ? cause.details : undefined;
  if (!Array.isArray(details)) return {};
  const [observation, facts] = details as unknown[];
  return {
    ...(isToolErrorObservation(observation) ? { observation } : {}),
    ...(isToolFailureFacts(facts) ? { facts } : {}),
  };
}

/** Whether `value` has the shape of a {@link ToolErrorObservation} with a code of the union. */
export function isToolErrorObservation(value: unknown): value is ToolErrorObservation {
  if (!value || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return v['status'] === 'error' && isToolErrorCode(v['code']) && typeof v['message'] === 'string';
}

function isToolFailureFacts(value: unknown): value is ToolFailureFacts {
  return (
    !!value && typeof value === 'object' && typeof (value as Record<string, unknown>)['mayHaveHadEffect'] === 'boolean'
  );
}

/**
 * Workflow side: whether a failed tool call may have changed the world. False only when the activity
 * said so (bad arguments, refused before any effect) or the tool was never found on the worker.
 */
export function failureMayHaveHadEffect(error: unknown): boolean {
  const { facts } = readToolFailureDetails(error);
  if (facts) return facts.mayHaveHadEffect;
  return !isActivityNotRegistered(error);
}

/**
 * Workflow side: reduces whatever a tool activity failed with to the structured observation the model
 * sees. The activity normally sends the observation itself in the failure's details; everything else
 * (a tool missing on the worker, a tool's own `ApplicationFailure`, timeouts, cancellation) is described
 * here.
 */
export function observationFromFailure(error: unknown, tool: string, maximumAttempts: number): ToolErrorObservation {
  const { observation } = readToolFailureDetails(error);
  if (observation) return observation;
  const failure = applicationFailureOf(error);
  if (failure) return observationOfForeignFailure(failure, tool, maximumAttempts);
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof TimeoutFailure) {
    return {
      status: 'error',
      code: TOOL_ERROR_CODES.TIMEOUT,
      message: `Tool "${tool}" did not answer in time (${cause.timeoutType ?? 'timeout'}).`,
      hint: 'The tool may be overloaded; try later, with a smaller request, or use another tool.',
      retryable: true,
      attempts: maximumAttempts,
    };
  }
  if (cause instanceof CancelledFailure) {
    return {
      status: 'error',
      code: TOOL_ERROR_CODES.CANCELLED,
      message: `The call to "${tool}" was cancelled.`,
      hint: 'The run is being cancelled.',
      retryable: false,
      attempts: 1,
    };
  }
  return {
    status: 'error',
    code: TOOL_ERROR_CODES.INTERNAL,
    message: `Tool "${tool}" failed: ${error instanceof Error ? error.message : String(error)}`,
    hint: 'Try another way.',
    retryable: false,
    attempts: maximumAttempts,
  };
}

/** A failure without our details: Temporal's NotFoundError, or an `ApplicationFailure` the tool threw itself. */
function observationOfForeignFailure(
  failure: ApplicationFailure,
  tool: string,
  maximumAttempts: number,
): ToolErrorObservation {
  if (failure.type === TEMPORAL_FAILURE_TYPES.ACTIVITY_NOT_REGISTERED) {
    return {
      status: 'error',
      code: TOOL_ERROR_CODES.TOOL_NOT_REGISTERED,
      message: `Tool "${tool}" is in the catalog but the worker that picked up the call does not implement it.`,
      hint: 'Do not call this tool again in this run; use another tool or finish.',
      retryable: false,
      attempts: 1,
    };
  }
  const known = isToolErrorCode(failure.type);
  return {
    status: 'error',
    code: known ? (failure.type as ToolErrorCode) : TOOL_ERROR_CODES.INTERNAL,
    message: known || !failure.type ? failure.message : `${failure.type}: ${failure.message}`,
    hint: failure.nonRetryable ? 'Do not repeat the same call.' : 'The call may succeed later.',
    retryable: !failure.nonRetryable,
    attempts: maximumAttempts,
  };
}

/**
 * Words for a failure of the engine's own activities, for a run's `reason`: the activity's own type and
 * message (e.g. `MODEL_OUTPUT_INVALID: The model provider "x" returned a malformed turn: …`), never
 * Temporal's generic "Activity task failed".
 */
export function describeActivityFailure(error: unknown): string {
  const failure = applicationFailureOf(error);
  if (failure) return failure.type ? `${failure.type}: ${failure.message}` : failure.message;
  const cause = error instanceof ActivityFailure && error.cause ? error.cause : error;
  if (cause instanceof TimeoutFailure) return `${cause.message || 'Timed out'} (${cause.timeoutType ?? 'timeout'})`;
  return cause instanceof Error ? cause.message : String(cause);
}
