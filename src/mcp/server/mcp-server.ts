import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { withIncomingTraceContext } from '../../telemetry/incoming-trace-context';
import {
  CallToolRequestParamsSchema,
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type CreateTaskResult,
  type Tool as McpToolListing,
} from '@modelcontextprotocol/sdk/types.js';
import { WorkflowExecutionAlreadyStartedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { z } from 'zod';
import { ensureApprovalSearchAttribute } from '../../client/approval-search-attribute';
import { clientAddress } from '../../client/agent-run-client';
import { fingerprint } from '../../stores/idempotency/canonical-json';
import type { ToolCatalogEntry } from '../../contract/tool-catalog-entry';
import { modelVisibleTools } from '../../contract/tool-visibility';
import { approvalRequested, approvalRequiredResult } from './mcp-approval-wait';
import type { PendingApproval } from '../../client/approval-client';
import { identityRecord, STARTED_BY_MEMO } from '../../contract/caller-identity';
import { GRANTED_TOOLS_MEMO, type RunGrant } from '../../contract/run-grant';
import { mcpGrantedTools, type McpRunAuthorityOptions, type McpStarting } from './mcp-run-authority';
import { agentRunTools, type AgentRunTool } from './mcp-agent-run-tools';
import { agentTools } from './mcp-agent-tools';
import { conversationTools } from './mcp-conversation-tools';
import type { AgentDefinition } from '../../agents/define-agent';
import { approvalTools, type ApprovalTool } from './mcp-approval-tools';
import { mcpApproversByScope, type McpApprovalOptions } from './mcp-approver-rules';
import {
  DEFAULT_MCP_SERVER_NAME,
  mcpCallerScope,
  mcpCallWorkflowIdIn,
  SHARED_MCP_CALLER,
  type McpCaller,
} from './mcp-caller';
import { mcpIdempotencyKeyOf } from './mcp-idempotency-key';
import { callToolErrorOf } from './mcp-tool-call-result';
import { logCallOutcome } from './mcp-call-outcome-log';
import { watchCall } from './mcp-call-watch';
import { McpLogLevels, type McpRequestLog } from './mcp-logging';
import { MCP_CALL_WORKFLOW, TemporalTaskStore, toolCallResult } from './temporal-task-store';

/** Options of {@link createDurableMcpServer}. */
export interface DurableMcpServerOptions {
  /** Temporal client the calls are started with. */
  client: Client;
  /** Task queue of the workers that run the tools. */
  taskQueue: string;
  /** The tools to serve (undo tools are not served: the engine calls them). */
  catalog: readonly ToolCatalogEntry[];
  /** Also serve `start_agent_run` and `get_agent_run` (default true). */
  agentRuns?: boolean;
  /**
   * Agents served as tools (docs/agents.md): each by its name, called with `{ task }`, runs the agent and answers
   * with its result (`durable-tools mcp` serves the tools module's `agents` export).
   */
  agents?: readonly AgentDefinition[];
  /**
   * The server's name (default `durable-tools`): reported to clients, and part of every caller's scope, so two servers
   * of other names never reach each other's calls, tasks or runs.
   */
  name?: string;
  /**
   * Who this server (one per session over HTTP) answers: its calls, tasks and runs are scoped to this caller, and
   * another caller's are answered as unknown. Default {@link SHARED_MCP_CALLER} (no authentication).
   */
  caller?: McpCaller;
  /**
   * Serve `list_pending_approvals` and `decide_approval` (default: yes, with the default rules: approvers are OAuth
   * tokens with the `approvals` scope, and nobody approves its own call); `false` serves neither.
   */
  approvals?: McpApprovalOptions | false;
  /**
   * Give every call and agent run this server starts its authority (docs/security.md, "Authority of a run"): the
   * tools its caller asked for and may call (per-tool scopes, named callers' tools), recorded in the workers' grant
   * store before the workflow starts. The tool activity then refuses any other call of that run or of its children
   * (`TOOL_NOT_PERMITTED`), whatever path schedules it. Without it runs have no grant.
   */
  authority?: McpRunAuthorityOptions;
}

/** `tools/call` as the SDK parses it, plus SEP-3182's `params.idempotencyKey` (which the SDK's schema drops). */
const CallToolWithKeySchema = CallToolRequestSchema.extend({
  params: CallToolRequestParamsSchema.extend({ idempotencyKey: z.unknown().optional() }),
});

/**
 * An MCP server (low-level SDK `Server`) whose every `tools/call` runs durably as a Temporal workflow
 * (`mcpToolCall`): the same guard, idempotency key, classified retries and compensation as a step of an agent run.
 *
 * - The idempotency key comes from `params.idempotencyKey` (SEP-3182), `_meta.idempotencyKey` or
 *   `_meta["io.durable-tools/idempotency-key"]` (see {@link mcpIdempotencyKeyOf}). The workflow id is
 *   `mcp-call-<caller scope>-` + SHA-256 of the key, so repeating a call with the same key returns the first call's
 *   result and runs nothing again; the same key with other arguments is refused (`IDEMPOTENCY_CONFLICT`). Without a
 *   key each call is new. Another caller's key, task or call is never reached (see {@link mcpCallerScope}).
 * - A client's `notifications/cancelled` cancels the workflow (so the tool's activity, and undoes a compensable call).
 * - The `logging` capability: each session sets its level (`logging/setLevel`); the server tells the client about
 *   its calls (`notifications/message`, logger `durable-tools`: started, retried attempts with their error codes,
 *   progress, finished or failed), never their arguments, outputs, keys or tokens (see {@link McpLogLevels}).
 * - `list_pending_approvals` and `decide_approval` let an approver decide the calls that wait for approval, recorded
 *   under the authenticated caller's name (see {@link McpApprovalOptions} and docs/mcp.md).
 * - `tools/call` with `task` returns at once with task id = workflow id; `tasks/get`, `tasks/result`, `tasks/cancel`
 *   and `tasks/list` are answered from Temporal ({@link TemporalTaskStore}).
 */
export function createDurableMcpServer(options: DurableMcpServerOptions): Server {
  const surface = durableMcpSurface(options);
  const { name, caller, tasks } = surface;
  const server = new Server(
    { name, version: '0.1.0' },
    {
      capabilities: {
        tools: { listChanged: false },
        logging: {},
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      },
      taskStore: tasks,
      instructions: MCP_SERVER_INSTRUCTIONS,
    },
  );
  const levels = new McpLogLevels();
  levels.install(server);

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: surface.listTools() }));

  server.setRequestHandler(
    CallToolWithKeySchema,
    async (request, extra): Promise<CallToolResult | CreateTaskResult> => {
      const log = levels.requestLog(extra);
      const scopes = extra.authInfo ? new Set(extra.authInfo.scopes) : undefined;
      const key = mcpIdempotencyKeyOf(request.params);
      const call = await surface.startToolCall(request.params, key, scopes, log);
      if ('result' in call) return call.result;
      const { handle, entry } = call;
      if (request.params.task) {
        const task = await tasks.getTask(handle.workflowId);
        if (!task) throw new Error(`The workflow ${handle.workflowId} vanished.`);
        return { task };
      }
      return awaitCall(options.client, { handle, entry, keyed: key !== undefined }, log, extra.signal);
    },
  );
  SERVED_CALLERS.set(server, caller);
  return server;
}

