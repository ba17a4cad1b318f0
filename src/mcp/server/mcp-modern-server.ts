/**
 * The durable MCP server for protocol revision 2026-07-28 (MCP SDK v2 `Server`), made for one request: stateless,
 * so no session and no `initialize`; the SDK answers `server/discover` and reads each request's version and
 * capabilities from its `_meta`. The tools, keys, caller scopes and authority are those of the 2025-11-25 server
 * ({@link durableMcpSurface}); what differs:
 *
 * - A broken stream is not a cancel: the client re-issues the request, and the same idempotency key reaches the same
 *   workflow, which answers with the first call's result (one effect).
 * - A client that declares the tasks extension gets every durable call as a task (`resultType: "task"`, task id =
 *   workflow id) and `tasks/get`, `tasks/update`, `tasks/cancel` (see mcp-extension-tasks.ts).
 * - A call that waits for approval answers an `InputRequiredResult` to a client that declares form elicitation
 *   (see mcp-approval-input.ts); otherwise the `APPROVAL_REQUIRED` result of 2025-11-25.
 * - `tools/list` and `server/discover` carry cache hints (`ttlMs`, `cacheScope: "private"`).
 * - Logging (`logging/setLevel`, deprecated by 2026-07-28) is not served on this revision.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  inputResponse,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolResult,
  type InputRequiredResult,
  type RequestStateCodec,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server';
import { randomBytes } from 'node:crypto';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { z } from 'zod';
import type { PendingApproval } from '../../client/approval-client';
import type { ToolCatalogEntry } from '../../contract/tool-catalog-entry';
import { fingerprint } from '../../stores/idempotency/canonical-json';
import {
  approvalAnswerOf,
  approvalInputKey,
  approvalInputRequired,
  approvalStateCodec,
  type McpApprovalAnswerRefusalCode,
  type McpApprovalState,
  type McpDecisionRefusalCode,
} from './mcp-approval-input';
import type { ModernMcpServerFactory } from './mcp-modern-endpoint';
import { approvalRequiredResult } from './mcp-approval-wait';
import { isMcpCallOf } from './mcp-caller';
import { extensionTasks, MCP_TASKS_EXTENSION, type McpStepDecider } from './mcp-extension-tasks';
import { mcpIdempotencyKeyOf } from './mcp-idempotency-key';
import type { McpRequestLog } from './mcp-logging';
import {
  callOutcome,
  durableMcpSurface,
  MCP_SERVER_INSTRUCTIONS,
  type DurableMcpServerOptions,
  type DurableMcpSurface,
  type McpToolCallParams,
} from './mcp-server';
import { callToolErrorOf } from './mcp-tool-call-result';

/** How long a client may believe `tools/list` and `server/discover` (the catalog is fixed while the server runs). */
export const MCP_LIST_TTL_MS = 300_000;

/** What the 2026-07-28 server needs beyond {@link DurableMcpServerOptions}. */
export interface ModernMcpServerOptions extends DurableMcpServerOptions {
  /** The codec of approval request states (one per process: its key must be shared by every server process). */
  approvalStates: (bind: () => string) => RequestStateCodec<McpApprovalState>;
  /** The scopes of the request's OAuth access token, when the server is an OAuth resource server. */
  scopes?: ReadonlySet<string>;
}

/**
 * The factory of the listener's `createModernServer`: a 2026-07-28 server of `options` for each request's caller.
 * `requestStateKey` (at least 32 bytes) signs approval request states; give every server process of one name the
 * same key so a re-issued call may reach any of them (default: a random key of this process).
 */
export function modernMcpServerFactory(
  options: Omit<DurableMcpServerOptions, 'caller'> & { requestStateKey?: string },
): ModernMcpServerFactory {
  const { requestStateKey, ...served } = options;
  const key = requestStateKey ?? randomBytes(32);
  approvalStateCodec(key, () => ''); // a key under 32 bytes is refused now, not at the first approval
  return (caller, scopes) =>
    createModernMcpServer({
      ...served,
      caller,
      ...(scopes ? { scopes } : {}),
      approvalStates: (bind) => approvalStateCodec(key, bind),
    });
}

