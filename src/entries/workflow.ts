/**
 * `durable-tools/workflow`: durable tool calls, sagas and agents inside your own Temporal workflows.
 *
 * Workflow-safe: everything here runs in Temporal's workflow sandbox (no Node built-ins, no zod or tool code at
 * run time; tool types come in through type-only imports). The worker that runs these workflows must have the
 * engine's activities (the durable-tools worker plugin, or `createWorker`). See docs/own-workflows.md.
 *
 * @packageDocumentation
 */

// Durable tool calls
export { callTool, type CallToolOptions } from '../workflows/call-tool';
export {
  proxyTools,
  type ToolProxy,
  type AnyTool,
  type ToolsOf,
  type ToolNameOf,
  type ToolInputOf,
  type ToolOutputOf,
} from '../workflows/tool-proxy';
export { ToolCallFailure, toolFailureOf, type ToolCallFailureFacts } from '../contract/tool-call-failure';
export { isStoredOutputReference, type StoredOutputReference } from '../contract/claim-check-reference';

// Compensation
export {
  withSaga,
  SAGA_COMPENSATION_FAILED,
  type Saga,
  type SagaOptions,
  type SagaCompensationReport,
  type FailedCompensation,
} from '../workflows/saga-scope';
export type { CompensationArguments } from '../contract/tool-activity-types';

// The agent loop, embedded or as the engine's workflow (a child workflow for long runs)
export { runAgent, type EmbeddedAgentInput, type RunAgentOptions } from '../workflows/embedded-agent';
export { agentRun } from '../workflows/agent-run';
export type { AgentRunInput, AgentRunResult, AgentRunState, StepRecord, RunStatus } from '../contract/agent-run-types';

// The codes a call's observation carries
export { TOOL_ERROR_CODES, type ToolErrorCode, type ToolErrorObservation } from '../contract/activity-protocol';
