import { TOOL_ERROR_CODES } from '../../contract/activity-protocol';
import { PermanentToolError, TransientToolError } from '../../failures/tool-errors';
import { McpInsufficientScopeError } from './mcp-oauth-fetch';
import { McpOAuthError } from './mcp-oauth-error';

/**
 * The tool error an OAuth failure of a protected server becomes, or undefined for any other error. Nothing reached
 * the server's tool in any of them (`mayHaveHadEffect: false`):
 * - 403 `insufficient_scope` → permanent `MCP_INSUFFICIENT_SCOPE` with the `missingScope`;
 * - the authorization server unreachable → transient `UNAVAILABLE`;
 * - any other OAuth failure (issuer mismatch, secret missing, token refused) → permanent `PERMISSION_DENIED`, whose
 *   message tells the operator what to fix: retrying cannot help.
 */
export function oauthToolError(server: string, error: unknown, tool?: string): Error | undefined {
  const call = tool === undefined ? '' : ` (tool "${tool}")`;
  if (error instanceof McpInsufficientScopeError) {
    const asked = error.scope ? `the scope ${error.scope}` : 'a scope it did not name';
    return new PermanentToolError(
      `MCP server "${server}"${call} refused the call: the worker's OAuth token lacks ${asked}${error.description ? ` (${error.description})` : ''}. Nothing ran.`,
      {
        code: TOOL_ERROR_CODES.MCP_INSUFFICIENT_SCOPE,
        missingScope: error.scope,
        mayHaveHadEffect: false,
        cause: error,
      },
    );
  }
  if (!(error instanceof McpOAuthError)) return undefined;
  if (error.transient) {
    return new TransientToolError(error.message, { code: 'UNAVAILABLE', mayHaveHadEffect: false, cause: error });
  }
  return new PermanentToolError(error.message, {
    code: 'PERMISSION_DENIED',
    hint: `The OAuth configuration of MCP server "${server}" is wrong (${error.code}); an operator must fix it. Do not retry; use another tool or tell the user.`,
    mayHaveHadEffect: false,
    cause: error,
  });
}
