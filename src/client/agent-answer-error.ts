import { DurableToolsError } from '../contract/durable-tools-error';
import type { AgentRunResult } from '../contract/agent-run-types';

/** Codes of {@link AgentAnswerError}. */
export type AgentAnswerErrorCode =
  /** A completed run's `output` does not match the agent's `output` schema (checked again at the client). */
  'INVALID_ANSWER';

/**
 * A completed run of an agent with `output` whose typed answer the client's own schema refuses (a refinement or
 * transform the worker's JSON Schema could not carry, or a run that did not check it). `result` is the run's.
 */
export class AgentAnswerError extends DurableToolsError<AgentAnswerErrorCode> {
  override readonly name = 'AgentAnswerError';
  constructor(
    message: string,
    code: AgentAnswerErrorCode,
    /** The run's result, as the worker returned it. */
    readonly result: AgentRunResult,
  ) {
    super(message, code);
  }
}
