import {
  ActivityCancellationType,
  patched,
  type ActivityOptions,
  type LocalActivityOptions,
} from '@temporalio/workflow';
import { TOOL_ACTIVITY_NON_RETRYABLE_TYPES } from '../contract/activity-protocol';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import {
  LOST_ATTEMPT_RETRY_INTERVAL_MS,
  SUMMARY_MAX_LENGTH,
  TOOL_ATTEMPT_HEADROOM,
  TOOL_HEARTBEAT_TIMEOUT_MS,
} from './agent-run-defaults';

/**
 * Options of a tool call scheduled as a regular activity. `redactedArguments` are the call's arguments with
 * their sensitive fields redacted: the activity's summary shows them.
 */
export function toolActivityOptions(
  entry: ToolCatalogEntry,
  redactedArguments: unknown,
  marks: SummaryMarks = {},
): ActivityOptions {
  return {
    summary: summarize(entry.name, redactedArguments, marks),
    startToCloseTimeout: entry.timeoutMs,
    ...heartbeatTimeout(entry),
    ...slotWait(entry),
    scheduleToCloseTimeout: entry.retry.totalDeadlineMs,
    // Wait for a cancelled call to really stop, so a compensation never races its forward call. A call
    // waiting for its callback runs nowhere and would never hear of the cancellation: it is only requested.
    cancellationType:
      entry.asyncJob?.completion === 'callback'
        ? ActivityCancellationType.TRY_CANCEL
        : ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: {
      // The wrapper enforces the tool's own maximum over the attempts that really ran it.
      maximumAttempts: entry.retry.maximumAttempts + TOOL_ATTEMPT_HEADROOM,
      // The wrapper's own failures carry the tool's backoff (nextRetryDelay); this is for a lost attempt.
      initialInterval: Math.min(entry.retry.initialDelayMs, LOST_ATTEMPT_RETRY_INTERVAL_MS),
      maximumInterval: entry.retry.maxDelayMs,
      backoffCoefficient: 2,
      // A tool missing on the worker fails at once instead of retrying.
      nonRetryableErrorTypes: [...TOOL_ACTIVITY_NON_RETRYABLE_TYPES],
    },
  };
}

/**
 * The `patched()` id of tools with limits (docs/limits.md): their attempts get the slot wait on top of the tool's
 * timeout, and a heartbeat timeout (a worker that dies while its call waits is noticed). Evaluated only for a
 * catalog entry with limits, which no history recorded before them has.
 */
export const TOOL_LIMITS_PATCH = 'durable-tools/tool-limits';

/** A tool with limits: its start-to-close timeout grants the slot wait beyond the tool's own timeout. */
function slotWait(entry: ToolCatalogEntry): Pick<ActivityOptions, 'startToCloseTimeout' | 'heartbeatTimeout'> {
  if (!entry.limits || entry.asyncJob?.completion === 'callback' || !patched(TOOL_LIMITS_PATCH)) return {};
  return {
    startToCloseTimeout: entry.timeoutMs + entry.limits.slotWaitMs,
    heartbeatTimeout: entry.longCall?.heartbeatTimeoutMs ?? TOOL_HEARTBEAT_TIMEOUT_MS,
  };
}

/** A long call's own heartbeat timeout; the engine's for other tools whose attempts are longer than it. */
function heartbeatTimeout(entry: ToolCatalogEntry): Pick<ActivityOptions, 'heartbeatTimeout'> {
  // A call waiting for its callback has no worker to heartbeat: its attempt timeout bounds the wait.
  if (entry.asyncJob?.completion === 'callback') return {};
  if (entry.longCall) return { heartbeatTimeout: entry.longCall.heartbeatTimeoutMs };
  return entry.timeoutMs > TOOL_HEARTBEAT_TIMEOUT_MS ? { heartbeatTimeout: TOOL_HEARTBEAT_TIMEOUT_MS } : {};
}

/**
 * Options of a read-only tool declared `execution: 'local'`: no heartbeat timeout (local activities cannot
 * heartbeat) and no attempt headroom (the attempt number of a local activity is exact: the wrapper does not
 * count executions through heartbeat details).
 */
export function localToolOptions(
  entry: ToolCatalogEntry,
  redactedArguments: unknown,
  marks: SummaryMarks = {},
): LocalActivityOptions {
  return {
    summary: summarize(entry.name, redactedArguments, marks),
    startToCloseTimeout: entry.timeoutMs,
    scheduleToCloseTimeout: entry.retry.totalDeadlineMs,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: {
      maximumAttempts: entry.retry.maximumAttempts,
      initialInterval: entry.retry.initialDelayMs,
      maximumInterval: entry.retry.maxDelayMs,
      backoffCoefficient: 2,
      nonRetryableErrorTypes: [...TOOL_ACTIVITY_NON_RETRYABLE_TYPES],
    },
  };
}

/** What the activity's summary says besides the call: `dryRun` prefixes it with `[dry run]`. */
export interface SummaryMarks {
  dryRun?: boolean;
}

/** The activity's summary: the tool and its (redacted) arguments on one line, within {@link SUMMARY_MAX_LENGTH}. */
function summarize(tool: string, args: unknown, marks: SummaryMarks): string {
  let text: string;
  try {
    text = typeof args === 'string' ? args : JSON.stringify(args ?? {});
  } catch {
    text = String(args);
  }
  const full = `${marks.dryRun ? '[dry run] ' : ''}${tool} ${text}`.replace(/\s+/g, ' ');
  return full.length > SUMMARY_MAX_LENGTH ? `${full.slice(0, SUMMARY_MAX_LENGTH - 1)}…` : full;
}
