/**
 * Dynamic config of the dev server the project starts (`npm run dev`, the demo, tests, benchmarks). Each
 * setting removes an artificial wait of the server's defaults, which are sized for a cluster sharing its
 * database between many hosts, not for one process on a laptop. Measured with `npm run bench:server`
 * (docs/operations.md, "The tuned local server" and "Settings for cluster operators").
 *
 * - `history.transferProcessorMaxPollRPS` (default 20): the transfer queue (where "dispatch this activity /
 *   workflow task to matching" waits) is read at most 20 times a second per shard, and each activity needs
 *   two reads: ~100 ms per sequential activity. Reads are triggered by new tasks, so a high cap costs nothing
 *   when idle.
 * - `history.timerProcessorMaxPollRPS` (default 20): the same cap for the timer queue (timers, retry
 *   backoffs, activity and workflow-task timeouts).
 * - `history.timerProcessorMaxTimeShift` (default 1 s): the timer queue's look-ahead; it puts a ~1 s floor under
 *   short timers and sub-second retry delays. At 10 ms, jittered sub-second delays are honoured.
 * - `history.visibilityProcessorMaxPollRPS` (default 20): how quickly list/count queries and search attributes
 *   reflect a change.
 * - `system.enableActivityEagerExecution` (default false): a workflow task that schedules an activity on its own
 *   task queue may get the activity back in the same response, skipping a round trip through matching.
 */
export const TUNED_DEV_SERVER_CONFIG = {
  'history.transferProcessorMaxPollRPS': 10_000,
  'history.timerProcessorMaxPollRPS': 10_000,
  'history.timerProcessorMaxTimeShift': '10ms',
  'history.visibilityProcessorMaxPollRPS': 10_000,
  'system.enableActivityEagerExecution': true,
} as const satisfies Readonly<Record<string, string | number | boolean>>;

/**
 * SQLite pragmas of a dev server that keeps its state in a file (`npm run dev`, the demo). WAL appends
 * commits to a log instead of rewriting pages under a rollback journal, and `synchronous=NORMAL` syncs that
 * log at checkpoints rather than at every commit: a killed or crashed server loses nothing, an operating
 * system crash or power cut may lose the last moments of history. That is the right trade for a local
 * development server; a production cluster uses its own database settings.
 */
export const TUNED_DEV_SERVER_SQLITE_PRAGMAS = {
  journal_mode: 'wal',
  synchronous: 'normal',
} as const satisfies Readonly<Record<string, string>>;
