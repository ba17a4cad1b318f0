/**
 * Checks of a tool declaration that `defineTool` runs at once, so a declaration that would break later
 * (every call failing, an activity silently not registered, a compensation that cannot work) is refused
 * at start-up with a {@link ToolDefinitionError} that names the fix.
 */
import type { Duration } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import type { JitterStrategy, ToolRetrySettings } from '../contract/tool-catalog-entry';
import { DEFAULT_TOOL_RETRY, DEFAULT_TOOL_TIMEOUT_MS, RESERVED_ACTIVITY_NAMES } from '../contract/tool-defaults';
import { ToolDefinitionError } from '../contract/tool-definition-error';

/** Jitter strategies a tool may ask for. */
export const JITTER_STRATEGIES: readonly JitterStrategy[] = ['full', 'decorrelated'];

/** Approval settings a tool may declare (besides a predicate function). */
export const APPROVAL_SETTINGS: readonly string[] = ['never', 'always'];

/** Keys of `retry` a tool may set. */
const RETRY_OPTION_KEYS = ['maximumAttempts', 'initialDelay', 'maxDelay', 'jitter', 'totalDeadline'] as const;

/**
 * Names no tool may take: the engine's own activities, and the members of `Object.prototype`
 * (`__proto__`, `constructor`, `toString`, …), which as keys of an activities object would be silently
 * not registered or shadow a built-in.
 */
export const RESERVED_TOOL_NAMES: ReadonlySet<string> = new Set([
  ...RESERVED_ACTIVITY_NAMES,
  ...Object.getOwnPropertyNames(Object.prototype),
]);

/** Refuses a reserved name. */
export function checkNotReserved(name: string): void {
  if (RESERVED_TOOL_NAMES.has(name)) {
    throw new ToolDefinitionError(
      `Tool name "${name}" is reserved (${(RESERVED_ACTIVITY_NAMES as readonly string[]).includes(name) ? 'an activity of the engine' : 'a member of Object.prototype'}): rename the tool, e.g. "${name.replace(/^_+|_+$/g, '') || 'tool'}_tool".`,
      'INVALID_NAME',
    );
  }
}

/** The retry options as resolved settings, every value checked. */
export function resolveRetry(name: string, options: Record<string, unknown> | undefined): ToolRetrySettings {
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw new ToolDefinitionError(`Tool "${name}": retry must be an object of retry options.`, 'INVALID_RETRY');
  }
  for (const key of Object.keys(options ?? {})) {
    if (!(RETRY_OPTION_KEYS as readonly string[]).includes(key)) {
      throw new ToolDefinitionError(
        `Tool "${name}": unknown retry option "${key}"; use ${RETRY_OPTION_KEYS.join(', ')}.`,
        'INVALID_RETRY',
      );
    }
  }
  const maximumAttempts = options?.['maximumAttempts'] ?? DEFAULT_TOOL_RETRY.maximumAttempts;
  if (typeof maximumAttempts !== 'number' || !Number.isInteger(maximumAttempts) || maximumAttempts < 1) {
    throw new ToolDefinitionError(
      `Tool "${name}": retry.maximumAttempts must be a finite integer >= 1 (got ${String(maximumAttempts)}); the engine never retries without limit.`,
      'INVALID_RETRY',
    );
  }
  const jitter = options?.['jitter'] ?? DEFAULT_TOOL_RETRY.jitter;
  if (!JITTER_STRATEGIES.includes(jitter as JitterStrategy)) {
    throw new ToolDefinitionError(
      `Tool "${name}": retry.jitter must be ${JITTER_STRATEGIES.map((j) => `"${j}"`).join(' or ')} (got ${JSON.stringify(jitter)}).`,
      'INVALID_RETRY',
    );
  }
  const retry: ToolRetrySettings = {
    maximumAttempts,
    initialDelayMs: durationMs(
      name,
      'retry.initialDelay',
      options?.['initialDelay'],
      DEFAULT_TOOL_RETRY.initialDelayMs,
    ),
    maxDelayMs: durationMs(name, 'retry.maxDelay', options?.['maxDelay'], DEFAULT_TOOL_RETRY.maxDelayMs),
    jitter: jitter as JitterStrategy,
    totalDeadlineMs: durationMs(
      name,
      'retry.totalDeadline',
      options?.['totalDeadline'],
      DEFAULT_TOOL_RETRY.totalDeadlineMs,
    ),
  };
  if (retry.maxDelayMs < retry.initialDelayMs) {
    throw new ToolDefinitionError(
      `Tool "${name}": retry.maxDelay (${retry.maxDelayMs} ms) must be at least retry.initialDelay (${retry.initialDelayMs} ms).`,
      'INVALID_RETRY',
    );
  }
  return retry;
}

