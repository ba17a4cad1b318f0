import { DurableToolsError } from '../contract/durable-tools-error';

/** Codes of {@link ReplayAgentRunsError}. */
export type ReplayAgentRunsErrorCode = 'INVALID_OPTIONS' | 'QUERY_REJECTED';

/** `replayAgentRuns` was asked for nothing or for contradicting things, or the server refused the query. */
export class ReplayAgentRunsError extends DurableToolsError<ReplayAgentRunsErrorCode> {
  override readonly name = 'ReplayAgentRunsError';
  constructor(message: string, code: ReplayAgentRunsErrorCode, options?: { cause?: unknown }) {
    super(message, code, options);
  }
}
