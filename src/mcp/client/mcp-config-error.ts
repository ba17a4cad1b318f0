import { DurableToolsError } from '../../contract/durable-tools-error';

/** Codes of {@link McpConfigError}. */
export type McpConfigErrorCode = 'INVALID_CONFIG' | 'UNREADABLE' | 'NAME_COLLISION';

/** A configuration of MCP servers that cannot be used, with a fixed `code`. */
export class McpConfigError extends DurableToolsError<McpConfigErrorCode> {
  override readonly name = 'McpConfigError';
  constructor(message: string, code: McpConfigErrorCode, options: { cause?: unknown } = {}) {
    super(message, code, { cause: options.cause });
  }
}
