import { isGrpcServiceError, ServiceError } from '@temporalio/client';

/**
 * gRPC status codes of a read that may succeed when asked again: DEADLINE_EXCEEDED (4), RESOURCE_EXHAUSTED (8),
 * UNAVAILABLE (14). A server shedding load answers a long poll with these while the run itself goes on.
 */
const TRANSIENT_GRPC_CODES: ReadonlySet<number> = new Set([4, 8, 14]);

/** How long a result read keeps asking again through transient failures, and how it spaces its attempts. */
export const TRANSIENT_READ_RETRY = {
  /** Consecutive transient failures are retried for this long, then the last one is thrown. */
  budgetMs: 5 * 60_000,
  initialDelayMs: 200,
  maxDelayMs: 5_000,
} as const;

/**
 * Whether `error` is the client's `ServiceError` for a gRPC status worth asking again (the SDK's own retries,
 * which cover UNAVAILABLE and RESOURCE_EXHAUSTED for a few attempts, already gave up on it).
 */
export function isTransientServiceError(error: unknown): boolean {
  if (!(error instanceof ServiceError)) return false;
  const cause = error.cause;
  return isGrpcServiceError(cause) && TRANSIENT_GRPC_CODES.has(cause.code);
}

/**
 * Runs `read` (a result's long poll), asking again after a transient failure ({@link isTransientServiceError})
 * with a capped, jittered backoff, for at most `budgetMs` of consecutive failures; any other error, the last
 * transient one past the budget, or one after `signal` aborted, is thrown as it is.
 */
export async function retryTransientReads<T>(
  read: () => Promise<T>,
  options: {
    budgetMs?: number;
    signal?: AbortSignal;
    sleep?: (ms: number) => Promise<void>;
    now?: () => number;
  } = {},
): Promise<T> {
  const budgetMs = options.budgetMs ?? TRANSIENT_READ_RETRY.budgetMs;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const now = options.now ?? Date.now;
  let firstFailureAt: number | undefined;
  for (let attempt = 0; ; attempt++) {
    try {
      return await read();
    } catch (error) {
      if (!isTransientServiceError(error) || options.signal?.aborted) throw error;
      firstFailureAt ??= now();
      if (now() - firstFailureAt >= budgetMs) throw error;
      const cap = Math.min(TRANSIENT_READ_RETRY.maxDelayMs, TRANSIENT_READ_RETRY.initialDelayMs * 2 ** attempt);
      await sleep(cap / 2 + Math.random() * (cap / 2));
    }
  }
}
