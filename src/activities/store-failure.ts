import { IdempotencyStoreError } from '../stores/idempotency/idempotency-store-error';
import {
  TOOL_ERROR_CODES,
  toolFailure,
  type ToolErrorObservation,
  type ToolFailureFacts,
} from '../contract/activity-protocol';
import type { ToolRetrySettings } from '../contract/tool-catalog-entry';

/** Where the wrapper was talking to the idempotency store: claiming the key, or recording the result. */
export type StorePhase = 'claim' | 'record';

/** Store error codes that will come back on every attempt: a retry cannot help. */
const DETERMINISTIC_STORE_CODES: ReadonlySet<string> = new Set([
  'NOT_JSON',
  'INVALID_KEY',
  'INVALID_ARGUMENT',
  'INVALID_CONFIG',
]);

/**
 * The permanent failure for an idempotency-store error that will recur on every attempt (a value that is
 * not JSON, a malformed key, a value too large or deep to serialise), or `undefined` when the error may be
 * an outage worth retrying. Deterministic errors are never transient: retrying them only repeats the call,
 * and on a compensation it would retry forever.
 */
export function deterministicStoreFailure(
  tool: string,
  phase: StorePhase,
  attempt: number,
  error: unknown,
): { observation: ToolErrorObservation; facts: ToolFailureFacts } | undefined {
  const storeCode = error instanceof IdempotencyStoreError ? error.code : undefined;
  const deterministic =
    (storeCode !== undefined && DETERMINISTIC_STORE_CODES.has(storeCode)) || error instanceof RangeError;
  if (!deterministic) return undefined;
  const reason = error instanceof Error ? error.message : String(error);
  const notJson = storeCode === 'NOT_JSON' || error instanceof RangeError;
  if (phase === 'claim') {
    return {
      observation: {
        status: 'error',
        code: notJson ? TOOL_ERROR_CODES.INVALID_ARGUMENTS : TOOL_ERROR_CODES.INTERNAL,
        message: notJson
          ? `The arguments of "${tool}" cannot be recorded for its idempotency key: ${reason}`
          : `The idempotency key of this call of "${tool}" cannot be used: ${reason}`,
        hint: notJson
          ? 'Send plain JSON arguments (well-formed text, finite numbers, shallow nesting) and call again.'
          : 'Do not repeat this call; an operator has to look at the engine configuration.',
        retryable: false,
        attempts: attempt,
      },
      facts: { mayHaveHadEffect: false },
    };
  }
  return {
    observation: {
      status: 'error',
      code: notJson ? TOOL_ERROR_CODES.INVALID_OUTPUT : TOOL_ERROR_CODES.INTERNAL,
      message: `Tool "${tool}" ran, but its result cannot be recorded: ${reason}`,
      hint: 'This is a fault of the tool, not of your call. Do not repeat the call; check whether it took effect and tell the user.',
      retryable: false,
      attempts: attempt,
    },
    facts: { mayHaveHadEffect: true },
  };
}

/**
 * The retryable failure of a check that could not read its store (the audit store for an approval, the grant store
 * for a run's authority): nothing ran, and the attempt is retried after the tool's own backoff, until the last.
 */
export function checkStoreUnavailable(
  call: { tool: { contract: { name: string } }; attempt: number; retry: ToolRetrySettings },
  what: string,
  cause: unknown,
): ReturnType<typeof toolFailure> {
  const { attempt, retry } = call;
  const lastAttempt = attempt >= retry.maximumAttempts;
  return toolFailure(
    {
      status: 'error',
      code: TOOL_ERROR_CODES.UNAVAILABLE,
      message: `The ${what} of "${call.tool.contract.name}": ${cause instanceof Error ? cause.message : String(cause)}`,
      hint: 'Try again later.',
      retryable: true,
      attempts: attempt,
    },
    { mayHaveHadEffect: false },
    lastAttempt ? undefined : Math.min(retry.maxDelayMs, retry.initialDelayMs * 2 ** (attempt - 1)),
  );
}
