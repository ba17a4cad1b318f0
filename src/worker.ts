/**
 * `durable-tools/worker`: what a worker process needs — the tool contract and its failure semantics,
 * idempotency key and transcript stores, model providers, `createWorker`, MCP servers' tools (`createMcpHost`,
 * `withMcpTools`) and serving tools over MCP, the audit trail, telemetry and the codec server.
 *
 * @packageDocumentation
 */
export * from './entries/common';

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
// Sub-agents: a tool that is another agent, run as a child workflow; handoffs (docs/sub-agents.md)
export { defineAgentTool, defineHandoff, type AgentToolSpec, type FromArguments } from './tools/define-agent-tool';
export type { SubAgentSpec } from './contract/sub-agent-spec';
export type { ToolAgentSettings } from './contract/tool-catalog-entry';
export type {
  ToolCatalogEntry,
  ToolEffect,
  ToolApproval,
  ToolRetrySettings,
  JitterStrategy,
  ToolLongCallSettings,
  LongCallCancellation,
  ToolAsyncJobSettings,
  AsyncJobCompletion,
} from './contract/tool-catalog-entry';
export type { ToolContext, ToolLogger } from './tools/tool-context';
export type { ToolLongCallOptions } from './tools/long-call';
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
export {
  completeJobCallback,
  JobCallbackError,
  type JobCallbackErrorCode,
  type JobCallbackDeps,
  type JobCallbackResult,
} from './long-calls/complete-job-callback';
export {
  startJobCallbackServer,
  type JobCallbackServer,
  type JobCallbackServerOptions,
} from './long-calls/job-callback-server';
export { CheckpointError, type CheckpointErrorCode } from './tools/checkpoint-error';
export { ToolDefinitionError, type ToolDefinitionErrorCode } from './contract/tool-definition-error';
export {
  ArgumentGuardConfigError,
  type ArgumentGuardConfigErrorCode,
  type ArgumentGuardOptions,
} from './guard/argument-guard-options';
export { compensationInput } from './tools/compensation-input';
export { withIdempotencyKey, idempotentFetch, type IdempotentRequestContext } from './tools/idempotent-fetch';
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
export { parseRetryAfter } from './failures/retry-after';

// Idempotency keys and transcripts
export {
  createIdempotencyStore,
  createIdempotencyReaper,
  IdempotencyStoreError,
  SqliteIdempotencyStore,
  PostgresIdempotencyStore,
  type IdempotencyStore,
  type IdempotencyStoreConfig,
  type IdempotencyStoreErrorCode,
  type IdempotencyReaper,
  type BeginOutcome,
  type StoredFailure,
  type FinishOptions,
  type TakeOverOptions,
  type InsertOutcome,
  type LookupOutcome,
} from './stores/idempotency';
export type { TranscriptStore, StoredPayload } from './stores/transcripts/transcript-store';
export { SqliteTranscriptStore } from './stores/transcripts/sqlite-transcript-store';
export {
  PostgresTranscriptStore,
  type PostgresTranscriptStoreOptions,
} from './stores/transcripts/postgres-transcript-store';
export { createTranscriptStore, type TranscriptStoreConfig } from './stores/transcripts/create-transcript-store';
export { TranscriptStoreError, type TranscriptStoreErrorCode } from './stores/transcripts/transcript-store-error';
export type { PayloadRetentionOptions } from './stores/transcripts/payload-retention';
export type { MemoryTranscriptStoreOptions } from './stores/transcripts/memory-transcript-store';
export {
  createPayloadReaper,
  type PayloadReaper,
  type PayloadReaperOptions,
} from './stores/transcripts/payload-reaper';

// Models
export type {
  ModelProvider,
  ModelRequest,
  ModelTurn,
  ModelToolCall,
  TranscriptMessage,
  ModelCallContext,
  ModelStreamSink,
  ModelUsage,
  ModelFinishReason,
  ModelTurnIssue,
} from './contract/model-types';
export { aiSdkModelProvider, type AiSdkProviderOptions, type LanguageModelSource } from './model/ai-sdk-model-provider';
export type { AiSdkLanguageModel, AiSdkSpecificationVersion } from './model/ai-sdk-spec';
export {
  createConfiguredModelProvider,
  modelProvidersFromEnv,
  type ModelProviderConfig,
  type ModelProviderKind,
} from './model/configured-model-providers';
export { ModelConfigError, type ModelConfigErrorCode } from './model/model-config-error';
export { classifyModelError, type ModelFailureCode, type ModelFailureClassification } from './model/model-failure';

