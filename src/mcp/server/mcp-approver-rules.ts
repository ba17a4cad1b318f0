/**
 * Who may see and decide which waiting calls through the MCP server (`list_pending_approvals`, `decide_approval`):
 * pure rules, so they read and test apart from Temporal.
 */
import { samePerson, type CallerIdentity } from '../../contract/caller-identity';
import {
  isMcpAgentRunOf,
  isMcpCallOf,
  MCP_AGENT_RUN_PREFIX,
  MCP_CALL_WORKFLOW_PREFIX,
  type McpCaller,
} from './mcp-caller';

/** The OAuth scope a token needs to see every caller's waiting calls and decide them (`decide_approval`). */
export const MCP_APPROVALS_SCOPE = 'approvals';

/** What an approver rule is asked about: the request's caller and, in OAuth mode, the scopes its token grants. */
export interface McpApproverRequest {
  caller: McpCaller;
  /** The scopes of the request's access token (OAuth mode only; undefined for static tokens and no authentication). */
  scopes?: ReadonlySet<string>;
}

/** Whether the caller of a request is an approver of the server. */
export type McpApproverRule = (request: McpApproverRequest) => boolean;

/** How the MCP server's approval tools decide who sees and decides what (see {@link mcpApprovalAccess}). */
export interface McpApprovalOptions {
  /**
   * Who is an approver: sees the waiting calls of every caller of this server and may decide them. Default: a request
   * whose OAuth access token grants the `approvals` scope ({@link mcpApproversByScope}); nobody in the other modes
   * (each caller then only sees its own waiting calls). For static tokens see {@link mcpApproversByName}.
   */
  approvers?: McpApproverRule;
  /** Whether an approver may approve a call it made itself (default false: four eyes). Rejecting one's own call is always allowed to an approver. */
  allowSelfApproval?: boolean;
}

/** Approvers are the requests whose OAuth token grants `scope` (default `approvals`). */
export function mcpApproversByScope(scope: string = MCP_APPROVALS_SCOPE): McpApproverRule {
  return ({ scopes }) => scopes?.has(scope) === true;
}

/** Approvers are the callers of these static tokens (their names, as in `DURABLE_TOOLS_MCP_TOKENS`). */
export function mcpApproversByName(names: Iterable<string>): McpApproverRule {
  const subjects = new Set([...names].map((name) => `token:${name}`));
  return ({ caller }) => subjects.has(caller.subject);
}

/**
 * The name recorded as the approver of a decision made through MCP (`decidedBy` in the run's state, the audit
 * store and the history): `mcp:` and the authenticated subject (a static token's caller is `token:<name>`), then the
 * OAuth client id when it differs from the subject. Never a name the caller sends. The identity itself (subject,
 * issuer, client) is recorded next to it (`decidedByIdentity`).
 */
export function mcpApproverName(caller: McpCaller): string {
  const client =
    caller.clientId !== undefined && caller.clientId !== caller.subject ? ` (client ${caller.clientId})` : '';
  return `mcp:${caller.subject}${client}`;
}

/** A waiting call as far as access goes: where its run belongs. */
export interface McpWaitingCallPlace {
  /** The root of the call's run: its own workflow id, or the top run of a sub-agent. */
  rootWorkflowId: string;
  /** The task queue the call's run is on. */
  taskQueue: string;
  /** Who started the root (its memo's `startedBy`, set by the MCP server), when known. */
  startedBy?: CallerIdentity;
}

/** How the caller of a request relates to a waiting call. */
export type McpApprovalAccess =
  /** The caller made the call (an MCP tool call of its own, or a step of an agent run it started through MCP). */
  | 'own'
  /** An approver, and the call was made through this server by another caller. */
  | 'approver'
  /** Not the caller's to see: answered as unknown. */
  | 'hidden';

