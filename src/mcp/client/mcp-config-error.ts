/** Codes of {@link McpConfigError}. */
export type McpConfigErrorCode = 'INVALID_CONFIG' | 'UNREADABLE' | 'NAME_COLLISION';

/** A configuration of MCP servers that cannot be used, with a fixed `code`. */
export class McpConfigError extends Error {
  override readonly name = 'McpConfigError';
  readonly code: McpConfigErrorCode;
  constructor(message: string, code: McpConfigErrorCode, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.code = code;
  }
}
