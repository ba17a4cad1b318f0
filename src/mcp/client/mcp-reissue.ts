import { SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { DurableToolsError } from '../../contract/durable-tools-error';

/** How many times a call whose stream broke is sent again within one attempt (Temporal's retries come after). */
export const MCP_MAX_REISSUES = 3;

/**
 * The HTTP response stream of a request ended before its answer: the server (or a proxy, or the network) cut it.
 * Under MCP 2026-07-28 there is no resumability: the request is sent again, and the idempotency key in its `_meta`
 * is what keeps a server that deduplicates from running it twice.
 */
export class McpBrokenStreamError extends DurableToolsError<'MCP_STREAM_BROKEN'> {
  /** @param tool the tool whose `tools/call` lost its stream. */
  constructor(tool: string) {
    super(`the HTTP stream of the tools/call of "${tool}" ended before its answer`, 'MCP_STREAM_BROKEN');
  }
}

/**
 * Whether a request failed because its connection broke after it was sent (so it may have run, and re-issuing
 * with the same key is the recovery): a stream that ended without the answer, a fetch whose connection was reset
 * or closed (`TypeError: fetch failed`, as undici reports it), or the SDK's closed connection / failed send.
 */
export function isBrokenStream(error: unknown): boolean {
  if (error instanceof McpBrokenStreamError) return true;
  if (error instanceof SdkError)
    return error.code === SdkErrorCode.ConnectionClosed || error.code === SdkErrorCode.SendFailed;
  // By shape: undici's TypeError may come from another realm (a test sandbox), where instanceof Error fails.
  const { name, message } = (typeof error === 'object' && error !== null ? error : {}) as Partial<Error>;
  return (
    name === 'TypeError' && typeof message === 'string' && /fetch failed|terminated|other side closed/i.test(message)
  );
}

/** The wait before re-issue number `issue + 1`: 100 ms, 200 ms, 400 ms. */
export function reissueDelayMs(issue: number): number {
  return 100 * 2 ** (issue - 1);
}
