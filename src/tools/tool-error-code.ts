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
  /** The model asked for a tool that does not exist or is not allowed in this run. */
  UNKNOWN_TOOL: 'UNKNOWN_TOOL',
  NOT_FOUND: 'NOT_FOUND',
  PERMISSION_DENIED: 'PERMISSION_DENIED',
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
} as const;

/** One of {@link TOOL_ERROR_CODES}. */
export type ToolErrorCode = (typeof TOOL_ERROR_CODES)[keyof typeof TOOL_ERROR_CODES];

/**
 * What the model sees when a tool call fails: a structured error it can act on, never a stack trace.
 */
export interface ToolErrorObservation {
  status: 'error';
  code: ToolErrorCode | string;
  message: string;
  /** The next step the model should take, e.g. "pass `nights` as a number". */
  hint: string;
  /** Whether calling again later (with the same arguments) could succeed. */
  retryable: boolean;
  /** How many attempts the engine made before giving up (0 when the call never ran). */
  attempts: number;
  /** Field-level problems, for validation failures. */
  issues?: ReadonlyArray<{ path: string; message: string }>;
}

/** What the model sees when a tool call succeeds. */
export interface ToolSuccessObservation {
  status: 'ok';
  output: unknown;
  /** True when the result was replayed from the idempotency store instead of executing again. */
  replayed?: boolean;
}

/** The observation of one tool call. */
export type ToolObservation = ToolSuccessObservation | ToolErrorObservation;
