import { DurableToolsError } from '../contract/durable-tools-error';

/** Codes of {@link TemporalClusterError}. */
export type TemporalClusterErrorCode = 'NOT_FOUND' | 'BUILD_FAILED' | 'SCHEMA_FAILED' | 'SERVER_FAILED';

/**
 * The local Temporal cluster (the server's services on PostgreSQL) could not be built, set up or started.
 * The message always says what to do next.
 */
export class TemporalClusterError extends DurableToolsError<TemporalClusterErrorCode> {
  override readonly name = 'TemporalClusterError';
}
