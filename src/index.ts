/**
 * durable-tools: durable tool calls for AI agents on Temporal.
 *
 * The one public entry. Every export here is a decision: add to it deliberately.
 *
 * @packageDocumentation
 */

// Tool contract and registry
export {
  defineTool,
  type ToolSpec,
  type ToolContract,
  type Tool,
  type ToolImplementation,
  type ToolImplementationHooks,
  type ToolRetryOptions,
  type ReconcileResult,
} from './tools/define-tool';
export { createToolRegistry, type ToolRegistry } from './tools/tool-registry';
export type {
  ToolCatalogEntry,
  ToolEffect,
  ToolApproval,
  ToolRetrySettings,
  JitterStrategy,
} from './tools/tool-catalog-entry';
export type { ToolContext, ToolLogger } from './tools/tool-context';
export type { ToolLongCallOptions, ToolLongCallSettings, LongCallCancellation } from './tools/long-call';
// Async-job tools: submit now, result by callback or polling, fetch later (README, "Long tool calls")
export {
  defineAsyncJobTool,
  type AsyncJobToolSpec,
  type AsyncJobToolContract,
  type AsyncJobHandlers,
  type AsyncJobSubmission,
  type AsyncJobSubmitContext,
  type AsyncJobPollResult,
} from './tools/define-async-job-tool';
export type { ToolAsyncJobOptions, ToolAsyncJobSettings, AsyncJobCompletion } from './tools/async-job';
export { FETCH_TOOL_RESULT_TOOL, type BackgroundCallStatus } from './tools/fetch-tool-result';
export {
  completeJobCallback,
  JobCallbackError,
  JOB_CALLBACK_ERROR_CODES,
  type JobCallbackErrorCode,
  type JobCallbackDeps,
  type JobCallbackResult,
} from './long-calls/complete-job-callback';
export {
  startJobCallbackServer,
  type JobCallbackServer,
  type JobCallbackServerOptions,
} from './long-calls/job-callback-server';
export type { ToolProgress } from './tools/tool-progress';
export { CheckpointError, type CheckpointErrorCode } from './tools/checkpoint-error';
export { ToolDefinitionError, type ToolDefinitionErrorCode } from './tools/tool-definition-error';
export {
  TOOL_ERROR_CODES,
  type ToolErrorCode,
  type ToolObservation,
  type ToolErrorObservation,
  type ToolSuccessObservation,
} from './protocol/activity-protocol';
export { parseToolArguments, type ParsedToolArguments } from './tools/parse-tool-arguments';
export {
  ARGUMENT_GUARD_CEILINGS,
  ArgumentGuardConfigError,
  type ArgumentGuardConfigErrorCode,
  type ArgumentGuardOptions,
} from './tools/argument-guard-options';
export { ARGUMENT_GUARD_LIMITS, type ArgumentGuardLimits } from './tools/json-arguments';
export { compensationInput } from './tools/compensation-input';
export {
  withIdempotencyKey,
  idempotentFetch,
  IDEMPOTENCY_KEY_HEADER,
  FENCING_TOKEN_HEADER,
  type IdempotentRequestContext,
} from './tools/idempotent-fetch';
export { LeaseLostError, type LeaseLostErrorCode } from './tools/lease-lost-error';

// Failure semantics
export {
  TransientToolError,
  PermanentToolError,
  RateLimitedToolError,
  HttpStatusError,
  httpErrorFromResponse,
  throwForHttpStatus,
  type ToolErrorOptions,
  type ToolError,
} from './tools/tool-errors';
export { classify, type FailureClassification, type FailureKind } from './tools/classify';
export { computeBackoffDelay, type BackoffInput } from './tools/backoff';
export { parseRetryAfter } from './tools/retry-after';
export { RetryBudget, type RetryBudgetOptions } from './tools/retry-budget';
export { decideRetry, type RetryDecision, type RetryDecisionInput } from './tools/retry-decision';
export { createSeededRandom } from './tools/seeded-random';

// Idempotency keys and transcripts
export {
  canonicalJson,
  fingerprint,
  createIdempotencyStore,
  idempotencyStoreConfigFromEnv,
  createIdempotencyReaper,
  IdempotencyStoreError,
  MemoryIdempotencyStore,
  SqliteIdempotencyStore,
  PostgresIdempotencyStore,
  IDEMPOTENCY_DEFAULTS,
  type IdempotencyStore,
  type IdempotencyStoreConfig,
  type IdempotencyStoreErrorCode,
  type IdempotencyReaper,
  type BeginOutcome,
  type StoredFailure,
  type FinishOptions,
} from './idempotency';
export type { TranscriptStore } from './transcripts/transcript-store';
export { MemoryTranscriptStore } from './transcripts/memory-transcript-store';
export { SqliteTranscriptStore } from './transcripts/sqlite-transcript-store';
export {
  PostgresTranscriptStore,
  POSTGRES_TRANSCRIPT_DEFAULTS,
  type PostgresTranscriptStoreOptions,
} from './transcripts/postgres-transcript-store';
export {
  createTranscriptStore,
  transcriptStoreConfigFromEnv,
  TRANSCRIPT_STORE_ENV,
  TRANSCRIPT_STORE_KINDS,
  type TranscriptStoreConfig,
} from './transcripts/create-transcript-store';
export { TranscriptStoreError, type TranscriptStoreErrorCode } from './transcripts/transcript-store-error';
export {
  PAYLOAD_RETENTION,
  PAYLOAD_RETENTION_ENV,
  type PayloadRetentionOptions,
} from './transcripts/payload-retention';
export { createPayloadReaper, type PayloadReaper, type PayloadReaperOptions } from './transcripts/payload-reaper';

