/**
 * `durable-tools/client`: what a process that starts, watches and cancels agent runs needs — and nothing
 * else. It loads no worker, no workflow bundler, no SQLite and no Postgres code, so a web server or a script
 * that only starts runs stays small and starts fast.
 *
 * @packageDocumentation
 */
export {
  AGENT_RUN_WORKFLOW,
  connectClient,
  startAgentRun,
  waitForAgentRun,
  getAgentRunState,
  agentRunUrl,
  fetchRunHistories,
  runResultOfFailure,
  type RunHistory,
  type StartAgentRunOptions,
  type AgentRunHandle,
  type AgentRunIdReusePolicy,
  type ConnectClientOptions,
} from '../client/agent-run-client';
export { AgentRunStartError, type AgentRunStartErrorCode } from '../client/agent-run-start-error';
export {
  connectionSettingsFromEnv,
  connectionOptions,
  CONNECTION_DEFAULTS,
  type ConnectionSettings,
} from '../client/connection-settings';
export { SEARCH_ATTRIBUTES } from '../contract/search-attributes';
export { registerStatusAttributeCommand } from '../client/status-search-attribute';
export { FAILED_RUN_STATUSES, isFailedRunStatus, type FailedRunStatus } from '../contract/run-outcome-statuses';
export { getRunStateQuery } from '../contract/agent-run-messages';
export { runningCalls, type RunningCall } from '../long-calls/live-progress';
export type { ToolProgress } from '../contract/tool-progress';

// Approvals: deciding waiting calls (docs/approvals.md)
export {
  approveStep,
  rejectStep,
  getPendingApprovals,
  listPendingApprovals,
  type PendingApproval,
  type StepDecision,
  type ListPendingApprovalsOptions,
} from '../client/approval-client';
export { ApprovalError, type ApprovalErrorCode } from '../client/approval-error';
export { argumentsDigest } from '../activities/arguments-digest';
export {
  APPROVAL_REFUSAL_CODES,
  type ApprovalRefusalCode,
  type RunApprovalPolicy,
  type StepApproval,
  type ApprovalDecisionKind,
  type ApprovalDecisionResult,
  type ApprovalAuditRecord,
  type ApprovalOutcome,
} from '../contract/approval-types';
export type {
  AgentRunInput,
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
} from '../contract/agent-run-types';
export type { ModelSettings } from '../contract/model-types';
export type { ScriptedTurn, ScriptedModelSettings } from '../model/scripted-model';
export type { ToolObservation, ToolErrorObservation, ToolSuccessObservation } from '../contract/activity-protocol';

// Payload encryption (docs/security.md, "Encryption")
export {
  EncryptionCodec,
  encryptedDataConverter,
  isEncryptedPayload,
  ENCRYPTED_PAYLOAD,
} from '../encryption/encryption-codec';
export {
  parseEncryptionKeys,
  encryptionKeysFromEnv,
  ENCRYPTION_ENV,
  type EncryptionKey,
  type EncryptionKeyring,
} from '../encryption/encryption-keys';
export { EncryptionError, type EncryptionErrorCode } from '../encryption/encryption-error';

export { tracingClientInterceptors } from '../telemetry/client-tracing';
