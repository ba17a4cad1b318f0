import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { MCP_IDEMPOTENCY_KEY_META } from '../client/mcp-client-pool';

/** The longest idempotency key a `tools/call` may carry. */
export const MCP_IDEMPOTENCY_KEY_MAX_LENGTH = 1_000;

/**
 * Where a `tools/call` may carry its idempotency key, in order of precedence: SEP-3182's `params.idempotencyKey`,
 * `_meta.idempotencyKey` (what MCP clients send today), and ours, `_meta["io.durable-tools/idempotency-key"]`.
 * A call may name its key in several places only if they agree.
 */
export const MCP_IDEMPOTENCY_KEY_FIELDS = [
  'params.idempotencyKey',
  '_meta.idempotencyKey',
  `_meta["${MCP_IDEMPOTENCY_KEY_META}"]`,
] as const;

/** The parameters of a `tools/call`, as far as its idempotency key goes. */
export interface McpKeyedParams {
  idempotencyKey?: unknown;
  _meta?: Record<string, unknown> | undefined;
}

/**
 * The call's idempotency key, or undefined when it sends none.
 *
 * @throws McpError `InvalidParams` when a key is not a non-empty string of at most 1,000 characters, or when two
 *   places carry different keys: the call is refused, since running it without the key (or with either one) could
 *   repeat an effect the caller meant to run once.
 */
export function mcpIdempotencyKeyOf(params: McpKeyedParams): string | undefined {
  const given = [params.idempotencyKey, params._meta?.['idempotencyKey'], params._meta?.[MCP_IDEMPOTENCY_KEY_META]];
  let key: string | undefined;
  let from: string | undefined;
  given.forEach((value, index) => {
    if (value === undefined) return;
    const field = MCP_IDEMPOTENCY_KEY_FIELDS[index]!;
    if (typeof value !== 'string' || value.length === 0 || value.length > MCP_IDEMPOTENCY_KEY_MAX_LENGTH) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `The idempotency key in ${field} must be a non-empty string of at most ${MCP_IDEMPOTENCY_KEY_MAX_LENGTH} characters. Nothing was run.`,
      );
    }
    if (key !== undefined && value !== key) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Two different idempotency keys in one call (${from} and ${field}): send one key, or the same key in each place. Nothing was run.`,
      );
    }
    key ??= value;
    from ??= field;
  });
  return key;
}