// The worker: the plugin for your own Temporal Worker (docs/own-worker.md), or one made for you
export { durableTools, type DurableToolsOptions, type DurableToolsPlugin } from './runtime/durable-tools-plugin';
export {
  createWorker,
  runWorkerProcess,
  type CreateWorkerOptions,
  type DurableToolsWorker,
} from './runtime/create-worker';
// Determinism check before a deploy: recorded runs replayed against the current workflow code (docs/replay.md)
export {
  replayAgentRuns,
  ReplayAgentRunsError,
  DEFAULT_REPLAY_LIMIT,
  type ReplayAgentRunsOptions,
  type ReplayAgentRunsErrorCode,
  type AgentRunReplayResult,
  type AgentRunsReplayReport,
} from './runtime/replay-agent-runs';
export type { ReplayEvent } from './runtime/replay-outcome';
// Logs without task tokens, for a Temporal runtime you install yourself (docs/at-rest.md)
export { privateRuntimeLogger } from './telemetry/private-logs';

// MCP: servers' tools as durable activities (docs/mcp.md)
export { createMcpHost, withMcpTools, McpHost, type McpHostOptions } from './mcp/client/mcp-host';
export {
  loadMcpConfigFile,
  type McpTrust,
  type McpServersConfig,
  type McpServersConfigInput,
  type McpServerConfig,
  type McpStdioServerConfig,
  type McpHttpServerConfig,
  type McpTaskSettings,
} from './mcp/client/mcp-config';
export { McpConfigError, type McpConfigErrorCode } from './mcp/client/mcp-config-error';
// MCP: OAuth clients of protected servers (docs/mcp.md, "MCP in production")
export { type McpOAuthSettings, type McpSecretReference } from './mcp/client/mcp-oauth-config';
export { McpOAuthError, type McpOAuthErrorCode } from './mcp/client/mcp-oauth-error';
export type { McpOAuthRuntime } from './mcp/client/mcp-client-pool';
export { MCP_IDEMPOTENCY_KEY_META } from './mcp/client/mcp-client-pool';

// MCP: our tools served over MCP (docs/mcp.md; docs/mcp-security.md)
export { createDurableMcpServer, type DurableMcpServerOptions } from './mcp/server/mcp-server';
export { SHARED_MCP_CALLER, type McpCaller } from './mcp/server/mcp-caller';
export {
  staticTokenAuthenticator,
  type McpCallerAuthenticator,
  type McpNamedToken,
} from './mcp/server/mcp-caller-auth';
export {
  startMcpHttpListener,
  MCP_HTTP_MAX_BODY_BYTES,
  type McpHttpListener,
  type McpHttpListenerOptions,
} from './mcp/server/mcp-http-listener';
export {
  MCP_PROTECTED_RESOURCE_METADATA_PATH,
  type McpOAuthOptions,
  type McpProtectedResourceMetadata,
} from './mcp/server/mcp-oauth-resource';
export {
  MCP_OAUTH_DEFAULT_SCOPES,
  mcpReadOnlyToolNames,
  type McpToolScopeOptions,
} from './mcp/server/mcp-oauth-scopes';
export {
  MCP_APPROVALS_SCOPE,
  mcpApproversByName,
  mcpApproversByScope,
  type McpApprovalOptions,
  type McpApproverRequest,
  type McpApproverRule,
} from './mcp/server/mcp-approver-rules';

// Reading encrypted runs: the codec server (docs/security.md, "Encryption")
export {
  startCodecServer,
  CodecServerConfigError,
  type CodecServer,
  type CodecServerOptions,
} from './encryption/codec-server';

// Approvals: tool policy and the audit trail (docs/approvals.md)
export type { ToolApprovalPolicy, ApprovalPredicate } from './contract/approval-policy';
export type { ApprovalAuditRecord, ApprovalOutcome, ApprovalDecisionKind } from './contract/approval-types';
export type { WorkerApprovalConfig } from './activities/approval-activities';
export { createAuditStore, type AuditStoreConfig } from './stores/audit/create-audit-store';
export type { AuditStore, AuditQuery } from './stores/audit/audit-store';
export { SqliteAuditStore } from './stores/audit/sqlite-audit-store';
export { PostgresAuditStore, type PostgresAuditStoreOptions } from './stores/audit/postgres-audit-store';
export { AuditStoreError, type AuditStoreErrorCode } from './stores/audit/audit-store-error';

// Tracing and metrics (OpenTelemetry; docs/telemetry.md)
export type { WorkerTelemetryOptions } from './telemetry/worker-telemetry';
export type { WorkerTracingOptions } from './telemetry/worker-tracing';
export { TRACING_WORKFLOW_MODULES } from './telemetry/tracing-workflow-modules';
export { startTelemetryFromEnv, type TelemetryEnvConfig, type StartedTelemetry } from './telemetry/telemetry-from-env';
export { TelemetryConfigError, type TelemetryConfigErrorCode } from './telemetry/telemetry-config-error';
export { ENGINE_METRICS } from './telemetry/engine-metrics';
export { TOOL_CALL_SPAN_ATTRIBUTES, type ToolCallOutcome } from './telemetry/tool-call-telemetry';
export { RUN_SPANS } from './workflows/run-tracing';
