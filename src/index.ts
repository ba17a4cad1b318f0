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
} from './contract/tool-catalog-entry';
export type { ToolContext, ToolLogger } from './tools/tool-context';
export type { ToolLongCallOptions } from './tools/long-call';
export type { ToolLongCallSettings, LongCallCancellation } from './contract/tool-catalog-entry';
// Async-job tools: submit now, result by callback or polling, fetch later (docs/long-calls.md)
export {
  defineAsyncJobTool,
  type AsyncJobToolSpec,
  type AsyncJobToolContract,
  type AsyncJobHandlers,
  type AsyncJobSubmission,
  type AsyncJobSubmitContext,
  type AsyncJobPollResult,
} from './tools/define-async-job-tool';
export type { ToolAsyncJobOptions } from './tools/async-job';
export type { ToolAsyncJobSettings, AsyncJobCompletion } from './contract/tool-catalog-entry';
export { FETCH_TOOL_RESULT_TOOL, type BackgroundCallStatus } from './contract/fetch-tool-result';
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
export type { ToolProgress } from './contract/tool-progress';
export { CheckpointError, type CheckpointErrorCode } from './tools/checkpoint-error';
export { ToolDefinitionError, type ToolDefinitionErrorCode } from './contract/tool-definition-error';
export {
  TOOL_ERROR_CODES,
  type ToolErrorCode,
  type ToolObservation,
  type ToolErrorObservation,
  type ToolSuccessObservation,
} from './contract/activity-protocol';
export { parseToolArguments, type ParsedToolArguments } from './guard/parse-tool-arguments';
export {
  ARGUMENT_GUARD_CEILINGS,
  ArgumentGuardConfigError,
  type ArgumentGuardConfigErrorCode,
  type ArgumentGuardOptions,
} from './guard/argument-guard-options';
export { ARGUMENT_GUARD_LIMITS, type ArgumentGuardLimits } from './guard/json-arguments';
export { compensationInput } from './tools/compensation-input';
export {
  withIdempotencyKey,
  idempotentFetch,
  IDEMPOTENCY_KEY_HEADER,
  FENCING_TOKEN_HEADER,
  type IdempotentRequestContext,
} from './tools/idempotent-fetch';
export { LeaseLostError, type LeaseLostErrorCode } from './failures/lease-lost-error';

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
} from './failures/tool-errors';
export { classify, type FailureClassification, type FailureKind } from './failures/classify';
export { computeBackoffDelay, type BackoffInput } from './failures/backoff';
export { parseRetryAfter } from './failures/retry-after';
export { RetryBudget, type RetryBudgetOptions } from './failures/retry-budget';
export { decideRetry, type RetryDecision, type RetryDecisionInput } from './failures/retry-decision';
export { createSeededRandom } from './failures/seeded-random';

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
} from './stores/idempotency';
export type { TranscriptStore } from './stores/transcripts/transcript-store';
export { MemoryTranscriptStore } from './stores/transcripts/memory-transcript-store';
export { SqliteTranscriptStore } from './stores/transcripts/sqlite-transcript-store';
export {
  PostgresTranscriptStore,
  POSTGRES_TRANSCRIPT_DEFAULTS,
  type PostgresTranscriptStoreOptions,
} from './stores/transcripts/postgres-transcript-store';
export {
  createTranscriptStore,
  transcriptStoreConfigFromEnv,
  TRANSCRIPT_STORE_ENV,
  TRANSCRIPT_STORE_KINDS,
  type TranscriptStoreConfig,
} from './stores/transcripts/create-transcript-store';
export { TranscriptStoreError, type TranscriptStoreErrorCode } from './stores/transcripts/transcript-store-error';
export {
  PAYLOAD_RETENTION,
  PAYLOAD_RETENTION_ENV,
  type PayloadRetentionOptions,
} from './stores/transcripts/payload-retention';
export {
  createPayloadReaper,
  type PayloadReaper,
  type PayloadReaperOptions,
} from './stores/transcripts/payload-reaper';

// Payload and context budget
export { PAYLOAD_LIMITS } from './contract/payload-limits';
export { PayloadBudgetError, type PayloadBudgetErrorCode } from './client/payload-budget-error';
export {
  READ_STORED_OUTPUT_TOOL,
  type StoredOutputReference,
  type StoredArgumentsReference,
  type ShortenedValue,
  type OversizedArgumentsMarker,
} from './contract/claim-check-reference';
export { createReadStoredOutputTool, withReadStoredOutputTool } from './tools/read-stored-output-tool';
export type { ToolBudget, ToolBudgetOptions } from './contract/tool-budget';
export type { StoredPayload } from './stores/transcripts/transcript-store';

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
} from './contract/model-types';
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
export { TOOL_DISCLOSURE, DESCRIBE_TOOLS_TOOL, type ToolDisclosureBudget } from './contract/tool-disclosure';