/** The start-to-close timeout of one attempt, checked. */
export function resolveTimeout(name: string, timeout: unknown): number {
  return durationMs(name, 'timeout', timeout, DEFAULT_TOOL_TIMEOUT_MS);
}

/**
 * A duration option in milliseconds: a Temporal duration (`'2s'`, `500`) that is finite and positive,
 * or the default when absent.
 */
export function durationMs(name: string, option: string, value: unknown, fallbackMs: number): number {
  if (value === undefined) return fallbackMs;
  let ms: number | undefined;
  try {
    ms = typeof value === 'number' || typeof value === 'string' ? msToNumber(value as Duration) : undefined;
  } catch {
    ms = undefined;
  }
  if (ms === undefined || !Number.isFinite(ms) || ms <= 0) {
    throw new ToolDefinitionError(
      `Tool "${name}": ${option} must be a finite, positive duration such as "30s" or 500 (got ${describe(value)}); leave it out for the default (${fallbackMs} ms).`,
      'INVALID_RETRY',
    );
  }
  return ms;
}

/** Refuses an approval setting other than `'never'`, `'always'` or a predicate function. */
export function checkApproval(name: string, approval: unknown): void {
  if (approval === undefined || typeof approval === 'function' || APPROVAL_SETTINGS.includes(approval as string))
    return;
  throw new ToolDefinitionError(
    `Tool "${name}": approval must be "never", "always" or a function deciding per call (got ${describe(approval)}).`,
    'INVALID_OPTION',
  );
}

/**
 * Refuses an `idempotent` flag that is not a boolean (a string "yes" would silently mean false), and a tool
 * with effects that does not say (read-only tools default to `true`; for the others no default is safe).
 */
export function checkIdempotent(name: string, idempotent: unknown, effect: unknown): void {
  if (idempotent === undefined && effect !== 'read-only') {
    throw new ToolDefinitionError(
      `Tool "${name}" has effects ("${String(effect)}") and must say whether it is idempotent: true when its downstream deduplicates by ctx.idempotencyKey (the engine may then run a call again after a crash), false when it does not (such a call ends OUTCOME_UNKNOWN instead of risking a second effect).`,
      'MISSING_IDEMPOTENT',
    );
  }
  if (idempotent === undefined || typeof idempotent === 'boolean') return;
  throw new ToolDefinitionError(
    `Tool "${name}": idempotent must be true or false (got ${describe(idempotent)}).`,
    'INVALID_OPTION',
  );
}

/** Refuses a tool that names itself as its undo tool. */
export function checkUndoIsAnotherTool(name: string, undo: unknown): void {
  if (undo === undefined) return;
  if (typeof undo !== 'string' || undo.length === 0) {
    throw new ToolDefinitionError(`Tool "${name}": undo must be the name of another tool.`, 'INVALID_UNDO');
  }
  if (undo === name) {
    throw new ToolDefinitionError(
      `Tool "${name}" names itself as its undo tool: declare a separate tool that reverses its effect (e.g. "cancel_${name}").`,
      'INVALID_UNDO',
    );
  }
}

function describe(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'function') return 'a function';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
