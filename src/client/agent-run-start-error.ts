import { DurableToolsError } from '../contract/durable-tools-error';

/** Codes of {@link AgentRunStartError}. */
export type AgentRunStartErrorCode =
  /** The workflow id belongs to a workflow that is not an agent run (an MCP call, another application's). */
  | 'RUN_ID_TAKEN'
  /** `workflowIdReusePolicy` is not one an agent run accepts (`REJECT_DUPLICATE`, `ALLOW_DUPLICATE_FAILED_ONLY`). */
  | 'INVALID_ID_REUSE_POLICY'
  /** `workflowId` and its deprecated old name `runId` are both given, with different values. */
  | 'CONFLICTING_WORKFLOW_ID'
  /** `eagerStart` with a client that is not over a worker's `NativeConnection`. */
  | 'EAGER_START_UNSUPPORTED'
  /** The run input has a field an agent run does not know (a typo, or a start option such as `workflowId`). */
  | 'UNKNOWN_INPUT_FIELD';

/** `startAgentRun` could neither start the run nor return an existing agent run with that id. */
export class AgentRunStartError extends DurableToolsError<AgentRunStartErrorCode> {
  override readonly name = 'AgentRunStartError';
  constructor(message: string, code: AgentRunStartErrorCode) {
    super(message, code);
  }
}
