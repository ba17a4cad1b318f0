/**
 * Per-tool limits as the catalog carries them: concurrency and rate across every worker of the task queue, and
 * the shared backoff (a circuit breaker per tool and key). Pure data: the key functions stay on the worker.
 */

/** The resolved limits of a tool (`defineTool({ concurrency, rateLimit, breaker })`), in the catalog entry. */
export interface ToolLimitSettings {
  /** At most this many calls of the tool (per key) run at once, across workers. */
  concurrency?: number;
  /** At most `limit` calls of the tool (per key) start in any window of `periodMs`. */
  rate?: { limit: number; periodMs: number };
  /** Whether the limits are per key (a function of the validated arguments) rather than per tool. */
  keyed: boolean;
  /** Whether a 429 or a storm of 503s pauses every pending call of the tool (and key), with half-open probing. */
  breaker: boolean;
  /**
   * How long one attempt may wait for its slot before the tool runs: the attempt's start-to-close timeout is the
   * tool's timeout plus this, so the wait never eats into the tool's own time. A call that waits longer defers
   * (a retry that does not count as an execution) and waits again.
   */
  slotWaitMs: number;
}

/** Defaults and bounds of the per-tool limits. */
export const TOOL_LIMIT_DEFAULTS = {
  /** Longest wait for a slot inside one attempt (see {@link ToolLimitSettings.slotWaitMs}). */
  slotWaitMs: 60_000,
  /** Lease of a held slot: a slot whose holder stopped renewing it (a killed worker) is free again after this. */
  slotLeaseMs: 30_000,
  /** A waiting call not seen for this long (its worker died) loses its place in line. */
  waiterStaleMs: 5_000,
  /** Consecutive overload failures (503, unreachable) of a tool and key that open its breaker. */
  breakerFailureThreshold: 5,
  /** First pause of a breaker opened by failures without a Retry-After; doubled while probes fail. */
  breakerBaseOpenMs: 1_000,
  /** Longest pause of a breaker opened without a Retry-After. */
  breakerMaxOpenMs: 60_000,
  /** Longest pause a Retry-After may ask for (longer ones are capped). */
  breakerMaxRetryAfterMs: 3_600_000,
  /** Longest key (characters); longer keys are hashed. */
  maxKeyChars: 200,
} as const;

/** Why a call is waiting before its tool runs. */
export type ToolWaitReason =
  /** Every slot of the tool (and key) is held. */
  | 'concurrency'
  /** The tool's (and key's) rate limit is spent for now. */
  | 'rate'
  /** The breaker is open: the downstream asked to wait (Retry-After) or kept failing. */
  | 'paused'
  /** The breaker is half-open: one call probes the downstream, the others wait for its answer. */
  | 'probing'
  /** Calls that came earlier are waiting for the same slots. */
  | 'queued';

/** What a waiting call shows in its heartbeat details (read by `durable-tools show` and the Temporal UI). */
export interface ToolWaiting {
  reason: ToolWaitReason;
  /** When the call started waiting (ISO 8601). */
  since: string;
  /** The limit's key, when the tool declares one. */
  key?: string;
  /** Calls ahead of this one in line (across workers). */
  ahead?: number;
  /** Until when the breaker pauses the calls (ISO 8601), when `reason` is `paused`. */
  until?: string;
  /** One line for people: `waiting for a slot of send_email (5 of 5 running)`. */
  message: string;
}

/**
 * Until when a call counts against its rate limit: a period after it ended, or after a period past its grant when it
 * runs longer. So any window of a period holds at most the limit of calls that were running in it — whenever their
 * requests reached the downstream between their grant and their end, whatever the delays on the way. The cost: a
 * call occupies its place for its duration plus the period (`perSecond: 20` with 100 ms calls runs ~18 per second).
 */
export function rateCountsUntil(rate: { periodMs: number }, grantedAt: number, endedAt: number): number {
  return Math.min(endedAt, grantedAt + rate.periodMs) + rate.periodMs;
}