/** A 2026-07-28 MCP server answering one request of `options.caller`. */
export function createModernMcpServer(options: ModernMcpServerOptions): Server {
  const surface = durableMcpSurface(options);
  const codec = options.approvalStates(() => surface.scope);
  const server = new Server(
    { name: surface.name, version: '0.1.0' },
    {
      capabilities: { tools: { listChanged: false }, extensions: { [MCP_TASKS_EXTENSION]: {} } },
      instructions: MCP_SERVER_INSTRUCTIONS,
      cacheHints: {
        'tools/list': { ttlMs: MCP_LIST_TTL_MS, cacheScope: 'private' },
        'server/discover': { ttlMs: MCP_LIST_TTL_MS, cacheScope: 'private' },
      },
      requestState: { verify: (state, ctx) => codec.verify(state, ctx) },
    },
  );
  const decide = stepDecider(surface, options.scopes);
  const tasks = extensionTasks(options.client, surface, decide, surface.mayApproveOwnCalls(options.scopes));

  server.setRequestHandler('tools/list', async () => ({ tools: surface.listTools() as Tool[] }));
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const params = request.params as McpToolCallParams;
    const answered = ctx.mcpReq.requestState<McpApprovalState>();
    if (answered !== undefined) {
      return answerApproval(options.client, { surface, codec, decide, scopes: options.scopes }, params, answered, ctx);
    }
    const key = keyOf(params);
    const call = await surface.startToolCall(params, key, options.scopes, silentLog);
    if ('result' in call) return call.result as CallToolResult;
    if (declares(ctx, 'tasks')) return tasks.created(call.handle.workflowId) as unknown as CallToolResult;
    return awaitModernCall(
      options.client,
      { surface, codec, scopes: options.scopes },
      call,
      params,
      key !== undefined,
      ctx,
    );
  });
  const taskId = z.looseObject({ taskId: z.string().min(1) });
  server.setRequestHandler('tasks/get', { params: taskId }, async (p, ctx) => {
    requireTasksExtension(ctx);
    return tasks.get(p.taskId);
  });
  server.setRequestHandler('tasks/cancel', { params: taskId }, async (p, ctx) => {
    requireTasksExtension(ctx);
    return tasks.cancel(p.taskId);
  });
  // The SDK lifts `inputResponses` out of the params (as for any multi round-trip answer) into the context.
  server.setRequestHandler('tasks/update', { params: taskId }, async (p, ctx) => {
    requireTasksExtension(ctx);
    return tasks.update(p.taskId, ctx.mcpReq.inputResponses ?? {});
  });
  return server;
}

/** What the handling of one `tools/call` uses: the caller's surface, the state codec, the token's scopes. */
interface ModernCallServer {
  surface: DurableMcpSurface;
  codec: RequestStateCodec<McpApprovalState>;
  scopes: ReadonlySet<string> | undefined;
}

/** Logging is not served on 2026-07-28 (deprecated there): the surface's messages go nowhere. */
const silentLog: McpRequestLog = Object.assign(() => {}, { passes: () => false });

/**
 * Waits for the call's result, or for a step to wait for approval: then an `InputRequiredResult` for a client that
 * declares form elicitation, else `APPROVAL_REQUIRED`. A broken stream (the request's signal) only stops the wait.
 */
async function awaitModernCall(
  client: Client,
  server: ModernCallServer,
  call: { handle: WorkflowHandle; entry: ToolCatalogEntry },
  params: McpToolCallParams,
  keyed: boolean,
  ctx: ServerContext,
  decided?: McpApprovalState,
): Promise<CallToolResult | InputRequiredResult> {
  const justDecided = (waiting: PendingApproval) =>
    decided !== undefined &&
    waiting.workflowId === decided.waitingWorkflowId &&
    waiting.stepId === decided.stepId &&
    waiting.digest === decided.digest;
  const outcome = await callOutcome(client, call.handle.workflowId, call.entry, ctx.mcpReq.signal, justDecided);
  if ('result' in outcome) return outcome.result as CallToolResult;
  const { waiting } = outcome;
  // The caller is asked only when it is the one who may approve (else another approver decides: four eyes).
  if (!declares(ctx, 'elicitation') || !server.surface.mayApproveOwnCalls(server.scopes)) {
    return approvalRequiredResult(waiting, keyed, call.handle.workflowId) as CallToolResult;
  }
  const state: McpApprovalState = {
    workflowId: call.handle.workflowId,
    waitingWorkflowId: waiting.workflowId,
    stepId: waiting.stepId,
    tool: params.name,
    argumentsDigest: fingerprint(params.arguments ?? {}),
    digest: waiting.digest,
  };
  return approvalInputRequired(server.codec, state, waiting, ctx);
}

/**
 * The re-issued call that answers an approval: the (verified, caller-bound) state must name this tool and these
 * arguments, the answer decides the step as the caller, and the call's outcome follows.
 */