/** What the server tells clients at the start (2025-11-25 `initialize`, 2026-07-28 `server/discover`). */
export const MCP_SERVER_INSTRUCTIONS =
  'Every tool call runs durably on Temporal. Send an idempotency key (params.idempotencyKey or _meta.idempotencyKey) to make a retried call safe.';

/** The parameters of a `tools/call` the surface reads (both protocol revisions). */
export interface McpToolCallParams {
  name: string;
  arguments?: Record<string, unknown> | undefined;
  _meta?: Record<string, unknown> | undefined;
}

/**
 * What one caller reaches on a durable MCP server, whichever protocol revision asks: the tools it lists, and the start
 * of a call (a built-in tool answers at once; a served tool's durable call is started or found by its key).
 */
export interface DurableMcpSurface {
  name: string;
  caller: McpCaller;
  scope: string;
  tasks: TemporalTaskStore;
  /** The approval tools served (empty with `approvals: false`). */
  decisionTools: ReadonlyMap<string, ApprovalTool>;
  listTools(): McpToolListing[];
  /**
   * Whether this caller (with these OAuth scopes) may approve its own waiting calls: an approver, where self-approval
   * is allowed. Only then is the caller asked for a decision in-band (2026-07-28 `InputRequiredResult`).
   */
  mayApproveOwnCalls(scopes: ReadonlySet<string> | undefined): boolean;
  /** The served tool of this name (not a built-in one), if any. */
  servedTool(name: string): ToolCatalogEntry | undefined;
  /**
   * Starts (or finds, by its key) the durable call of `params.name`; a built-in tool, an unknown tool or a key used
   * with other arguments answers at once with `result`.
   */
  startToolCall(
    params: McpToolCallParams,
    key: string | undefined,
    scopes: ReadonlySet<string> | undefined,
    log: McpRequestLog,
  ): Promise<{ result: CallToolResult } | { handle: WorkflowHandle; entry: ToolCatalogEntry }>;
}

