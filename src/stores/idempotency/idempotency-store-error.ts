import { DurableToolsError } from '../../contract/durable-tools-error';

/** Codes of {@link IdempotencyStoreError}. */
export type IdempotencyStoreErrorCode =
  /** The token no longer owns an in-progress record: the key was taken over, released, finished or reaped. */
  | 'LEASE_LOST'
  /** The key is not a non-empty string of at most {@link MAX_IDEMPOTENCY_KEY_LENGTH} characters. */
  | 'INVALID_KEY'
  /** Another argument (fingerprint, owner, lease, token, failure) is malformed. */
  | 'INVALID_ARGUMENT'
  /** The store configuration (options or environment) is invalid. */
  | 'INVALID_CONFIG'
  /** The backend failed or could not be reached (including lock timeouts); the call may be retried. */
  | 'STORE_UNAVAILABLE'
  /** The store was closed. */
  | 'STORE_CLOSED'
  /** A value to fingerprint or to store is not JSON (function, bigint, NaN, cycle, class instance, ...). */
  | 'NOT_JSON';

/** Longest idempotency key a store accepts, in UTF-16 code units. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 2048;

/**
 * A failure of the idempotency store or of a value handed to it. `LEASE_LOST` is the fencing error: the
 * caller's token was superseded and its write was refused. `STORE_UNAVAILABLE` is transient; the others are
 * programming or configuration errors.
 */
export class IdempotencyStoreError extends DurableToolsError<IdempotencyStoreErrorCode> {
  override readonly name = 'IdempotencyStoreError';
}

/** Whether `error` is the store's fencing error: the caller's token no longer owns the key. */
export function isLeaseLostError(error: unknown): boolean {
  return error instanceof IdempotencyStoreError && error.code === 'LEASE_LOST';
}
