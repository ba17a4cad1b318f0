/**
 * Shapes crossing the wire between the agent-run workflow and tool activities. Types only.
 */

/** Input of every tool activity. */
export interface ToolActivityInput {
  /** The model's raw arguments: a JSON string or an object. Validated by the activity. */
  arguments: unknown;
  /** `${workflowId}/${stepId}`: the same for every attempt of this call. */
  idempotencyKey: string;
  stepId: number;
}

/** Result of a successful tool activity. */
export interface ToolActivityResult {
  output: unknown;
  /** The attempt that produced the output (1 when the first attempt succeeded). */
  attempt: number;
  /** True when the output was replayed from the idempotency store. */
  replayed?: boolean;
}
