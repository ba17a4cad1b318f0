import { ApplicationFailure } from '@temporalio/common';
import { isToolErrorCode, type ToolErrorObservation } from './activity-protocol';

/** Where a {@link ToolCallFailure} came from, besides its observation (`details[1]`). */
export interface ToolCallFailureFacts {
  /** The tool that was called. */
  tool: string;
  /** The call's idempotency key; absent when the call was refused before it had one. */
  idempotencyKey?: string;
}

/**
 * A tool call from a workflow (`callTool`, `proxyTools`) that did not return: the tool failed permanently, ran out
 * of attempts or time, or was refused before it ran (unknown tool, arguments too large, approval rejected or
 * timed out). It carries the same structured observation an agent run's model reads: `code` (one of
 * `TOOL_ERROR_CODES`), `message`, `hint` (the next step), `retryable` and `attempts`.
 *
 * It is an `ApplicationFailure` whose `type` is the code and whose `details` are `[observation, facts]`, and it is
 * non-retryable: left uncaught, it fails the workflow with that type, and a client reads the observation back
 * with {@link toolFailureOf}. The activity's own failure is its `cause`. A cancelled call throws Temporal's
 * cancellation, never this.
 *
 * @example
 * ```ts
 * try {
 *   await tools.reserve_room({ hotel: 'Alpenhof', nights: 2 });
 * } catch (error) {
 *   if (error instanceof ToolCallFailure && error.observation.code === TOOL_ERROR_CODES.CONFLICT) { ... }
 *   throw error;
 * }
 * ```
 */
export class ToolCallFailure extends ApplicationFailure {
  /** What the call's failure says: code, message, hint, retryable, attempts. */
  readonly observation: ToolErrorObservation;
  /** The tool that was called. */
  readonly tool: string;
  /** The call's idempotency key, when it got one. */
  readonly idempotencyKey: string | undefined;

  /**
   * @param observation the structured error.
   * @param facts the tool and the call's key.
   * @param cause the activity's failure, when the activity ran.
   */
  constructor(observation: ToolErrorObservation, facts: ToolCallFailureFacts, cause?: Error) {
    super(`${facts.tool}: ${observation.message}`, observation.code, true, [observation, facts], cause);
    this.observation = observation;
    this.tool = facts.tool;
    this.idempotencyKey = facts.idempotencyKey;
  }
}

/**
 * The structured observation a failed tool call carries, wherever the failure is read: a
 * {@link ToolCallFailure} in the workflow, the failure of a workflow that let one escape (a client's
 * `WorkflowFailedError`, a parent's `ChildWorkflowFailure`), or a tool activity's own failure. Follows the
 * chain of causes; undefined when none carries an observation.
 *
 * @example
 * ```ts
 * const observation = toolFailureOf(error);
 * if (observation?.retryable) console.log(`try again later: ${observation.hint}`);
 * ```
 */
export function toolFailureOf(error: unknown): ToolErrorObservation | undefined {
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 20; depth++) {
    if (current instanceof ApplicationFailure && isToolErrorObservation(current.details?.[0])) {
      return current.details[0];
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function isToolErrorObservation(value: unknown): value is ToolErrorObservation {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<ToolErrorObservation>;
  return candidate.status === 'error' && isToolErrorCode(candidate.code) && typeof candidate.message === 'string';
}
