/**
 * The long-call declaration of a tool: how long it may run in all, how often it must show it is alive, and
 * what a cancellation means to it. Pure data once resolved (the catalog carries it to the workflow).
 */
import type { Duration } from '@temporalio/common';
import { IDEMPOTENCY_DEFAULTS } from '../stores/idempotency/idempotency-defaults';
import { durationMs } from './tool-declaration-checks';
import { ToolDefinitionError } from '../contract/tool-definition-error';
import type { LongCallCancellation, ToolLongCallSettings } from '../contract/tool-catalog-entry';

/** Long-call options a tool may declare (`defineTool({ longCall: { ... } })`). */
export interface ToolLongCallOptions {
  /**
   * How long the call may be silent: a worker that died is noticed after this, and the call retried on another
   * worker from its last checkpoint (default 30 s). The wrapper heartbeats for the tool while it runs.
   */
  heartbeatTimeout?: Duration;
  /** Total time for all attempts together, and the default timeout of one attempt (default 1 h). */
  deadline?: Duration;
  /**
   * `'abort'` (default): a cancellation aborts `ctx.signal` at once. `'finish-unit'`: the current unit of work
   * finishes; the tool's next `ctx.checkpoint()` saves and then ends the call as cancelled.
   */
  onCancel?: LongCallCancellation;
  /** Largest checkpoint, as JSON bytes (default 16 KB; at most 256 KB): checkpoints travel as heartbeat details. */
  maxCheckpointBytes?: number;
  /**
   * How long the call's result is kept (e.g. `'30d'`, at most 10 years): its idempotency record (the stored
   * result or failure, replayed to a repeated call), its claim-check outputs and its checkpoint; the reapers
   * delete them after. Default: each store's own retention (24 h for the record, 7 days for payloads).
   */
  resultRetention?: Duration;
}

/** Defaults and bounds of the long-call settings. */
export const LONG_CALL_DEFAULTS = {
  heartbeatTimeoutMs: 30_000,
  deadlineMs: 3_600_000,
  onCancel: 'abort',
  maxCheckpointBytes: 16 * 1024,
  /** Heartbeat details share the 2 MB payload limit with everything else an activity reports. */
  maxCheckpointBytesLimit: 256 * 1024,
  /** Longest `resultRetention`: the key stores' `IDEMPOTENCY_DEFAULTS.maxRecordRetentionMs` (10 years). */
  maxResultRetentionMs: IDEMPOTENCY_DEFAULTS.maxRecordRetentionMs,
} as const;

/** Largest checkpoint of a tool that declares no `longCall` (its checkpoints are heartbeat details too). */
export const DEFAULT_MAX_CHECKPOINT_BYTES = LONG_CALL_DEFAULTS.maxCheckpointBytes;

const LONG_CALL_KEYS = ['heartbeatTimeout', 'deadline', 'onCancel', 'maxCheckpointBytes', 'resultRetention'] as const;

/** The long-call options as settings, every value checked; undefined when the tool declares none. */
export function resolveLongCall(name: string, options: unknown): ToolLongCallSettings | undefined {
  if (options === undefined) return undefined;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new ToolDefinitionError(`Tool "${name}": longCall must be an object of long-call options.`, 'INVALID_OPTION');
  }
  const given = options as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (!(LONG_CALL_KEYS as readonly string[]).includes(key)) {
      throw new ToolDefinitionError(
        `Tool "${name}": unknown longCall option "${key}"; use ${LONG_CALL_KEYS.join(', ')}.`,
        'INVALID_OPTION',
      );
    }
  }
  const heartbeatTimeoutMs = durationMs(
    name,
    'longCall.heartbeatTimeout',
    given['heartbeatTimeout'],
    LONG_CALL_DEFAULTS.heartbeatTimeoutMs,
  );
  const deadlineMs = durationMs(name, 'longCall.deadline', given['deadline'], LONG_CALL_DEFAULTS.deadlineMs);
  if (heartbeatTimeoutMs >= deadlineMs) {
    throw new ToolDefinitionError(
      `Tool "${name}": longCall.heartbeatTimeout (${heartbeatTimeoutMs} ms) must be shorter than longCall.deadline (${deadlineMs} ms).`,
      'INVALID_OPTION',
    );
  }
  const onCancel = given['onCancel'] ?? LONG_CALL_DEFAULTS.onCancel;
  if (onCancel !== 'abort' && onCancel !== 'finish-unit') {
    throw new ToolDefinitionError(
      `Tool "${name}": longCall.onCancel must be "abort" or "finish-unit" (got ${JSON.stringify(onCancel)}).`,
      'INVALID_OPTION',
    );
  }
  const resultRetentionMs = resultRetention(name, given['resultRetention']);
  return {
    heartbeatTimeoutMs,
    deadlineMs,
    onCancel,
    maxCheckpointBytes: checkpointBytes(name, given),
    ...(resultRetentionMs === undefined ? {} : { resultRetentionMs }),
  };
}

function resultRetention(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const ms = durationMs(name, 'longCall.resultRetention', value, IDEMPOTENCY_DEFAULTS.retentionMs);
  if (ms > LONG_CALL_DEFAULTS.maxResultRetentionMs) {
    throw new ToolDefinitionError(
      `Tool "${name}": longCall.resultRetention must be at most 10 years (${LONG_CALL_DEFAULTS.maxResultRetentionMs} ms; got ${ms} ms).`,
      'INVALID_OPTION',
    );
  }
  return Math.ceil(ms);
}

function checkpointBytes(name: string, given: Record<string, unknown>): number {
  const value = given['maxCheckpointBytes'] ?? LONG_CALL_DEFAULTS.maxCheckpointBytes;
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < 1 ||
    value > LONG_CALL_DEFAULTS.maxCheckpointBytesLimit
  ) {
    throw new ToolDefinitionError(
      `Tool "${name}": longCall.maxCheckpointBytes must be an integer from 1 to ${LONG_CALL_DEFAULTS.maxCheckpointBytesLimit} (got ${JSON.stringify(value)}).`,
      'INVALID_OPTION',
    );
  }
  return value;
}
