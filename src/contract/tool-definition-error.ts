import { DurableToolsError } from './durable-tools-error';

/** Codes of {@link ToolDefinitionError}. */
export type ToolDefinitionErrorCode =
  | 'INVALID_NAME'
  | 'MISSING_DESCRIPTION'
  | 'INVALID_SCHEMA'
  | 'INVALID_EFFECT'
  | 'MISSING_UNDO'
  /** A compensable or irreversible tool does not say whether it is `idempotent` (read-only tools default to true). */
  | 'MISSING_IDEMPOTENT'
  | 'UNKNOWN_UNDO'
  | 'INVALID_RETRY'
  /** An option has a value outside its allowed set (`approval`, `idempotent`, ...). */
  | 'INVALID_OPTION'
  /** The undo tool cannot undo: the tool itself, or a read-only tool. */
  | 'INVALID_UNDO'
  | 'MISSING_IMPLEMENTATION'
  | 'DUPLICATE_TOOL'
  | 'INVALID_BUDGET'
  /** `argumentGuard` names an unknown limit or a value out of range. */
  | 'INVALID_ARGUMENT_GUARD'
  /** `concurrency`, `rateLimit` or `breaker` is malformed, or declared where a call cannot wait (a local tool). */
  | 'INVALID_LIMITS'
  /** `cache` on a tool with effects, or a cache without a positive `ttl` (docs/tools.md, "Cached reads"). */
  | 'INVALID_CACHE';

/**
 * A tool was declared or registered inconsistently. Raised at start-up, never during a run.
 */
export class ToolDefinitionError extends DurableToolsError<ToolDefinitionErrorCode> {
  override readonly name = 'ToolDefinitionError';
}
