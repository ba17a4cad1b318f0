/**
 * `durable-tools/worker`: what a worker process needs — the tool-authoring names of the root entry, the stores
 * (by their factories; every backend is a `kind` of the config), model providers, `createWorker`, MCP servers'
 * tools (`createMcpHost`, `withMcpTools`) and serving tools over MCP, the audit trail, telemetry and the codec
 * server. Every error class is in the `errors` namespace.
 *
 * A name is added here only when a worker author needs it in their own code; a type reachable from an exported
 * signature (an option's field, a method's result) is not exported on its own. api/HISTORY.md lists what left.
 *
 * @packageDocumentation
 */
export * from './entries/common';
export * from './entries/tools';

// Async-job tools: the callback endpoint (docs/long-calls.md)
export { completeJobCallback } from './long-calls/complete-job-callback';
export { startJobCallbackServer } from './long-calls/job-callback-server';

// Stores: idempotency keys, transcripts and claim checks, the approvals' audit trail (docs/operations.md)
export {
  createIdempotencyStore,
  createIdempotencyReaper,
  type IdempotencyStore,
  type IdempotencyStoreConfig,
} from './stores/idempotency';
export type { TranscriptStore } from './stores/transcripts/transcript-store';
export { createTranscriptStore, type TranscriptStoreConfig } from './stores/transcripts/create-transcript-store';
export { createPayloadReaper } from './stores/transcripts/payload-reaper';
export { createAuditStore, type AuditStoreConfig } from './stores/audit/create-audit-store';
export type { AuditStore } from './stores/audit/audit-store';
export { createToolLimitStore, type ToolLimitStoreConfig } from './stores/limits/create-tool-limit-store';
export type { ToolLimitStore } from './stores/limits/tool-limit-store';
export type { ApprovalAuditRecord } from './contract/approval-types';

// Models (docs/models.md)
export type {
  ModelProvider,
  ModelRequest,
  ModelTurn,
  ModelToolCall,
  TranscriptMessage,
  ModelCallContext,
  ModelUsage,
} from './contract/model-types';
export { aiSdkModelProvider } from './model/ai-sdk-model-provider';
export {
  createConfiguredModelProvider,
  modelProvidersFromEnv,
  type ModelProviderConfig,
} from './model/configured-model-providers';
export { classifyModelError } from './model/model-failure';

// The worker: the plugin for your own Temporal Worker (docs/own-worker.md), or one made for you
export { durableTools, type DurableToolsOptions, type DurableToolsPlugin } from './runtime/durable-tools-plugin';
export {
  createWorker,
  runWorkerProcess,
  type CreateWorkerOptions,
  type DurableToolsWorker,
} from './runtime/create-worker';
// Determinism check before a deploy: recorded runs replayed against the current workflow code (docs/replay.md)
export { replayAgentRuns } from './runtime/replay-agent-runs';
// Logs without task tokens, for a Temporal runtime you install yourself (docs/at-rest.md)
export { privateRuntimeLogger } from './telemetry/private-logs';

// MCP: servers' tools as durable activities (docs/mcp.md)
export { createMcpHost, withMcpTools, McpHost, type McpHostOptions } from './mcp/client/mcp-host';
export { loadMcpConfigFile, type McpServersConfig } from './mcp/client/mcp-config';
export { MCP_IDEMPOTENCY_KEY_META } from './mcp/client/mcp-client-pool';

// MCP: our tools served over MCP (docs/mcp.md; docs/mcp-security.md)
export { createDurableMcpServer, type DurableMcpServerOptions } from './mcp/server/mcp-server';
export { modernMcpServerFactory } from './mcp/server/mcp-modern-server';
export type { McpCaller } from './mcp/server/mcp-caller';
export { staticTokenAuthenticator } from './mcp/server/mcp-caller-auth';
export { startMcpHttpListener, type McpHttpListenerOptions } from './mcp/server/mcp-http-listener';
export { mcpReadOnlyToolNames } from './mcp/server/mcp-oauth-scopes';
export { mcpApproversByName, mcpApproversByScope } from './mcp/server/mcp-approver-rules';
export { mcpStreamReaders } from './mcp/server/mcp-stream-readers';

// Reading encrypted runs: the codec server (docs/security.md, "Encryption")
export { startCodecServer } from './encryption/codec-server';

// Tracing and metrics (OpenTelemetry; docs/telemetry.md)
export type { WorkerTelemetryOptions } from './telemetry/worker-telemetry';
export { startTelemetryFromEnv } from './telemetry/telemetry-from-env';
export { ENGINE_METRICS } from './telemetry/engine-metrics';
export { TOOL_CALL_SPAN_ATTRIBUTES } from './telemetry/tool-call-telemetry';
export { RUN_SPANS } from './workflows/run-tracing';
export { TRACING_WORKFLOW_MODULES } from './telemetry/tracing-workflow-modules';