/**
 * How a caller (of `scope`, on the server of `taskQueue`) relates to a waiting call:
 * - its own when the call's root is an MCP tool call it made or an agent run it started through MCP (ids carry the
 *   caller's scope, so this holds on any task queue), or when the root was started by the same person (the same
 *   subject of the same issuer, `who.person`) through another client: four eyes are two people, not two apps;
 * - `approver` when the caller is an approver and the root is another caller's MCP call or MCP agent run on this
 *   server's task queue (runs started from code, or through another server's queue, are never reached);
 * - `hidden` otherwise.
 */
export function mcpApprovalAccess(
  call: McpWaitingCallPlace,
  who: { scope: string; approver: boolean; taskQueue: string; person?: CallerIdentity },
): McpApprovalAccess {
  const root = call.rootWorkflowId;
  if (isMcpCallOf(who.scope, root) || isMcpAgentRunOf(who.scope, root)) return 'own';
  if (call.startedBy && who.person && samePerson(call.startedBy, who.person)) return 'own';
  const throughMcp = root.startsWith(MCP_CALL_WORKFLOW_PREFIX) || root.startsWith(MCP_AGENT_RUN_PREFIX);
  return who.approver && throughMcp && call.taskQueue === who.taskQueue ? 'approver' : 'hidden';
}

/** Why a decision through MCP is refused before it reaches the run, or undefined when it may go on. */
export type McpDecisionRefusal =
  | { code: 'NOT_FOUND'; message: string; hint: string }
  | { code: 'APPROVAL_NOT_APPROVER'; message: string; hint: string }
  | { code: 'APPROVAL_SELF_APPROVAL'; message: string; hint: string };

/**
 * The rule of `decide_approval`: a hidden call is unknown (the same answer as a call that does not exist); only an
 * approver decides; an approver approves its own call only when `allowSelfApproval` is set (rejecting it is fine).
 */
export function mcpDecisionRefusal(
  access: McpApprovalAccess,
  decision: { kind: 'approve' | 'reject'; workflowId: string; stepId: number },
  rules: { approver: boolean; allowSelfApproval: boolean },
): McpDecisionRefusal | undefined {
  if (access === 'hidden') {
    return {
      code: 'NOT_FOUND',
      message: `There is no call waiting for approval at step ${decision.stepId} of "${decision.workflowId}".`,
      hint: 'Use list_pending_approvals for the calls you may decide.',
    };
  }
  if (!rules.approver) {
    return {
      code: 'APPROVAL_NOT_APPROVER',
      message: 'You are not an approver of this server: you may see your own waiting calls, not decide them.',
      hint: 'Ask an approver (or use `durable-tools approve`).',
    };
  }
  if (access === 'own' && decision.kind === 'approve' && !rules.allowSelfApproval) {
    return {
      code: 'APPROVAL_SELF_APPROVAL',
      message: 'You made this call yourself: another approver must approve it.',
      hint: 'Ask another approver, or reject it yourself.',
    };
  }
  return undefined;
}

/** The environment variable naming the static-token callers that are approvers: `carol,dave` (token names). */
export const MCP_APPROVERS_ENV = 'DURABLE_TOOLS_MCP_APPROVERS';

/**
 * The approvers `DURABLE_TOOLS_MCP_APPROVERS` names (empty when unset), or what is wrong with it: a name that is not
 * one of `tokenNames` (the static tokens' names), or the variable set without static tokens (OAuth approvers are
 * told by their scope, and without authentication everyone is one caller).
 */
export function mcpApproverNamesFromEnv(
  tokenNames: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): string[] | string {
  const names = (env[MCP_APPROVERS_ENV] ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.length === 0) return [];
  if (tokenNames.length === 0) {
    return `${MCP_APPROVERS_ENV} names static-token callers: set DURABLE_TOOLS_MCP_TOKENS too (with OAuth, approvers are the tokens with the approvals scope).`;
  }
  const unknown = names.filter((name) => !tokenNames.includes(name));
  if (unknown.length > 0) {
    return `${MCP_APPROVERS_ENV} names ${unknown.map((n) => `"${n}"`).join(', ')}, not among the token names (${tokenNames.join(', ')}).`;
  }
  return names;
}