// Payload and context budget
export { PAYLOAD_LIMITS } from './budget/payload-limits';
export { PayloadBudgetError, type PayloadBudgetErrorCode } from './budget/payload-budget-error';
export {
  READ_STORED_OUTPUT_TOOL,
  type StoredOutputReference,
  type StoredArgumentsReference,
  type ShortenedValue,
  type OversizedArgumentsMarker,
} from './budget/claim-check-reference';
export { createReadStoredOutputTool, withReadStoredOutputTool } from './budget/read-stored-output-tool';
export type { ToolBudget, ToolBudgetOptions } from './tools/tool-budget';
export type { StoredPayload } from './transcripts/transcript-store';

// Models
export type {
  ModelProvider,
  ModelRequest,
  ModelTurn,
  ModelToolCall,
  ModelSettings,
  TranscriptMessage,
  ModelCallContext,
  ModelUsage,
  ModelFinishReason,
  ModelTurnIssue,
} from './model/model-types';
export { scriptedModel, type ScriptedTurn, type ScriptedModelSettings } from './model/scripted-model';
// The scripted turn format, checked (`run --script` uses it; docs/scripted-model.md)
export {
  parseScriptedTurns,
  scriptedTurnSchema,
  ScriptedTurnsError,
  type ScriptedTurnsProblem,
} from './model/scripted-turns';
export { aiSdkModelProvider, type AiSdkProviderOptions, type LanguageModelSource } from './model/ai-sdk-model-provider';
export { DEFAULT_SYSTEM_PROMPT } from './model/ai-sdk-mapping';
export {
  createConfiguredModelProvider,
  modelProviderConfigFromEnv,
  modelProvidersFromEnv,
  MODEL_ENV,
  MODEL_PROVIDER_KINDS,
  DEFAULT_MODEL_IDS,
  type ModelProviderConfig,
  type ModelProviderKind,
} from './model/configured-model-providers';
export { ModelConfigError, type ModelConfigErrorCode } from './model/model-config-error';
export {
  classifyModelError,
  MODEL_FAILURE_CODES,
  type ModelFailureCode,
  type ModelFailureClassification,
} from './model/model-failure';
export { TOOL_DISCLOSURE, DESCRIBE_TOOLS_TOOL, type ToolDisclosureBudget } from './tools/tool-disclosure';

// Activities, worker and client
export { createToolActivities, type ToolActivityDeps, type ToolActivities } from './activities/tool-activities';
export {
  createModelActivities,
  type ModelActivityDeps,
  type ModelActivities,
  type CallModelInput,
} from './activities/model-activities';
export type { ToolActivityInput, ToolActivityResult, CompensationArguments } from './activities/tool-activity-types';
export { createWorker, type CreateWorkerOptions, type DurableToolsWorker } from './worker';
export { privateRuntimeLogger } from './privacy/private-logs';
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
} from './client';
export { AgentRunStartError, type AgentRunStartErrorCode } from './agent-run-start-error';
export { runningCalls, type RunningCall } from './long-calls/live-progress';
export {
  connectionSettingsFromEnv,
  connectionOptions,
  CONNECTION_DEFAULTS,
  type ConnectionSettings,
} from './connection-settings';
export { SEARCH_ATTRIBUTES } from './search-attributes';
export type {
  AgentRunInput,
  AgentRunLimits,
  AgentRunResult,
  AgentRunState,
  AgentRunCarryOver,
  FailurePolicy,
  CompensationOptions,
  PendingCompensation,
  RunStatus,
  StepRecord,
  StepStatus,
  CostTable,
  TokenPrices,
  RunUsage,
  RunUsageTotals,
  TurnUsage,
} from './workflows/agent-run-types';
export { getRunStateQuery } from './workflows/agent-run-messages';

// Approvals: deciding waiting calls (README, "Approvals")
export {
  approveStep,
  rejectStep,
  getPendingApprovals,
  listPendingApprovals,
  type PendingApproval,
  type StepDecision,
  type ListPendingApprovalsOptions,
} from './approvals/approval-client';
export { ApprovalError, type ApprovalErrorCode } from './approvals/approval-error';
export { argumentsDigest } from './approvals/arguments-digest';
export {
  APPROVAL_REFUSAL_CODES,
  type ApprovalRefusalCode,
  type RunApprovalPolicy,
  type StepApproval,
  type ApprovalDecisionKind,
  type ApprovalDecisionResult,
  type ApprovalAuditRecord,
  type ApprovalOutcome,
} from './approvals/approval-types';

