import { DurableToolsError } from '../contract/durable-tools-error';

/** Codes of {@link TemporalCliError}. */
export type TemporalCliErrorCode = 'NOT_FOUND' | 'BUILD_FAILED' | 'NOT_EXECUTABLE' | 'SERVER_FAILED';

/**
 * The Temporal CLI (which embeds the dev server) could not be found, built or started.
 * The message always says what to do next.
 */
export class TemporalCliError extends DurableToolsError<TemporalCliErrorCode> {
  override readonly name = 'TemporalCliError';
}
