import { ApplicationFailure } from '@temporalio/common';
import { classify } from '../failures/classify';
import {
  decideRetry,
  OUTCOME_UNKNOWN_EXPLANATION,
  type NoRetryReason,
  type RetryBudgetInput,
} from '../failures/retry-decision';
import type { FailureKind } from '../failures/classify';
import type { RetryBudget } from '../failures/retry-budget';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { CancelledFailure } from '@temporalio/common';
import {
  cancelledToolFailure,
  TOOL_ERROR_CODES,
  toolFailure,
  type ToolErrorObservation,
} from '../contract/activity-protocol';
import { jsonByteLength, PAYLOAD_LIMITS, truncateText } from '../contract/payload-limits';

/** What the wrapper knows when a tool implementation throws. */
export interface ThrownErrorContext {
  tool: ToolCatalogEntry;
  /** The attempt that failed, from 1. */
  attempt: number;
  /** Milliseconds since the first attempt was scheduled. */
  elapsedMs: number;
  /** The delay chosen before this attempt, when known (decorrelated jitter grows from it). */
  previousDelayMs?: number;
  /** Retry budget of this worker process, keyed by tool name. */
  budget?: RetryBudget;
  random?: () => number;
}

/**
 * Decides what a thrown error becomes. The error is classified (transient, permanent, rate-limited;
 * may it have had an effect?), then {@link decideRetry} picks either a retry with an engine-chosen
 * delay (full jitter, or exactly the server's Retry-After) or a final, structured failure the model
 * will read. An `ApplicationFailure` thrown by the tool itself is passed through untouched.
 *
 * @returns the failure to throw, the delay when it is a retry, and (for telemetry) the error's
 * classification and why no retry follows when none does.
 */
export function failureForThrownError(
  error: unknown,
  context: ThrownErrorContext,
): { failure: ApplicationFailure; retryDelayMs?: number; classification?: FailureKind; refusedBy?: NoRetryReason } {
  if (error instanceof ApplicationFailure) return { failure: boundApplicationFailure(error) };
  const { tool, attempt } = context;
  const classification = classify(error);
  const budget: RetryBudgetInput = context.budget ? { budget: context.budget, budgetKey: tool.name } : {};
  const decision = decideRetry({
    classification,
    attempt,
    retry: tool.retry,
    elapsedMs: context.elapsedMs,
    idempotent: tool.idempotent || tool.effect === 'read-only',
    ...(context.previousDelayMs !== undefined ? { previousDelayMs: context.previousDelayMs } : {}),
    ...(context.random ? { random: context.random } : {}),
    ...budget,
  });
  if (decision.retry) {
    const observation: ToolErrorObservation = {
      status: 'error',
      code: classification.code,
      message: classification.message,
      hint: classification.hint,
      retryable: true,
      attempts: attempt,
    };
    return {
      failure: toolFailure(observation, { mayHaveHadEffect: classification.mayHaveHadEffect }, decision.delayMs),
      retryDelayMs: decision.delayMs,
      classification: classification.kind,
    };
  }
  const outcomeUnknown = decision.reason === 'may-have-had-effect';
  const observation: ToolErrorObservation = {
    status: 'error',
    code: decision.code,
    message: outcomeUnknown
      ? `${OUTCOME_UNKNOWN_EXPLANATION.message} (${classification.message})`
      : withReason(classification.message, decision.reason, attempt),
    hint: outcomeUnknown ? OUTCOME_UNKNOWN_EXPLANATION.hint : classification.hint,
    retryable: !outcomeUnknown && classification.kind !== 'permanent',
    attempts: attempt,
    ...(classification.missingScope !== undefined ? { missingScope: classification.missingScope } : {}),
  };
  return {
    failure: toolFailure(observation, { mayHaveHadEffect: classification.mayHaveHadEffect }),
    classification: classification.kind,
    refusedBy: decision.reason,
  };
}

function withReason(message: string, reason: string, attempt: number): string {
  switch (reason) {
    case 'attempts-exhausted':
      return `${message} (gave up after ${attempt} attempt${attempt === 1 ? '' : 's'})`;
    case 'deadline':
      return `${message} (gave up: the tool's time budget is spent)`;
    case 'budget-exhausted':
      return `${message} (not retried: this tool is failing too often right now)`;
    default:
      return message;
  }
}

/**
 * What to throw when the call was cancelled and the tool threw: the cancellation itself when the tool only
 * gave up because of it (its error is the abort), otherwise a cancellation that carries the tool's own
 * error, so the run reports what the tool said and not only "cancelled".
 */
export function cancelledCall(tool: string, attempt: number, error: unknown, reason: unknown): unknown {
  const isAbort =
    error === reason ||
    error instanceof CancelledFailure ||
    (error instanceof Error && (error.name === 'AbortError' || error.name === 'CancelledFailure'));
  if (isAbort) return reason ?? error;
  const classification = classify(error);
  return cancelledToolFailure(
    {
      status: 'error',
      code: TOOL_ERROR_CODES.CANCELLED,
      message: `The call to "${tool}" was cancelled, and the tool failed: ${classification.message}`,
      hint: 'The run is being cancelled.',
      retryable: false,
      attempts: attempt,
    },
    { mayHaveHadEffect: classification.mayHaveHadEffect },
  );
}

/** A tool's own ApplicationFailure, kept as it is unless its message or details would blow the payload budget. */
function boundApplicationFailure(failure: ApplicationFailure): ApplicationFailure {
  const tooLongMessage = failure.message.length > PAYLOAD_LIMITS.errorTextChars;
  const tooLargeDetails = jsonByteLength(failure.details ?? null) > PAYLOAD_LIMITS.compensationInlineBytes * 4;
  if (!tooLongMessage && !tooLargeDetails) return failure;
  return ApplicationFailure.create({
    message: truncateText(failure.message, PAYLOAD_LIMITS.errorTextChars),
    ...(failure.type ? { type: failure.type } : {}),
    nonRetryable: failure.nonRetryable === true,
    ...(tooLargeDetails ? {} : { details: failure.details as unknown[] }),
    ...(failure.nextRetryDelay != null ? { nextRetryDelay: failure.nextRetryDelay } : {}),
  });
}
