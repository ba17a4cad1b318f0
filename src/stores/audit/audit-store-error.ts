import { DurableToolsError } from '../../contract/durable-tools-error';

/** Codes of {@link AuditStoreError}. */
export type AuditStoreErrorCode =
  /** The store configuration (options or environment) is invalid. */
  | 'INVALID_CONFIG'
  /** The backend failed or could not be reached; the call may be retried. */
  | 'STORE_UNAVAILABLE'
  /** The store was closed. */
  | 'STORE_CLOSED';

/**
 * A failure of an audit store or of its configuration. `STORE_UNAVAILABLE` is transient (the activity that
 * writes the record fails and Temporal retries it); the others are programming or configuration errors.
 */
export class AuditStoreError extends DurableToolsError<AuditStoreErrorCode> {
  override readonly name = 'AuditStoreError';
}