/** The surface of {@link createDurableMcpServer} for its caller: shared by the 2025-11-25 and 2026-07-28 servers. */
export function durableMcpSurface(options: DurableMcpServerOptions): DurableMcpSurface {
  const name = options.name ?? DEFAULT_MCP_SERVER_NAME;
  const caller = options.caller ?? SHARED_MCP_CALLER;
  const scope = mcpCallerScope(name, caller);
  const tasks = new TemporalTaskStore(options.client, { scope });
  const served = new Map(modelVisibleTools(options.catalog).map((entry) => [entry.name, entry]));
  const catalogNames = options.catalog.map((entry) => entry.name);
  // What a start by this caller records: who started it, and (with `authority`) the run's grant.
  const starting: McpStarting = (tokenScopes, requested) => ({
    startedBy: identityRecord(caller),
    ...(options.authority
      ? {
          grant: {
            store: options.authority.grants,
            tools: mcpGrantedTools(catalogNames, options.authority, { caller, tokenScopes, requested }),
          },
        }
      : {}),
  });
  const runTools = new Map<string, AgentRunTool>([
    ...(options.agentRuns === false ? [] : agentRunTools(options.client, options.taskQueue, scope, starting)),
    ...agentTools(options.client, options.taskQueue, scope, options.agents ?? []),
    ...conversationTools({ client: options.client, taskQueue: options.taskQueue, scope }, options.agents ?? []),
  ]);
  const decisionTools =
    options.approvals === false
      ? new Map<string, ApprovalTool>()
      : approvalTools(options.client, { taskQueue: options.taskQueue, scope, caller }, options.approvals);

  return {
    name,
    caller,
    scope,
    tasks,
    decisionTools,
    listTools: () => [
      ...[...served.values()].map(listingOf),
      ...[...runTools.values(), ...decisionTools.values()].map((tool) => tool.listing),
    ],
    mayApproveOwnCalls: (scopes) => {
      if (options.approvals === false || options.approvals?.allowSelfApproval !== true) return false;
      const isApprover = options.approvals.approvers ?? mcpApproversByScope();
      return isApprover({ caller, ...(scopes ? { scopes } : {}) });
    },
    servedTool: (tool) => served.get(tool),
    startToolCall: async (params, key, scopes, log) => {
      const tool = params.name;
      const runTool = runTools.get(tool);
      if (runTool) return { result: await runTool.call(params.arguments ?? {}, key, scopes) };
      const decisionTool = decisionTools.get(tool);
      if (decisionTool) return { result: await decisionTool.call(params.arguments ?? {}, scopes) };
      const entry = served.get(tool);
      if (!entry) {
        log('error', { event: 'call.failed', message: 'There is no such tool.', code: 'UNKNOWN_TOOL' });
        return {
          result: callToolErrorOf(
            `UNKNOWN_TOOL: There is no tool "${tool}". Tools: ${[...served.keys(), ...runTools.keys(), ...decisionTools.keys()].join(', ')}.`,
          ),
        };
      }
      const workflowId = mcpCallWorkflowIdIn(scope, key);
      const started = await startCall(options, entry, params, { workflowId, key, ...starting(scopes, undefined) });
      if ('error' in started) {
        log('error', { event: 'call.failed', message: `${tool} was refused.`, tool, code: 'IDEMPOTENCY_CONFLICT' });
        return { result: started.error };
      }
      const { handle } = started;
      const call = { workflowId: handle.workflowId, tool };
      log('info', { event: 'call.started', message: `${tool} runs as the durable call ${call.workflowId}.`, ...call });
      return { handle, entry };
    },
  };
}

