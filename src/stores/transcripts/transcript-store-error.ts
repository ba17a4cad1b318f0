import { DurableToolsError } from '../../contract/durable-tools-error';

/** Codes of {@link TranscriptStoreError}. */
export type TranscriptStoreErrorCode =
  /** The store configuration (options or environment) is invalid. */
  | 'INVALID_CONFIG'
  /** The backend failed or could not be reached; the call may be retried. */
  | 'STORE_UNAVAILABLE'
  /** The store was closed. */
  | 'STORE_CLOSED';

/**
 * A failure of a transcript store or of its configuration. `STORE_UNAVAILABLE` is transient (the model
 * activity fails and Temporal retries it); the others are programming or configuration errors.
 */
export class TranscriptStoreError extends DurableToolsError<TranscriptStoreErrorCode> {
  override readonly name = 'TranscriptStoreError';
}
