/** Workflow entry point for the worker bundle. Deterministic code only. */
export { agentRun } from './agent-run';
export { mcpToolCall } from './mcp-tool-call';
export { durableToolCatalog } from './durable-tool-catalog';
export { agentConversation } from './conversation';