// Approvals: tool policy and the audit trail (README, "Approvals")
export type { ToolApprovalPolicy, ApprovalPredicate } from './tools/approval-policy';
export type { WorkerApprovalConfig } from './activities/approval-activities';
export {
  createAuditStore,
  auditStoreConfigFromEnv,
  AUDIT_STORE_ENV,
  type AuditStoreConfig,
} from './approvals/create-audit-store';
export type { AuditStore, AuditQuery } from './approvals/audit-store';
export { SqliteAuditStore } from './approvals/sqlite-audit-store';
export { PostgresAuditStore, type PostgresAuditStoreOptions } from './approvals/postgres-audit-store';
export { MemoryAuditStore } from './approvals/memory-audit-store';
export { AuditStoreError, type AuditStoreErrorCode } from './approvals/audit-store-error';

// Tracing and metrics (OpenTelemetry)
export type { WorkerTelemetryOptions } from './telemetry/worker-telemetry';
export type { WorkerTracingOptions } from './telemetry/worker-tracing';
export { TRACING_WORKFLOW_MODULES } from './telemetry/tracing-workflow-modules';
export {
  startTelemetryFromEnv,
  telemetryConfigFromEnv,
  DEFAULT_SERVICE_NAME,
  type TelemetryEnvConfig,
  type StartedTelemetry,
} from './telemetry/telemetry-from-env';
export { TelemetryConfigError, type TelemetryConfigErrorCode } from './telemetry/telemetry-config-error';
export { ENGINE_METRICS, DURABLE_TOOLS_METER } from './telemetry/engine-metrics';
export { TOOL_CALL_SPAN_ATTRIBUTES, type ToolCallOutcome } from './telemetry/tool-call-telemetry';
export { RUN_SPANS } from './workflows/run-tracing';
export { tracingClientInterceptors } from './telemetry/client-tracing';

// Local Temporal server
export { resolveTemporalCli, TEMPORAL_CLI, type ResolvedTemporalCli } from './dev-server/temporal-cli';
export { startDevServer, type DevServer, type DevServerOptions } from './dev-server/dev-server';
export { TemporalCliError, type TemporalCliErrorCode } from './dev-server/temporal-cli-error';

// MCP: servers' tools as durable activities
export { createMcpHost, withMcpTools, McpHost, type McpHostOptions } from './mcp/mcp-host';
export {
  parseMcpConfig,
  loadMcpConfigFile,
  DEFAULT_MCP_LIST_TTL_MS,
  DEFAULT_MCP_CALL_TIMEOUT_MS,
  type McpTrust,
  type McpServersConfig,
  type McpServersConfigInput,
  type McpServerConfig,
  type McpStdioServerConfig,
  type McpHttpServerConfig,
  type McpTaskSettings,
} from './mcp/mcp-config';
export { McpConfigError, type McpConfigErrorCode } from './mcp/mcp-config-error';
export {
  McpClientPool,
  MCP_IDEMPOTENCY_KEY_META,
  MCP_FENCING_TOKEN_META,
  type McpCallOptions,
  type McpSession,
} from './mcp/mcp-client-pool';
export { mcpToolName, MCP_NAME_SEPARATOR } from './mcp/mcp-tool-name';
export { mcpToolPolicy, type McpToolPolicy } from './mcp/mcp-tool-mapping';

// MCP: our tools served over MCP
export { createDurableMcpServer, mcpCallWorkflowId, type DurableMcpServerOptions } from './mcp/mcp-server';
export { SHARED_MCP_CALLER, type McpCaller } from './mcp/mcp-caller';
export {
  staticTokenAuthenticator,
  mcpTokensFromEnv,
  MCP_TOKEN_ENV,
  type McpCallerAuthenticator,
  type McpNamedToken,
} from './mcp/mcp-caller-auth';
export {
  startMcpHttpListener,
  MCP_HTTP_MAX_BODY_BYTES,
  type McpHttpListener,
  type McpHttpListenerOptions,
} from './mcp/mcp-http-listener';
export { TemporalTaskStore, MCP_CALL_WORKFLOW, MCP_CALL_WORKFLOW_PREFIX } from './mcp/temporal-task-store';
export { runMcpCommand, MCP_COMMAND_USAGE } from './mcp/mcp-command';
export type { McpToolCallInput, McpToolCallResult } from './workflows/mcp-tool-call';

// Payload encryption (README, "Encryption")
export {
  EncryptionCodec,
  encryptedDataConverter,
  isEncryptedPayload,
  ENCRYPTED_PAYLOAD,
} from './encryption/encryption-codec';
export {
  parseEncryptionKeys,
  encryptionKeysFromEnv,
  ENCRYPTION_ENV,
  type EncryptionKey,
  type EncryptionKeyring,
} from './encryption/encryption-keys';
export { EncryptionError, type EncryptionErrorCode } from './encryption/encryption-error';
export { EncryptedIdempotencyStore } from './encryption/encrypted-idempotency-store';
export { EncryptedTranscriptStore } from './encryption/encrypted-transcript-store';
export {
  startCodecServer,
  CODEC_SERVER_DEFAULTS,
  CodecServerConfigError,
  type CodecServer,
  type CodecServerOptions,
} from './encryption/codec-server';
