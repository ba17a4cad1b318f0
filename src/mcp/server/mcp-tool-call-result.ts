import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpToolCallResult } from '../../workflows/mcp-tool-call';

/** The text an MCP client sees for a durable tool call's outcome. */
export function callToolResultOf(result: McpToolCallResult, withStructuredContent: boolean): CallToolResult {
  const { observation } = result;
  const _meta = {
    'io.durable-tools/attempts': result.attempts,
    'io.durable-tools/idempotency-key': result.idempotencyKey,
  };
  if (observation.status === 'error') {
    return {
      isError: true,
      content: [{ type: 'text', text: `${observation.code}: ${observation.message}\nHint: ${observation.hint}` }],
      _meta: { ..._meta, 'io.durable-tools/error': observation },
    };
  }
  const output = observation.output;
  const structured = withStructuredContent && isPlainObject(output);
  return {
    content: [{ type: 'text', text: typeof output === 'string' ? output : JSON.stringify(output) }],
    ...(structured ? { structuredContent: output } : {}),
    _meta: { ..._meta, ...(observation.replayed ? { 'io.durable-tools/replayed': true } : {}) },
  };
}

/** The result of a call whose workflow did not complete (cancelled, terminated, failed). */
export function callToolErrorOf(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A successful result carrying `value` both as JSON text and as structured content (the server's own tools). */
export function structuredResultOf(value: object): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(value) }],
    structuredContent: value as Record<string, unknown>,
  };
}
