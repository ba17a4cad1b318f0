/**
 * What a tool implementation receives besides its validated input.
 */
export interface ToolContext {
  /**
   * Stable for this tool call across retries, worker crashes and continue-as-new
   * (`${workflowId}/${stepId}`). Forward it to the downstream system so a retry cannot repeat the effect.
   */
  idempotencyKey: string;
  /** The step number the workflow gave this call. */
  stepId: number;
  /** The workflow id of the agent run. */
  runId: string;
  /** Attempt number, starting at 1. */
  attempt: number;
  /** Aborted when the activity is cancelled (run cancelled, timeout, worker shutting down). */
  signal: AbortSignal;
  /** Tells Temporal (and the idempotency lease) the tool is still alive. */
  heartbeat(details?: unknown): void;
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