async function answerApproval(
  client: Client,
  server: ModernCallServer & { decide: McpStepDecider },
  params: McpToolCallParams,
  state: McpApprovalState,
  ctx: ServerContext,
): Promise<CallToolResult | InputRequiredResult> {
  if (!isMcpCallOf(server.surface.scope, state.workflowId)) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid or expired requestState', {
      reason: 'invalid_request_state',
    });
  }
  if (state.tool !== params.name || state.argumentsDigest !== fingerprint(params.arguments ?? {})) {
    return refusal(
      'APPROVAL_ARGUMENTS_CHANGED',
      `The approval was asked for "${state.tool}" with other arguments than this call's: nothing was decided.`,
      'Re-issue the call exactly as it was asked (same tool and arguments) with the answer, or make a new call.',
    );
  }
  const waiting: PendingApproval = {
    workflowId: state.waitingWorkflowId,
    stepId: state.stepId,
    digest: state.digest,
    tool: state.tool,
    arguments: undefined,
    requestedAt: 0,
    deadline: 0,
    goal: '',
  };
  const key = approvalInputKey(waiting);
  const view = inputResponse(ctx.mcpReq.inputResponses, key);
  const answer = approvalAnswerOf(view.kind === 'elicit' ? { action: view.action, content: view.content } : undefined);
  if (!answer) {
    return refusal(
      'INVALID_ARGUMENTS',
      `The re-issued call carries no answer to ${key}.`,
      'Answer the approval form (approve or reject) and re-issue the call with it.',
    );
  }
  const { refused } = await server.decide(waiting, answer);
  if (refused) return refusal(refused.code, refused.message, 'Nothing was decided.');
  return awaitDecided(client, server, state, params, ctx);
}

/** After a decision: the outcome of the call the state names (which may ask for another approval). */
async function awaitDecided(
  client: Client,
  server: ModernCallServer,
  state: McpApprovalState,
  params: McpToolCallParams,
  ctx: ServerContext,
): Promise<CallToolResult | InputRequiredResult> {
  const handle = client.workflow.getHandle(state.workflowId);
  const entry = server.surface.servedTool(state.tool);
  if (!entry) return callToolErrorOf(`UNKNOWN_TOOL: There is no tool "${state.tool}".`) as CallToolResult;
  return awaitModernCall(client, server, { handle, entry }, params, true, ctx, state);
}

/** Decides a waiting step as the surface's caller, through `decide_approval` (its rules, its audit). */
function stepDecider(surface: DurableMcpSurface, scopes: ReadonlySet<string> | undefined): McpStepDecider {
  return async (waiting, answer) => {
    const decideTool = surface.decisionTools.get('decide_approval');
    if (!decideTool) {
      return {
        refused: {
          code: 'APPROVAL_NOT_APPROVER',
          message: 'This server decides no approvals through MCP (approvals: false).',
        },
      };
    }
    const result = await decideTool.call(
      {
        workflowId: waiting.workflowId,
        stepId: waiting.stepId,
        decision: answer.decision,
        digest: waiting.digest,
        ...(answer.reason !== undefined ? { reason: answer.reason } : {}),
      },
      scopes,
    );
    if (!result.isError) return {};
    const error = result._meta?.['io.durable-tools/error'] as { code?: string; message?: string } | undefined;
    return {
      refused: {
        code: (error?.code ?? 'REQUEST_REJECTED') as McpDecisionRefusalCode,
        message: error?.message ?? 'Refused.',
      },
    };
  };
}

/** The extension's methods are answered only to a request that declares it (`-32021`, as SEP-2663 says). */
function requireTasksExtension(ctx: ServerContext): void {
  if (declares(ctx, 'tasks')) return;
  throw new ProtocolError(ProtocolErrorCode.MissingRequiredClientCapability, 'Missing required client capability', {
    requiredCapabilities: { extensions: { [MCP_TASKS_EXTENSION]: {} } },
  });
}

/** Whether the request's client declares the tasks extension, or form elicitation. */
function declares(ctx: ServerContext, what: 'tasks' | 'elicitation'): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as
    { extensions?: Record<string, unknown>; elicitation?: { form?: unknown } } | undefined;
  if (what === 'tasks') return capabilities?.extensions?.[MCP_TASKS_EXTENSION] !== undefined;
  const elicitation = capabilities?.elicitation;
  return elicitation !== undefined && (Object.keys(elicitation).length === 0 || elicitation.form !== undefined);
}

/** The call's idempotency key; a malformed one is the protocol's `-32602`, as on 2025-11-25. */
function keyOf(params: McpToolCallParams): string | undefined {
  try {
    return mcpIdempotencyKeyOf(params);
  } catch (error) {
    if (error instanceof McpError) throw new ProtocolError(ProtocolErrorCode.InvalidParams, error.message);
    throw error;
  }
}

/** An `isError` result with the structured error in `_meta` (as every refusal of the server). */
function refusal(code: McpApprovalAnswerRefusalCode, message: string, hint: string): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: `${code}: ${message}\nHint: ${hint}` }],
    _meta: { 'io.durable-tools/error': { code, message, hint } },
  };
}
