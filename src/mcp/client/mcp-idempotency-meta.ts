/** The `_meta` key that carries a call's idempotency key to an MCP server (and to our own MCP server). */
export const MCP_IDEMPOTENCY_KEY_META = 'io.durable-tools/idempotency-key';

/** The `_meta` key that carries the fencing token of the call's key ownership, when the worker has a key store. */
export const MCP_FENCING_TOKEN_META = 'io.durable-tools/fencing-token';
