/**
 * What a tools module imports: `defineTool` and its variants (sub-agents, handoffs, async jobs), the tool types,
 * the errors a tool throws to say how it failed, and the helpers that pass the call's idempotency key downstream.
 * A file of tool definitions is loaded by the worker that runs it, read for its types by the workflows that call
 * it (`proxyTools<typeof tools>`) and by clients, so this list loads no worker, no client, no SQLite and no
 * Postgres code: only zod and Temporal's common package.
 *
 * Not an entry of its own: the root `durable-tools` is this list, and `durable-tools/worker` re-exports it.
 *
 * @packageDocumentation
 */
export * from './error-family';

// Defining tools (docs/tools.md)
export { defineTool, type ToolSpec, type Tool } from '../tools/define-tool';
export type { ToolContext } from '../tools/tool-context';
// Per-tool limits across workers and the shared breaker (docs/limits.md)
// Sub-agents and handoffs (docs/sub-agents.md)
export { defineAgentTool, defineHandoff } from '../tools/define-agent-tool';
// Agents defined once: a run, a sub-agent or handoff, a tool of the MCP server (docs/agents.md)
export { defineAgent, type AgentSpec, type AgentDefinition, type AgentAnswer } from '../agents/define-agent';
export { agentTool } from '../agents/agent-tool';
// Async-job tools: submit now, result by callback or polling (docs/long-calls.md)
export { defineAsyncJobTool } from '../tools/define-async-job-tool';
export { compensationInput } from '../tools/compensation-input';

// How a tool failed (docs/failures.md)
export {
  TransientToolError,
  PermanentToolError,
  RateLimitedToolError,
  HttpStatusError,
  httpErrorFromResponse,
  throwForHttpStatus,
} from '../failures/tool-errors';

// The call's idempotency key, passed downstream (docs/exactly-once.md)
export { withIdempotencyKey, idempotentFetch } from '../tools/idempotent-fetch';