// Activities, worker and client
export { createToolActivities, type ToolActivityDeps, type ToolActivities } from './activities/tool-activities';
export {
  createModelActivities,
  type ModelActivityDeps,
  type ModelActivities,
  type CallModelInput,
} from './activities/model-activities';
export type { ToolActivityInput, ToolActivityResult, CompensationArguments } from './contract/tool-activity-types';
export { createWorker, type CreateWorkerOptions, type DurableToolsWorker } from './runtime/create-worker';
export { privateRuntimeLogger } from './telemetry/private-logs';
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
} from './client/agent-run-client';
export { AgentRunStartError, type AgentRunStartErrorCode } from './client/agent-run-start-error';
export { runningCalls, type RunningCall } from './long-calls/live-progress';
export {
  connectionSettingsFromEnv,
  connectionOptions,
  CONNECTION_DEFAULTS,
  type ConnectionSettings,
} from './client/connection-settings';
export { SEARCH_ATTRIBUTES } from './contract/search-attributes';
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
} from './contract/agent-run-types';
export { getRunStateQuery } from './contract/agent-run-messages';

// Approvals: deciding waiting calls (docs/approvals.md)
export {
  approveStep,
  rejectStep,
  getPendingApprovals,
  listPendingApprovals,
  type PendingApproval,
  type StepDecision,
  type ListPendingApprovalsOptions,
} from './client/approval-client';
export { ApprovalError, type ApprovalErrorCode } from './client/approval-error';
export { argumentsDigest } from './activities/arguments-digest';
export {
  APPROVAL_REFUSAL_CODES,
  type ApprovalRefusalCode,
  type RunApprovalPolicy,
  type StepApproval,
  type ApprovalDecisionKind,
  type ApprovalDecisionResult,
  type ApprovalAuditRecord,
  type ApprovalOutcome,
} from './contract/approval-types';

// Approvals: tool policy and the audit trail (docs/approvals.md)
export type { ToolApprovalPolicy, ApprovalPredicate } from './contract/approval-policy';
export type { WorkerApprovalConfig } from './activities/approval-activities';
export {
  createAuditStore,
  auditStoreConfigFromEnv,
  AUDIT_STORE_ENV,
  type AuditStoreConfig,
} from './stores/audit/create-audit-store';
export type { AuditStore, AuditQuery } from './stores/audit/audit-store';
export { SqliteAuditStore } from './stores/audit/sqlite-audit-store';
export { PostgresAuditStore, type PostgresAuditStoreOptions } from './stores/audit/postgres-audit-store';
export { MemoryAuditStore } from './stores/audit/memory-audit-store';
export { AuditStoreError, type AuditStoreErrorCode } from './stores/audit/audit-store-error';

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
export { createMcpHost, withMcpTools, McpHost, type McpHostOptions } from './mcp/client/mcp-host';
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
} from './mcp/client/mcp-config';
export { McpConfigError, type McpConfigErrorCode } from './mcp/client/mcp-config-error';
export {
  McpClientPool,
  MCP_IDEMPOTENCY_KEY_META,
  MCP_FENCING_TOKEN_META,
  type McpCallOptions,
  type McpSession,
} from './mcp/client/mcp-client-pool';
export { mcpToolName, MCP_NAME_SEPARATOR } from './mcp/client/mcp-tool-name';
export { mcpToolPolicy, type McpToolPolicy } from './mcp/client/mcp-tool-mapping';

// MCP: our tools served over MCP
export { createDurableMcpServer, mcpCallWorkflowId, type DurableMcpServerOptions } from './mcp/server/mcp-server';
export { SHARED_MCP_CALLER, type McpCaller } from './mcp/server/mcp-caller';
export {
  staticTokenAuthenticator,
  mcpTokensFromEnv,
  MCP_TOKEN_ENV,
  type McpCallerAuthenticator,
  type McpNamedToken,
} from './mcp/server/mcp-caller-auth';
export {
  startMcpHttpListener,
  MCP_HTTP_MAX_BODY_BYTES,
  type McpHttpListener,
  type McpHttpListenerOptions,
} from './mcp/server/mcp-http-listener';
export { TemporalTaskStore, MCP_CALL_WORKFLOW, MCP_CALL_WORKFLOW_PREFIX } from './mcp/server/temporal-task-store';
export { runMcpCommand, MCP_COMMAND_USAGE } from './mcp/server/mcp-command';
export type { McpToolCallInput, McpToolCallResult } from './workflows/mcp-tool-call';

// Payload encryption (docs/security.md, "Encryption")
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
