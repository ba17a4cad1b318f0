import { ActivityFailure, ApplicationFailure, TimeoutFailure, isCancellation } from '@temporalio/workflow';
import type { ToolErrorObservation } from '../tools/tool-error-code';

/**
 * Whether a failed call may have changed the world: false only when the activity said so (bad arguments,
 * refused before any effect) or the tool was never found on the worker.
 */
export function failureMayHaveHadEffect(error: unknown): boolean {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) {
    const facts = cause.details?.[1] as { mayHaveHadEffect?: unknown } | undefined;
    if (typeof facts?.mayHaveHadEffect === 'boolean') return facts.mayHaveHadEffect;
    if (cause.type === 'NotFoundError') return false;
  }
  return true;
}

/**
 * Reduces whatever a tool activity failed with to the structured observation the model sees. The
 * activity normally sends the observation itself in the failure's details; everything else (timeouts,
 * a tool missing on the worker, cancellation) is described here.
 */
export function observationFromFailure(error: unknown, tool: string, maximumAttempts: number): ToolErrorObservation {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) {
    const detail = cause.details?.[0];
    if (isObservation(detail)) return detail;
    if (cause.type === 'NotFoundError') {
      return {
        status: 'error',
        code: 'TOOL_NOT_REGISTERED',
        message: `Tool "${tool}" is in the catalog but the worker that picked up the call does not implement it.`,
        hint: 'Do not call this tool again in this run; use another tool or finish.',
        retryable: false,
        attempts: 1,
      };
    }
    return {
      status: 'error',
      code: cause.type ?? 'INTERNAL',
      message: cause.message,
      hint: cause.nonRetryable ? 'Do not repeat the same call.' : 'The call may succeed later.',
      retryable: !cause.nonRetryable,
      attempts: maximumAttempts,
    };
  }
  if (cause instanceof TimeoutFailure) {
    return {
      status: 'error',
      code: 'TIMEOUT',
      message: `Tool "${tool}" did not answer in time (${cause.timeoutType ?? 'timeout'}).`,
      hint: 'The tool may be overloaded; try later, with a smaller request, or use another tool.',
      retryable: true,
      attempts: maximumAttempts,
    };
  }
  if (isCancellation(error)) {
    return {
      status: 'error',
      code: 'CANCELLED',
      message: `The call to "${tool}" was cancelled.`,
      hint: 'The run is being cancelled.',
      retryable: false,
      attempts: 1,
    };
  }
  return {
    status: 'error',
    code: 'INTERNAL',
    message: `Tool "${tool}" failed: ${error instanceof Error ? error.message : String(error)}`,
    hint: 'Try another way.',
    retryable: false,
    attempts: maximumAttempts,
  };
}

function isObservation(value: unknown): value is ToolErrorObservation {
  if (!value || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return v.status === 'error' && typeof v.code === 'string' && typeof v.message === 'string';
}
