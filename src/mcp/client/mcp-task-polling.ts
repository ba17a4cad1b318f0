/**
 * How often a client polls `tasks/get` for an MCP task. Pure: no I/O, the random source injected.
 */

/** Bounds and growth of the `tasks/get` polling of an MCP task. */
export const MCP_TASK_POLL = {
  /** Used when the server suggests no `pollInterval`. */
  defaultIntervalMs: 1_000,
  /** A server's `pollInterval` below this is raised to it (a hostile `0` would be a busy loop). */
  minIntervalMs: 250,
  /** A server's `pollInterval` above this is lowered to it, so a finished task is noticed within a minute. */
  maxIntervalMs: 60_000,
  /** While the task's status and message do not change, each wait is this much longer than the last... */
  growth: 1.5,
  /** ...up to this (or the server's own interval, if longer). */
  growthCeilingMs: 10_000,
  /** Each wait is lengthened by a random share of up to this fraction (never shortened below the server's ask). */
  jitter: 0.2,
  /** Consecutive failed polls (connection lost, timeout, HTTP 5xx) an attempt waits through before it gives up. */
  maxConsecutiveFailures: 5,
} as const;

/** The server's suggested interval, bounded to [{@link MCP_TASK_POLL}.minIntervalMs, maxIntervalMs]. */
export function boundedPollInterval(serverIntervalMs: number | undefined): number {
  const asked =
    typeof serverIntervalMs === 'number' && Number.isFinite(serverIntervalMs)
      ? serverIntervalMs
      : MCP_TASK_POLL.defaultIntervalMs;
  return Math.min(MCP_TASK_POLL.maxIntervalMs, Math.max(MCP_TASK_POLL.minIntervalMs, asked));
}

/**
 * How long to wait before the next `tasks/get`: the server's `pollInterval` (bounded), grown by
 * {@link MCP_TASK_POLL}.growth for every poll that saw nothing new (up to the growth ceiling), plus up to 20%
 * jitter so many workers polling one server spread out. Never shorter than the bounded server interval.
 *
 * @param unchangedPolls polls in a row that saw the same status and message (0 after a change).
 * @param random uniform source in [0, 1).
 *
 * @example
 * ```ts
 * nextPollDelayMs(1_000, 0, () => 0); // 1000
 * nextPollDelayMs(1_000, 3, () => 0); // 3375
 * ```
 */
export function nextPollDelayMs(
  serverIntervalMs: number | undefined,
  unchangedPolls: number,
  random: () => number = Math.random,
): number {
  const base = boundedPollInterval(serverIntervalMs);
  const ceiling = Math.max(base, MCP_TASK_POLL.growthCeilingMs);
  const steps = Number.isFinite(unchangedPolls) && unchangedPolls > 0 ? Math.floor(unchangedPolls) : 0;
  const grown = Math.min(ceiling, base * MCP_TASK_POLL.growth ** steps);
  const share = Math.min(1, Math.max(0, random()));
  return Math.round(grown * (1 + MCP_TASK_POLL.jitter * share));
}
