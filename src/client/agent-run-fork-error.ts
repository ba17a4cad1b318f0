import { DurableToolsError } from '../contract/durable-tools-error';

/** Codes of {@link AgentRunForkError}. */
export type AgentRunForkErrorCode =
  /** There is no run with the source's workflow id (in the client's namespace). */
  | 'SOURCE_NOT_FOUND'
  /** The source is not an agent run. */
  | 'SOURCE_NOT_AGENT_RUN'
  /** The source is still running: its steps are not final yet. */
  | 'SOURCE_RUNNING'
  /** The source's state cannot be read (a cancelled or terminated run whose worker does not answer). */
  | 'SOURCE_UNREADABLE'
  /** `fromStep` is not a whole number of at least 1. */
  | 'INVALID_FROM_STEP'
  /** The source has fewer than `fromStep - 1` steps. */
  | 'NOT_ENOUGH_STEPS'
  /** Steps of the prefix are not in the source's recorded state (an earlier generation, or left out for size). */
  | 'PREFIX_NOT_RECORDED'
  /** A step of the prefix never settled in the source (no observation to take over). */
  | 'STEP_NOT_SETTLED'
  /** The new run's input with the recorded prefix is above the run input budget. */
  | 'FORK_TOO_LARGE'
  /** A fork that is not dry of a dry run: the dry run's steps had no effects to go on from. */
  | 'SOURCE_IS_DRY_RUN';

/** `forkAgentRun` could not start a run from the source run's recorded prefix (docs/fork.md). */
export class AgentRunForkError extends DurableToolsError<AgentRunForkErrorCode> {
  override readonly name = 'AgentRunForkError';
  constructor(message: string, code: AgentRunForkErrorCode) {
    super(message, code);
  }
}
