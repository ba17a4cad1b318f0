/**
 * What a tool implementation receives besides its validated input.
 */
export interface ToolContext {
  /**
   * Stable for this tool call across retries, worker crashes, continue-as-new and a reset, and never another
   * run's, even one that reuses the workflow id (`${workflowId}/${firstExecutionRunId}/${stepId}`; see
   * docs/run-ownership.md). Forward it to the downstream system so a retry cannot repeat the effect.
   */
  idempotencyKey: string;
  /** The step number the workflow gave this call. */
  stepId: number;
  /**
   * The workflow id of the agent run (a workflow id may be reused by a later run: see `runKey`). Always set by
   * the engine; optional only so that a context built by hand in a test (with `runId`) still type-checks.
   */
  workflowId?: string;
  /**
   * The workflow id of the agent run, under its old name (not Temporal's run id): the same value as `workflowId`.
   * @deprecated Use workflowId.
   */
  runId: string;
  /**
   * The run that owns this call: `${workflowId}/${firstExecutionRunId}`, the same across continue-as-new and
   * a reset, new for every run started under a reused workflow id. Scope anything a tool keeps per run by it.
   * Always set by the engine (runs started before run-scoped keys: the workflow id); optional only so that a
   * context built by hand in a test still type-checks.
   */
  runKey?: string;
  /** Attempt number, starting at 1. */
  attempt: number;
  /**
   * Aborted when the activity is cancelled (run cancelled, timeout, worker shutting down) or when the call
   * lost its idempotency lease (reason: a `LeaseLostError`). Pass it to every request the tool makes.
   */
  signal: AbortSignal;
  /**
   * Throws `LeaseLostError` when this call no longer owns its idempotency key: the lease's local deadline
   * passed (the process was paused or starved) or another attempt took the key over. Synchronous, no I/O:
   * call it just before sending an effect (`withIdempotencyKey` and `idempotentFetch` do). The worker runs
   * the same check before every HTTP request the tool makes (global `fetch`, undici, `node:http(s)`); call it
   * yourself right before an effect on any other transport (gRPC, a database driver). A no-op for calls
   * without a key store lease (read-only tools, no store).
   */
  assertLease(): void;
  /**
   * Fencing token of this call's ownership of the key (a decimal integer that grows with every new owner),
   * when a key store is used. Send it downstream (`withIdempotencyKey` sets the `Fencing-Token` header): a
   * downstream that refuses a token lower than the highest it has seen for the key rejects a stale holder,
   * which is the only complete protection against a holder paused between its check and its send.
   */
  fencingToken?: string;
  /** Tells Temporal (and the idempotency lease) the tool is still alive. */
  heartbeat(details?: unknown): void;
  /**
   * The last checkpoint an earlier attempt of this call saved (`ctx.checkpoint(state)`), when a retry (after
   * a worker crash, a timeout, a transient error) runs the call again: continue from it instead of starting
   * over. Undefined on a first attempt, or when no attempt checkpointed.
   */
  resumeFrom?: unknown;
  /**
   * Saves the call's progress so a retried attempt resumes from it (`ctx.resumeFrom`). `state` must be JSON
   * of at most the tool's `longCall.maxCheckpointBytes` (default 16 KB), else this throws a
   * `CheckpointError`. Resolves once the checkpoint is recorded: in the worker's transcript store (durable
   * when the store is shared: SQLite or Postgres) and as the activity's heartbeat details (which reach the
   * server within the heartbeat throttle interval). Call it after each unit of work: work done after the
   * last checkpoint may be done again by the next attempt.
   *
   * For a tool declared `longCall.onCancel: 'finish-unit'`, a cancellation requested while a unit runs
   * makes this call save the checkpoint and then throw the cancellation, ending the call there.
   */
  checkpoint(state: unknown): Promise<void>;
  /**
   * Reports progress: `percent` from 0 to 100 and a short message. It shows in the activity's heartbeat
   * details in the web UI, in `getAgentRunState` (each running step's `progress`) and in `durable-tools run`.
   */
  progress(percent: number, message?: string): void;
  /**
   * Aborted when the call is cancelled, whatever `longCall.onCancel` says. For `'abort'` tools `signal`
   * aborts with it; a `'finish-unit'` tool may look at this between units.
   */
  cancellation: AbortSignal;
  /** Structured log of the activity, tagged with the run and step. */
  log: ToolLogger;
}

/** A minimal structured logger. */
export interface ToolLogger {
  debug(message: string, attributes?: Record<string, unknown>): void;
  info(message: string, attributes?: Record<string, unknown>): void;
  warn(message: string, attributes?: Record<string, unknown>): void;
  error(message: string, attributes?: Record<string, unknown>): void;
}
