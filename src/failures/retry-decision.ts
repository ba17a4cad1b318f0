/**
 * The retry decision of one failed tool attempt: combines the failure classification, the tool's retry
 * settings, the total deadline, idempotency and the retry budget. Pure: the activity wrapper turns the
 * result into `ApplicationFailure.create({ nonRetryable, nextRetryDelay })`.
 */
import { computeBackoffDelay } from './backoff';
import type { FailureClassification } from './classify';
import type { RetryBudget } from './retry-budget';
import type { ToolRetrySettings } from '../contract/tool-catalog-entry';
import { TOOL_ERROR_CODES, type ToolErrorCode } from '../contract/activity-protocol';

/** Why a failed attempt is not retried. */
export type NoRetryReason =
  'permanent' | 'attempts-exhausted' | 'deadline' | 'budget-exhausted' | 'may-have-had-effect';

/** The result of {@link decideRetry}. */
export type RetryDecision =
  { retry: true; delayMs: number } | { retry: false; reason: NoRetryReason; code: ToolErrorCode };

/** What the model is told when a call stops with `OUTCOME_UNKNOWN` (reason `may-have-had-effect`). */
export const OUTCOME_UNKNOWN_EXPLANATION = {
  message:
    'The call may have been carried out, but no confirmation came back, and this tool is not safe to repeat automatically.',
  hint: 'Do not call it again blindly. Check whether it took effect (for example, read the resource back) and tell the user if you cannot tell.',
} as const;

/** The budget arguments of {@link RetryDecisionInput}: both or neither. */
export type RetryBudgetInput =
  { budget: RetryBudget; budgetKey: string } | { budget?: undefined; budgetKey?: undefined };

/** The inputs of {@link decideRetry}. */
export type RetryDecisionInput = {
  classification: FailureClassification;
  /** The attempt that just failed, 1-based (Temporal's `activityInfo().attempt`). */
  attempt: number;
  /** The tool's resolved retry settings. */
  retry: ToolRetrySettings;
  /** Milliseconds since the first attempt started. */
  elapsedMs: number;
  /** The delay used before the attempt that just failed (decorrelated jitter grows from it). */
  previousDelayMs?: number;
  /** True when the tool is declared idempotent downstream (a repeat under the same key has one effect). */
  idempotent: boolean;
  /** Uniform source in [0, 1) for the jitter; `Math.random` by default. */
  random?: () => number;
} & RetryBudgetInput;

/**
 * Decides whether to retry a failed attempt and after how long. Rules, in order:
 * 1. a permanent failure is never retried (`permanent`, the classification's code);
 * 2. a failure that may have had an effect, on a tool that is not idempotent, is never retried
 *    automatically (`may-have-had-effect`, code `OUTCOME_UNKNOWN`), even on the last attempt;
 * 3. `attempt >= maximumAttempts` stops (`attempts-exhausted`);
 * 4. with `retryAfterMs` (rate limited, 503, …) the delay is exactly what the server asked, never
 *    less; if waiting that long passes `totalDeadlineMs`, stop (`deadline`);
 * 5. otherwise the delay is the jittered backoff, shortened so the next attempt starts no later than
 *    the deadline; no time left at all stops (`deadline`);
 * 6. last, the retry budget (when given) must have a token for `budgetKey` (`budget-exhausted`);
 *    a token is withdrawn only when the answer is "retry".
 *
 * The wrapper must call `budget.recordFirstAttempt(key)` at the start of every attempt 1.
 * Delays are whole milliseconds (rounded up).
 *
 * @example
 * ```ts
 * const decision = decideRetry({ classification: classify(err), attempt: info.attempt, retry: entry.retry,
 *   elapsedMs: Date.now() - firstAttemptStartedMs, idempotent: entry.idempotent, budget, budgetKey: entry.name });
 * if (decision.retry) throw ApplicationFailure.create({ message, type: code, nextRetryDelay: decision.delayMs });
 * else throw ApplicationFailure.create({ message, type: decision.code, nonRetryable: true });
 * ```
 */
export function decideRetry(input: RetryDecisionInput): RetryDecision {
  const { classification, attempt, retry, elapsedMs, idempotent } = input;

  if (classification.kind === 'permanent') return stop('permanent', classification.code);
  if (classification.mayHaveHadEffect && !idempotent)
    return stop('may-have-had-effect', TOOL_ERROR_CODES.OUTCOME_UNKNOWN);
  if (attempt >= retry.maximumAttempts) return stop('attempts-exhausted', classification.code);

  const remainingMs = retry.totalDeadlineMs - elapsedMs;
  if (remainingMs <= 0) return stop('deadline', classification.code);
  let delayMs: number;
  if (classification.retryAfterMs !== undefined) {
    delayMs = Math.ceil(classification.retryAfterMs);
    if (delayMs > remainingMs) return stop('deadline', classification.code);
  } else {
    const backoff = computeBackoffDelay(
      {
        attempt,
        initialDelayMs: retry.initialDelayMs,
        maxDelayMs: retry.maxDelayMs,
        jitter: retry.jitter,
        ...(input.previousDelayMs !== undefined ? { previousDelayMs: input.previousDelayMs } : {}),
      },
      input.random,
    );
    delayMs = Math.min(Math.ceil(backoff), Math.floor(remainingMs));
  }

  if (input.budget && !input.budget.tryAcquireRetry(input.budgetKey)) {
    return stop('budget-exhausted', classification.code);
  }
  return { retry: true, delayMs };
}

function stop(reason: NoRetryReason, code: ToolErrorCode): RetryDecision {
  return { retry: false, reason, code };
}
