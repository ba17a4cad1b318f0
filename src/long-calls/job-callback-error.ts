/**
 * The error a refused job callback throws, its codes and the HTTP status each answers with (kept apart from
 * `completeJobCallback`'s Temporal client code so the error classes load without it).
 */
import { DurableToolsError } from '../contract/durable-tools-error';

/** Why a callback was refused; nothing changed in any of these cases. */
export const JOB_CALLBACK_ERROR_CODES = {
  /** Not a callback token, or no call has it (forged, mistyped, or the record expired). HTTP 404. */
  INVALID_TOKEN: 'INVALID_TOKEN',
  /** The output does not match the tool's output schema (or nests too deep). HTTP 422. */
  INVALID_OUTPUT: 'INVALID_OUTPUT',
  /** A callback already completed this call. HTTP 409. */
  ALREADY_FINISHED: 'ALREADY_FINISHED',
  /** No attempt waits for the callback now (the call timed out, was cancelled, or is between attempts). HTTP 409. */
  NOT_WAITING: 'NOT_WAITING',
  /** The tool of the call is not among the tools given to the helper. HTTP 500. */
  UNKNOWN_TOOL: 'UNKNOWN_TOOL',
  /** The transcript store or the Temporal server could not be reached: try again. HTTP 503. */
  UNAVAILABLE: 'UNAVAILABLE',
} as const;

/** One of {@link JOB_CALLBACK_ERROR_CODES}. */
export type JobCallbackErrorCode = (typeof JOB_CALLBACK_ERROR_CODES)[keyof typeof JOB_CALLBACK_ERROR_CODES];

/** A refused callback: a fixed `name`, a `code`, problems of an invalid output, and an HTTP status for endpoints. */
export class JobCallbackError extends DurableToolsError<JobCallbackErrorCode> {
  override readonly name = 'JobCallbackError';
  constructor(
    message: string,
    code: JobCallbackErrorCode,
    readonly issues: ReadonlyArray<{ path: string; message: string }> = [],
    options?: { cause?: unknown },
  ) {
    super(message, code, options);
  }

  /** The HTTP status an endpoint answers with. */
  get httpStatus(): number {
    return JOB_CALLBACK_HTTP_STATUS[this.code];
  }
}

const JOB_CALLBACK_HTTP_STATUS: Record<JobCallbackErrorCode, number> = {
  INVALID_TOKEN: 404,
  INVALID_OUTPUT: 422,
  ALREADY_FINISHED: 409,
  NOT_WAITING: 409,
  UNKNOWN_TOOL: 500,
  UNAVAILABLE: 503,
};
