import { createHash, randomUUID } from 'node:crypto';

/**
 * Who calls the MCP server, as authentication established it. Everything a caller creates through the server
 * (tool-call workflows and their tasks, agent runs) is scoped to its identity: another caller is answered as if
 * it did not exist. The static tokens of `DURABLE_TOOLS_MCP_TOKENS` map each token to `{ subject: "token:<name>" }`;
 * the OAuth mode (`oauth` of the listener, `--oauth-issuer`) maps a verified access token to its `sub` and
 * `client_id` (or `azp`), and its issuer.
 */
export interface McpCaller {
  /** The authenticated principal (a token's name, an OAuth `sub`). */
  readonly subject: string;
  /** The client application acting for the subject (an OAuth `client_id`), when known. */
  readonly clientId?: string;
  /**
   * The issuer whose subject this is (OAuth mode: the configured issuer). A person is a subject of an issuer: four
   * eyes compare people, whatever client each call came through (`samePerson`).
   */
  readonly issuer?: string;
}

/**
 * The one identity every caller shares when the server has no authentication (stdio, or HTTP on loopback without a
 * token): they all see each other's calls, tasks and runs, as before scoping existed.
 */
export const SHARED_MCP_CALLER: McpCaller = Object.freeze({ subject: 'shared' });

/** The server name {@link createDurableMcpServer} uses when none is given. */
export const DEFAULT_MCP_SERVER_NAME = 'durable-tools';

/** Workflow ids of MCP tool calls start with this; only those are tasks. */
export const MCP_CALL_WORKFLOW_PREFIX = 'mcp-call-';
/** Workflow ids of agent runs started through MCP (`start_agent_run`) start with this. */
export const MCP_AGENT_RUN_PREFIX = 'agent-run-mcp-';

/**
 * The scope of a caller on a server: 20 hex digits of SHA-256 over (server name, subject, client id). It is part of
 * every workflow id the caller's calls and runs get, so two callers, or two servers, never reach the same workflow,
 * whatever keys they send; and it bounds the id's length whatever the subject is.
 */
export function mcpCallerScope(serverName: string, caller: McpCaller): string {
  return createHash('sha256')
    .update(JSON.stringify([serverName, caller.subject, caller.clientId ?? null]))
    .digest('hex')
    .slice(0, 20);
}

/**
 * The workflow id of an MCP tool call: `mcp-call-<scope>-` then 40 hex digits of SHA-256 of the caller's idempotency
 * key (so a repeated call with the same key reaches the same workflow), or a new UUID without a key.
 */
export function mcpCallWorkflowIdIn(scope: string, idempotencyKey: string | undefined): string {
  return `${MCP_CALL_WORKFLOW_PREFIX}${scope}-${idempotencyKey === undefined ? randomUUID() : keyDigest(idempotencyKey, 40)}`;
}

/** The workflow id of an agent run started through MCP: `agent-run-mcp-<scope>-` then a key digest or a new UUID. */
export function mcpAgentRunIdIn(scope: string, idempotencyKey: string | undefined): string {
  return `${MCP_AGENT_RUN_PREFIX}${scope}-${idempotencyKey === undefined ? randomUUID() : keyDigest(idempotencyKey, 32)}`;
}

/** Whether `workflowId` is an MCP tool call of the caller with this scope. */
export function isMcpCallOf(scope: string, workflowId: string): boolean {
  return workflowId.startsWith(`${MCP_CALL_WORKFLOW_PREFIX}${scope}-`);
}

/** Whether `workflowId` is an agent run started through MCP by the caller with this scope. */
export function isMcpAgentRunOf(scope: string, workflowId: string): boolean {
  return workflowId.startsWith(`${MCP_AGENT_RUN_PREFIX}${scope}-`);
}

function keyDigest(key: string, length: number): string {
  return createHash('sha256').update(key).digest('hex').slice(0, length);
}
