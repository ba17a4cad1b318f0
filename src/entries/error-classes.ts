/**
 * The `errors` namespace of the package: every error class a durable-tools function throws at its caller, each
 * with the union of its codes (`errors.McpConfigError`, `errors.McpConfigErrorCode`, ...). All extend
 * `DurableToolsError`, so most code needs none of them:
 *
 * ```ts
 * if (error instanceof DurableToolsError && error.code === 'NAME_COLLISION') ...      // by code
 * if (error instanceof errors.McpConfigError) ...                                        // by class, when a code is shared
 * ```
 *
 * The errors a tool throws (`TransientToolError`, `PermanentToolError`, `RateLimitedToolError`, `HttpStatusError`)
 * and the base class stay top-level names; the errors of `durable-tools/testing` stay there. Every class here
 * lives in a file that loads no worker, client or driver code, so each entry can export the namespace.
 *
 * Not an entry and not a list of top-level names: `error-family.ts` exports it as `errors`.
 *
 * @packageDocumentation
 */

// Defining tools and running them
export { ToolDefinitionError, type ToolDefinitionErrorCode } from '../contract/tool-definition-error';
export { ArgumentGuardConfigError, type ArgumentGuardConfigErrorCode } from '../guard/argument-guard-options';
export { CheckpointError, type CheckpointErrorCode } from '../tools/checkpoint-error';
export { LeaseLostError, type LeaseLostErrorCode } from '../failures/lease-lost-error';
export { JobCallbackError, type JobCallbackErrorCode } from '../long-calls/job-callback-error';

// Stores, encryption, models, telemetry
export { IdempotencyStoreError, type IdempotencyStoreErrorCode } from '../stores/idempotency/idempotency-store-error';
export { TranscriptStoreError, type TranscriptStoreErrorCode } from '../stores/transcripts/transcript-store-error';
export { AuditStoreError, type AuditStoreErrorCode } from '../stores/audit/audit-store-error';
export { StreamStoreError, type StreamStoreErrorCode } from '../stores/streams/stream-store-error';
export { EncryptionError, type EncryptionErrorCode } from '../encryption/encryption-error';
export { CodecServerConfigError } from '../encryption/codec-server-config-error';
export { ModelConfigError, type ModelConfigErrorCode } from '../model/model-config-error';
export { TelemetryConfigError, type TelemetryConfigErrorCode } from '../telemetry/telemetry-config-error';
export { ReplayAgentRunsError, type ReplayAgentRunsErrorCode } from '../runtime/replay-agent-runs-error';

// MCP
export { McpConfigError, type McpConfigErrorCode } from '../mcp/client/mcp-config-error';
export { McpOAuthError, type McpOAuthErrorCode } from '../mcp/client/mcp-oauth-error';

// Clients: starting, forking, evaluating and approving runs, serving their stream
export { AgentRunStartError, type AgentRunStartErrorCode } from '../client/agent-run-start-error';
export { PayloadBudgetError, type PayloadBudgetErrorCode } from '../client/payload-budget-error';
export { AgentRunForkError, type AgentRunForkErrorCode } from '../client/agent-run-fork-error';
export { EvalSuiteError, type EvalSuiteErrorCode } from '../client/eval-suite';
export { ApprovalError, type ApprovalErrorCode } from '../client/approval-error';
export { AgentAnswerError, type AgentAnswerErrorCode } from '../client/agent-answer-error';
export { AgentRunStreamServerConfigError } from '../client/agent-run-stream-server-config-error';
