/**
 * `durable-tools/client`: what a process that starts, watches and cancels agent runs needs — and nothing
 * else. It loads no worker, no workflow bundler, no SQLite and no Postgres code, so a web server or a script
 * that only starts runs stays small and starts fast.
 *
 * @packageDocumentation
 */
export * from './common';

// Starting, watching and reading runs
export {
  connectClient,
  startAgentRun,
  waitForAgentRun,
  getAgentRunState,
  agentRunUrl,
  runResultOfFailure,
  type StartAgentRunOptions,
  type AgentRunHandle,
  type AgentRunIdReusePolicy,
  type ConnectClientOptions,
} from '../client/agent-run-client';
// Runs of agents defined with defineAgent, their typed answers (docs/agents.md)
export {
  startAgent,
  typedAgentResult,
  type AgentHandle,
  type StartAgentOptions,
  type AgentRunExtras,
} from '../client/agent-client';
export type { AgentOutputSpec } from '../contract/agent-output';
export { runningCalls, type RunningCall } from '../long-calls/live-progress';
export type { ToolProgress } from '../contract/tool-progress';
export type { ModelSettings } from '../contract/model-types';

// The authority a trusted starter grants a run, and who acted (docs/security.md, "Authority of a run")
export type { RunGrant } from '../contract/run-grant';
export type { CallerIdentity } from '../contract/caller-identity';

// Tracing of client calls (docs/telemetry.md)
export { tracingClientInterceptors } from '../telemetry/client-tracing';

// Streaming a run live: from code, over SSE (docs/streaming.md)
export { streamAgentRun, type StreamAgentRunOptions } from '../client/stream-agent-run';
export { streamTurnTexts } from '../client/stream-turn-texts';
export { serveAgentRunStream, type ServeAgentRunStreamOptions } from '../client/agent-run-sse';
export {
  startAgentRunStreamServer,
  type AgentRunStreamServer,
  type AgentRunStreamServerOptions,
} from '../client/agent-run-stream-server';
export type {
  AgentRunStreamReader,
  AgentRunStreamReaders,
  AgentRunStreamRun,
} from '../client/agent-run-stream-readers';
export type { AgentStreamEvent, AgentStreamEventType, StreamSegment } from '../stores/streams/stream-events';
export { diffAgentRuns } from '../client/diff-agent-runs';
export { forkAgentRun, type ForkAgentRunOptions } from '../client/fork-agent-run';
export { evaluateAgentRuns, type EvalReport } from '../client/evaluate-agent-runs';
export type { EvalSuite } from '../client/eval-suite';
export {
  diffRuns,
  type RunDiff,
  type RunDiffHeader,
  type RunDiffRow,
  type RunDiffStep,
  type RunToDiff,
  type StepDifference,
} from '../client/run-diff';
export type {
  AgentRunInput,
  AgentRunFork,
  ForkedStepOrigin,
  AgentRunLimits,
  AgentRunResult,
  AgentRunState,
  FailurePolicy,
  CompensationOptions,
  RunStatus,
  StepRecord,
  StepStatus,
  CostTable,
  TokenPrices,
  RunUsage,
  RunUsageTotals,
  TurnUsage,
  SubAgentLink,
  PendingCompensation,
} from '../contract/agent-run-types';
export type { SubAgentOutput } from '../contract/sub-agent-spec';
export type { ModelProviderWait } from '../contract/model-outage';

// The fast path: local activities for short steps (docs/fast-path.md)
export { FAST_PATH_LIMITS, type FastPathOptions, type FastPathSetting } from '../contract/fast-path';

// Approvals: deciding waiting calls (docs/approvals.md)
export {
  approveStep,
  rejectStep,
  getPendingApprovals,
  listPendingApprovals,
  type PendingApproval,
  type StepDecision,
  type StepApprovalDecision,
  type ListPendingApprovalsOptions,
} from '../client/approval-client';
export type {
  ApprovalRefusalCode,
  RunApprovalPolicy,
  StepApproval,
  ApprovalDecisionResult,
} from '../contract/approval-types';

// Conversations: one workflow across messages (docs/conversations.md)
export {
  startConversation,
  sendMessage,
  getMessages,
  getConversation,
  getConversationView,
  closeConversation,
  type ConversationHandle,
  type StartConversationOptions,
  type SendMessageOptions,
} from '../client/conversation-client';
export type {
  ConversationAgentSettings,
  ConversationMessage,
  ConversationMessageStatus,
  ConversationReply,
  ConversationStatus,
  ConversationView,
} from '../contract/conversation-types';