/**
 * Waits for a call the client awaits (a client's cancel cancels the workflow), telling the client what the server
 * sees of it meanwhile (retried attempts, progress) and how it ended.
 */
async function awaitCall(
  client: Client,
  call: { handle: WorkflowHandle; entry: ToolCatalogEntry; keyed: boolean },
  log: McpRequestLog,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const { handle, entry } = call;
  const watched = { workflowId: handle.workflowId, tool: entry.name };
  const cancel = () => void handle.cancel().catch(() => {});
  signal.addEventListener('abort', cancel, { once: true });
  const stopWatching = new AbortController();
  log('debug', { event: 'call.waiting', message: `Waiting for the result of ${watched.workflowId}.`, ...watched });
  // Retries are warnings and progress is info: nothing to watch for a session that wants neither.
  if (log.passes('warning')) void watchCall(client, watched, log, AbortSignal.any([signal, stopWatching.signal]));
  try {
    const result = await resultOrApprovalRequest(client, handle.workflowId, entry, call.keyed);
    if (!signal.aborted) logCallOutcome(log, watched, result);
    return result;
  } finally {
    stopWatching.abort();
    signal.removeEventListener('abort', cancel);
  }
}

/** The caller each server made by {@link createDurableMcpServer} answers. */
const SERVED_CALLERS = new WeakMap<Server, McpCaller>();

/** The caller a server made by {@link createDurableMcpServer} answers; undefined for any other server. */
export function durableMcpServerCaller(server: Server): McpCaller | undefined {
  return SERVED_CALLERS.get(server);
}

/**
 * The workflow id of a call by `caller` (default: the shared identity) on the server named `server` (default
 * `durable-tools`): derived from the caller's scope and key, or new without a key.
 */
export function mcpCallWorkflowId(
  idempotencyKey: string | undefined,
  by: { server?: string; caller?: McpCaller } = {},
): string {
  return mcpCallWorkflowIdIn(
    mcpCallerScope(by.server ?? DEFAULT_MCP_SERVER_NAME, by.caller ?? SHARED_MCP_CALLER),
    idempotencyKey,
  );
}

async function startCall(
  options: DurableMcpServerOptions,
  entry: ToolCatalogEntry,
  params: McpToolCallParams,
  start: { workflowId: string; key: string | undefined } & ReturnType<McpStarting>,
): Promise<{ handle: WorkflowHandle } | { error: CallToolResult }> {
  const { workflowId, key } = start;
  const args = params.arguments ?? {};
  const argumentsDigest = fingerprint(args);
  let handle: WorkflowHandle;
  // The call's grant, before its workflow exists (a grant already recorded for the id stays: the first call's).
  if (start.grant) await start.grant.store.recordGrant(callGrant(workflowId, start));
  try {
    const trackApprovalSearchAttribute = await ensureApprovalSearchAttribute(
      options.client,
      clientAddress(options.client),
    );
    // A caller's `_meta.traceparent` parents the StartWorkflow span of a traced client: the call joins its trace.
    handle = await withIncomingTraceContext(params._meta, () =>
      options.client.workflow.start(MCP_CALL_WORKFLOW, {
        taskQueue: options.taskQueue,
        workflowId,
        args: [{ tool: entry.name, arguments: args, trackApprovalSearchAttribute }],
        memo: {
          tool: entry.name,
          argumentsDigest,
          structured: isObjectSchema(entry.outputSchema),
          [STARTED_BY_MEMO]: start.startedBy,
          ...(start.grant ? { [GRANTED_TOOLS_MEMO]: callGrant(workflowId, start).tools } : {}),
        },
        staticSummary: `MCP call: ${entry.name}`,
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      }),
    );
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    handle = options.client.workflow.getHandle(workflowId);
  }
  if (key !== undefined) {
    const memo = (await handle.describe()).memo ?? {};
    if (memo['tool'] !== entry.name || memo['argumentsDigest'] !== argumentsDigest) {
      return {
        error: callToolErrorOf(
          `IDEMPOTENCY_CONFLICT: The idempotency key was already used for another call (${String(memo['tool'])} with other arguments). Use a new key for a new call.`,
        ),
      };
    }
  }
  return { handle };
}

