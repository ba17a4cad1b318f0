import { DurableToolsError } from '../../contract/durable-tools-error';

/** Codes of {@link StreamStoreError}. */
export type StreamStoreErrorCode =
  /** The store configuration (options or environment) is invalid. */
  | 'INVALID_CONFIG'
  /** The backend failed or could not be reached. */
  | 'STORE_UNAVAILABLE'
  /** The store was closed. */
  | 'STORE_CLOSED';

/** A failure of a stream store or of its configuration. */
export class StreamStoreError extends DurableToolsError<StreamStoreErrorCode> {
  override readonly name = 'StreamStoreError';
}
