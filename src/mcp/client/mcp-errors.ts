import {
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  type CallToolResult,
} from '@modelcontextprotocol/client';
import { PermanentToolError, RateLimitedToolError, TransientToolError } from '../../failures/tool-errors';
import { oauthToolError } from './mcp-oauth-tool-errors';
import { isBrokenStream } from './mcp-reissue';

/** How much of a server's error text reaches the model. */
export const MCP_ERROR_TEXT_MAX_CHARS = 2_000;

/**
 * Turns a `tools/call` result with `isError: true` into a permanent tool error whose message is the server's
 * own text (what the tool said went wrong, cut to {@link MCP_ERROR_TEXT_MAX_CHARS}). On an `McpServer` this is
 * also how an unknown tool and arguments the server refuses come back.
 */
export function toolErrorFromResult(server: string, tool: string, result: CallToolResult): PermanentToolError {
  const text = result.content
    .map((part) => (part.type === 'text' ? part.text : `[${part.type}]`))
    .join('\n')
    .trim();
  const message = text.length > 0 ? text : `MCP tool "${tool}" of server "${server}" reported an error without text.`;
  return new PermanentToolError(clip(message), {
    code: /\bnot found\b|unknown tool/i.test(message) ? 'NOT_FOUND' : 'INTERNAL',
    hint: `This is the error text of MCP server "${server}". Read it: fix the arguments, or use another tool. Do not repeat the same call.`,
    mayHaveHadEffect: true,
  });
}

/**
 * Classifies what `client.callTool` threw (MCP SDK v2 errors: `SdkError` for what happened locally, `ProtocolError`
 * for a JSON-RPC error answer, `SdkHttpError` for an HTTP status):
 * - connection closed (the server died or the transport dropped), a send that failed after it started, an HTTP
 *   stream that broke before its answer (once the re-issues with the same key, if any, are spent): transient, and
 *   the request may have run;
 * - request timeout: transient (`TIMEOUT`), may have run; an *aborted* call is the activity's cancellation and is
 *   rethrown as it is;
 * - invalid params / method not found / invalid request / parse error: permanent, nothing ran;
 * - internal error and other JSON-RPC errors: permanent, with the server's message;
 * - Streamable HTTP status errors: 401/403 permanent `PERMISSION_DENIED`, 404 (session gone), 408, 429, 5xx transient;
 * - OAuth failures of a protected server (see `oauthToolError`): 403 `insufficient_scope` permanent
 *   `MCP_INSUFFICIENT_SCOPE`, an unreachable authorization server transient, a wrong configuration permanent;
 * - anything else is left to the engine's `classify` (network error codes, fetch failures, …).
 */
export function classifyMcpCallError(server: string, tool: string, error: unknown, aborted: boolean): unknown {
  if (aborted) return error;
  const oauth = oauthToolError(server, error, tool);
  if (oauth) return oauth;
  const where = `MCP server "${server}" (tool "${tool}")`;
  if (error instanceof SdkHttpError) return classifyHttpStatus(where, error);
  if (isBrokenStream(error)) {
    return new TransientToolError(`The connection to ${where} closed during the call: ${(error as Error).message}`, {
      code: 'UNAVAILABLE',
      mayHaveHadEffect: true,
      cause: error,
    });
  }
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
    return new TransientToolError(`${where} did not answer in time: ${error.message}`, {
      code: 'TIMEOUT',
      mayHaveHadEffect: true,
      cause: error,
    });
  }
  if (error instanceof ProtocolError) {
    switch (error.code) {
      case ProtocolErrorCode.InvalidParams:
      case ProtocolErrorCode.InvalidRequest:
      case ProtocolErrorCode.ParseError:
        return new PermanentToolError(clip(`${where} refused the call: ${error.message}`), {
          code: /not found|unknown tool/i.test(error.message) ? 'NOT_FOUND' : 'INVALID_ARGUMENTS',
          hint: 'Check the tool name and the arguments against the tool description; do not repeat the same call.',
          cause: error,
        });
      case ProtocolErrorCode.MethodNotFound:
        return new PermanentToolError(`${where} does not support tools/call: ${error.message}`, {
          code: 'NOT_FOUND',
          cause: error,
        });
      default:
        return new PermanentToolError(clip(`${where} failed (JSON-RPC ${error.code}): ${error.message}`), {
          code: error.code === ProtocolErrorCode.UrlElicitationRequired ? 'PERMISSION_DENIED' : 'INTERNAL',
          hint: 'The server reported an error it will report again; do not repeat the same call.',
          mayHaveHadEffect: true,
          cause: error,
        });
    }
  }
  return error;
}

function classifyHttpStatus(where: string, error: SdkHttpError): Error {
  const status = error.status;
  if (status === 401 || status === 403) {
    return new PermanentToolError(`${where} refused our credentials (HTTP ${status}).`, {
      code: 'PERMISSION_DENIED',
      hint: 'The server needs other credentials; an operator must fix the configuration.',
      cause: error,
    });
  }
  if (status === 429) {
    return new RateLimitedToolError(`${where} asked us to slow down (HTTP 429).`, { cause: error });
  }
  if (status === 404 || status === 408 || status >= 500) {
    return new TransientToolError(`${where} answered HTTP ${status}: ${error.message}`, {
      code: 'UNAVAILABLE',
      mayHaveHadEffect: status >= 500,
      cause: error,
    });
  }
  return new PermanentToolError(clip(`${where} answered HTTP ${status}: ${error.message}`), {
    code: 'INTERNAL',
    cause: error,
  });
}

/**
 * A server that could not be reached (spawn failure, connection refused, handshake error): nothing was sent,
 * so the call may be retried whatever the tool's effect. An OAuth failure of the connection is classified by
 * `oauthToolError` instead (a wrong configuration is not retried).
 */
export function unreachableServerError(server: string, cause: unknown): Error {
  // The SDK wraps what failed during version negotiation ("Version negotiation probe failed: …"): look inside.
  const oauth = causeChain(cause)
    .map((error) => oauthToolError(server, error))
    .find((error) => error !== undefined);
  if (oauth) return oauth;
  return new TransientToolError(
    `MCP server "${server}" cannot be reached: ${cause instanceof Error ? cause.message : String(cause)}`,
    { code: 'UNAVAILABLE', mayHaveHadEffect: false, cause },
  );
}

/** An error and the errors it was caused by, outermost first (at most 5 deep). */
function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = error; current !== undefined && chain.length < 5;) {
    chain.push(current);
    current = typeof current === 'object' && current !== null ? (current as { cause?: unknown }).cause : undefined;
  }
  return chain;
}

function clip(text: string): string {
  return text.length <= MCP_ERROR_TEXT_MAX_CHARS ? text : `${text.slice(0, MCP_ERROR_TEXT_MAX_CHARS)}… (cut)`;
}