/**
 * The call's result; or, for a tool that may need approval, an `APPROVAL_REQUIRED` answer as soon as the call
 * waits for a human decision (the call keeps waiting; see mcp-approval-wait.ts).
 */
async function resultOrApprovalRequest(
  client: Client,
  workflowId: string,
  entry: ToolCatalogEntry,
  keyed: boolean,
): Promise<CallToolResult> {
  const outcome = await callOutcome(client, workflowId, entry);
  return 'result' in outcome ? outcome.result : approvalRequiredResult(outcome.waiting, keyed, workflowId);
}

/**
 * The call's result, or the step it waits on for a human decision, whichever comes first (a tool that never needs
 * approval only has a result). Aborting `signal` stops the wait (nothing happens to the call); the outcome is then
 * an error result nobody should read. `decided` names steps just decided (not waiting any more).
 */
export async function callOutcome(
  client: Client,
  workflowId: string,
  entry: ToolCatalogEntry,
  signal?: AbortSignal,
  decided?: (waiting: PendingApproval) => boolean,
): Promise<{ result: CallToolResult } | { waiting: PendingApproval }> {
  // A sub-agent's own tools may wait for a decision, whatever the agent tool itself declares.
  if (entry.approval === 'never' && !entry.agent) return { result: await toolCallResult(client, workflowId, signal) };
  const stop = new AbortController();
  const stopped = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
  try {
    const first = await Promise.race([
      toolCallResult(client, workflowId, stopped).then((result) => ({ result })),
      approvalRequested(client, workflowId, stopped, decided).then((waiting) => ({ waiting })),
    ]);
    if ('result' in first) return first;
    return first.waiting ? { waiting: first.waiting } : { result: await toolCallResult(client, workflowId, signal) };
  } finally {
    stop.abort();
  }
}

/** The grant of an MCP tool call's workflow: every tool its caller may call (an agent tool's child draws on them). */
function callGrant(workflowId: string, start: ReturnType<McpStarting>): RunGrant {
  const tools = [...new Set(start.grant!.tools)].sort();
  return { workflowId, tools, holder: start.startedBy, grantedAt: Date.now() };
}

function listingOf(entry: ToolCatalogEntry): McpToolListing {
  const { $schema: _drop, ...inputSchema } = entry.inputSchema;
  const { $schema: _dropOut, ...outputSchema } = entry.outputSchema;
  return {
    name: entry.name,
    description: entry.description,
    inputSchema: { type: 'object', ...inputSchema },
    ...(isObjectSchema(entry.outputSchema) ? { outputSchema: { type: 'object', ...outputSchema } } : {}),
    annotations: {
      readOnlyHint: entry.effect === 'read-only',
      destructiveHint: entry.effect === 'irreversible',
      idempotentHint: entry.effect === 'read-only' || entry.idempotent,
      openWorldHint: true,
    },
    execution: { taskSupport: 'optional' },
  };
}

function isObjectSchema(schema: Record<string, unknown>): boolean {
  return schema['type'] === 'object';
}
