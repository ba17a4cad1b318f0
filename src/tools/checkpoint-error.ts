import { DurableToolsError } from '../contract/durable-tools-error';

/** Codes of {@link CheckpointError}. */
export type CheckpointErrorCode =
  /** The state is above the tool's `longCall.maxCheckpointBytes` as JSON. */
  | 'CHECKPOINT_TOO_LARGE'
  /** The state cannot be written as JSON (a cycle, a BigInt). */
  | 'CHECKPOINT_NOT_JSON';

/** `ctx.checkpoint(state)` was given a state it cannot save. A fault of the tool, never retried. */
export class CheckpointError extends DurableToolsError<CheckpointErrorCode> {
  override readonly name = 'CheckpointError';
}
