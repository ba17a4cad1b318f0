import { DurableToolsError } from '../contract/durable-tools-error';

/** Codes of {@link PayloadBudgetError}. */
export type PayloadBudgetErrorCode =
  /** What a client passed to start a run is above `PAYLOAD_LIMITS.runInputBytes`. */
  'RUN_INPUT_TOO_LARGE';

/**
 * Something a caller passed is above the payload budget, so the engine refuses it before Temporal would
 * (Temporal carries the run's input into every continue-as-new and the goal into every model call).
 */
export class PayloadBudgetError extends DurableToolsError<PayloadBudgetErrorCode> {
  override readonly name = 'PayloadBudgetError';
}
