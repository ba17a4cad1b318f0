/**
 * The async-job declaration of a tool whose downstream works asynchronously (submit a job, get an id, poll it
 * or be called back). Pure data once resolved: the catalog carries it to the workflow.
 */
import type { Duration } from '@temporalio/common';
import { durationMs } from './tool-declaration-checks';
import { ToolDefinitionError } from '../contract/tool-definition-error';
import type { AsyncJobCompletion, ToolAsyncJobSettings } from '../contract/tool-catalog-entry';

/** Async-job options a tool declares (`defineAsyncJobTool({ asyncJob: { ... } })`). */
export interface ToolAsyncJobOptions {
  /** `'callback'`: the downstream calls back (see `completeJobCallback`); `'poll'`: the worker asks it. */
  completion: AsyncJobCompletion;
  /** Time for the whole call, submission to result, all attempts together (default 1 h). */
  deadline?: Duration;
  /** Polling only: first wait between two polls (default 1 s); later waits grow with decorrelated jitter. */
  pollInterval?: Duration;
  /** Polling only: longest wait between two polls (default 30 s). */
  maxPollInterval?: Duration;
  /**
   * True: the model may start the call in the background and fetch its result later with the built-in
   * `fetch_tool_result` (see docs/long-calls.md). Default false: the model's turn waits for the result.
   */
  fetchLater?: boolean;
}

/** Defaults of the async-job settings. */
export const ASYNC_JOB_DEFAULTS = {
  deadlineMs: 3_600_000,
  pollIntervalMs: 1_000,
  maxPollIntervalMs: 30_000,
} as const;

/** Longest grace between a polled job's deadline and Temporal's own timeout of the call. */
const POLL_DEADLINE_GRACE_MAX_MS = 60_000;

/**
 * The deadline Temporal enforces for the call (its attempt and schedule-to-close timeouts). A callback call has
 * no worker to notice its deadline, so Temporal's timeout is the deadline. A polled call's worker checks the
 * deadline between polls and ends the call with a `TIMEOUT` that is not retried; Temporal's timeout comes a grace
 * later (as long as the deadline, at most a minute), only as the backstop for an attempt that cannot report (a
 * dead or paused worker). Without that grace Temporal's timer, counted from the scheduling, would race the
 * worker's check, counted from the submission, and win whenever the machine is slow.
 */
export function temporalDeadlineMs(settings: ToolAsyncJobSettings): number {
  if (settings.completion !== 'poll') return settings.deadlineMs;
  return settings.deadlineMs + Math.min(settings.deadlineMs, POLL_DEADLINE_GRACE_MAX_MS);
}

const ASYNC_JOB_KEYS = ['completion', 'deadline', 'pollInterval', 'maxPollInterval', 'fetchLater'] as const;

/** The async-job options as settings, every value checked. */
export function resolveAsyncJob(name: string, options: unknown): ToolAsyncJobSettings {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new ToolDefinitionError(`Tool "${name}": asyncJob must be an object of async-job options.`, 'INVALID_OPTION');
  }
  const given = options as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (!(ASYNC_JOB_KEYS as readonly string[]).includes(key)) {
      throw new ToolDefinitionError(
        `Tool "${name}": unknown asyncJob option "${key}"; use ${ASYNC_JOB_KEYS.join(', ')}.`,
        'INVALID_OPTION',
      );
    }
  }
  const completion = given['completion'];
  if (completion !== 'callback' && completion !== 'poll') {
    throw new ToolDefinitionError(
      `Tool "${name}": asyncJob.completion must be "callback" or "poll" (got ${JSON.stringify(completion) ?? 'nothing'}).`,
      'INVALID_OPTION',
    );
  }
  if (completion === 'callback' && (given['pollInterval'] !== undefined || given['maxPollInterval'] !== undefined)) {
    throw new ToolDefinitionError(
      `Tool "${name}": asyncJob.pollInterval and maxPollInterval apply to completion "poll" only.`,
      'INVALID_OPTION',
    );
  }
  const deadlineMs = durationMs(name, 'asyncJob.deadline', given['deadline'], ASYNC_JOB_DEFAULTS.deadlineMs);
  const pollIntervalMs = durationMs(
    name,
    'asyncJob.pollInterval',
    given['pollInterval'],
    ASYNC_JOB_DEFAULTS.pollIntervalMs,
  );
  const maxPollIntervalMs = durationMs(
    name,
    'asyncJob.maxPollInterval',
    given['maxPollInterval'],
    Math.max(pollIntervalMs, ASYNC_JOB_DEFAULTS.maxPollIntervalMs),
  );
  if (pollIntervalMs < 1 || maxPollIntervalMs < pollIntervalMs || maxPollIntervalMs >= deadlineMs) {
    throw new ToolDefinitionError(
      `Tool "${name}": asyncJob needs 0 < pollInterval <= maxPollInterval < deadline (got ${pollIntervalMs}, ${maxPollIntervalMs}, ${deadlineMs} ms).`,
      'INVALID_OPTION',
    );
  }
  const fetchLater = given['fetchLater'] ?? false;
  if (typeof fetchLater !== 'boolean') {
    throw new ToolDefinitionError(`Tool "${name}": asyncJob.fetchLater must be a boolean.`, 'INVALID_OPTION');
  }
  return { completion, deadlineMs, pollIntervalMs, maxPollIntervalMs, fetchLater };
}
