import { ApplicationFailure } from '@temporalio/common';
import type { ToolCatalogEntry } from '../tools/tool-catalog-entry';
import { TOOL_ERROR_CODES } from '../tools/tool-error-code';
import { toolFailure } from './tool-failure';

/** What the wrapper knows when a tool implementation throws. */
export interface ThrownErrorContext {
  tool: ToolCatalogEntry;
  attempt: number;
}

/**
 * Decides what a thrown error becomes: a retryable failure with an engine-chosen delay, or a permanent one.
 */
export function failureForThrownError(error: unknown, context: ThrownErrorContext): ApplicationFailure {
  if (error instanceof ApplicationFailure) return error;
  const message = error instanceof Error ? error.message : String(error);
  const lastAttempt = context.attempt >= context.tool.retry.maximumAttempts;
  return toolFailure(
    {
      status: 'error',
      code: TOOL_ERROR_CODES.INTERNAL,
      message: `Tool "${context.tool.name}" failed: ${message}`,
      hint: 'Try again later or use another tool.',
      retryable: true,
      attempts: context.attempt,
    },
    lastAttempt ? undefined : context.tool.retry.initialDelayMs,
  );
}
