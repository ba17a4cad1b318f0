import { ActivityCancellationType, type ActivityOptions } from '@temporalio/workflow';
import { MODEL_CALL_HEARTBEAT, MODEL_CALL_LIMITS } from '../contract/model-call-limits';
import { MODEL_ACTIVITY_NON_RETRYABLE_TYPES, TOOL_ACTIVITY_NON_RETRYABLE_TYPES } from '../contract/activity-protocol';

export { AGENT_RUN_DEFAULTS } from './run-limits';

/**
 * Temporal's own retry interval of the model and tool activities: 100 ms (1 s, and a tool's `initialDelay`,
 * until issue 23). Every failure these activities report carries its own delay (`nextRetryDelay`: Retry-After,
 * jittered backoff), so this interval only applies to an attempt that ended without an answer — a heartbeat or
 * attempt timeout, the worker died or hung — whose retry should start at once (`npm run bench:recovery`).
 */
export const LOST_ATTEMPT_RETRY_INTERVAL_MS = 100;

/** Activity options for the engine's own activities. */
export const ENGINE_ACTIVITY_OPTIONS: Readonly<Record<'describeTools' | 'callModel', ActivityOptions>> = {
  describeTools: { startToCloseTimeout: '30 seconds', retry: { maximumAttempts: 5 } },
  callModel: {
    // The activity gives up on a turn at its deadline; this only catches a worker that stopped answering.
    startToCloseTimeout: MODEL_CALL_LIMITS.turnTimeoutMs + MODEL_CALL_LIMITS.startToCloseMarginMs,
    // The activity heartbeats while the model thinks: a call on a worker that died is retried after this,
    // not after the whole start-to-close timeout.
    heartbeatTimeout: MODEL_CALL_HEARTBEAT.timeout,
    // The activity chooses each delay (Retry-After, provider reset headers, jittered backoff) and marks
    // permanent failures (context length, authentication, rejected requests) non-retryable itself.
    retry: {
      maximumAttempts: MODEL_CALL_LIMITS.maxAttempts,
      initialInterval: LOST_ATTEMPT_RETRY_INTERVAL_MS,
      nonRetryableErrorTypes: [...MODEL_ACTIVITY_NON_RETRYABLE_TYPES],
    },
  },
};

/**
 * Options of a compensation call: retried until it succeeds or fails permanently (the activity itself
 * decides each delay and stops on permanent errors), waiting for cancellation to finish.
 */
export const COMPENSATION_ACTIVITY_OPTIONS: Readonly<ActivityOptions> = {
  startToCloseTimeout: '1 minute',
  // No maximumAttempts: unlimited (the activity stops on permanent errors by throwing non-retryable).
  retry: {
    initialInterval: '1 second',
    maximumInterval: '1 minute',
    nonRetryableErrorTypes: [...TOOL_ACTIVITY_NON_RETRYABLE_TYPES],
  },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
};

/** Longest activity summary shown in the UI. */
export const SUMMARY_MAX_LENGTH = 120;

/**
 * Heartbeat timeout of a tool call: the wrapper heartbeats three times per period while a tool runs, so
 * a dead worker's call is retried after this (not after the whole start-to-close timeout) and a
 * cancellation reaches a running tool within it. 3 s (10 s until issue 23), so a step interrupted by a worker
 * SIGKILL goes on within seconds (`npm run bench:recovery`); a tool with effects then still waits for its key's
 * lease and takeover grace (docs/operations.md, "Recovery after a crash").
 */
export const TOOL_HEARTBEAT_TIMEOUT_MS = 3_000;

/**
 * Attempts Temporal allows a tool call beyond the tool's own `maximumAttempts`. Attempts that never ran the
 * tool do not count against the tool's own attempts (the wrapper counts the ones that did): an attempt lost
 * to a paused worker's still-open poll (it ends by timeout), or one that waits for another holder of the
 * key. This headroom lets a live worker get the call after a pause instead of the run failing.
 */
export const TOOL_ATTEMPT_HEADROOM = 10;
