import type { CallToolResult, Tool as McpToolListing } from '@modelcontextprotocol/sdk/types.js';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { z } from 'zod';
import { approveStep, getPendingApprovals, rejectStep, type PendingApproval } from '../../client/approval-client';
import { ApprovalError } from '../../client/approval-error';
import { SEARCH_ATTRIBUTES } from '../../contract/search-attributes';
import { identityRecord, STARTED_BY_MEMO, type CallerIdentity } from '../../contract/caller-identity';
import { parseToolArguments } from '../../guard/parse-tool-arguments';
import {
  mcpApprovalAccess,
  mcpApproverName,
  mcpApproversByScope,
  mcpDecisionRefusal,
  type McpApprovalAccess,
  type McpApprovalOptions,
  type McpApproverRequest,
} from './mcp-approver-rules';
import { builtInToolListing } from './mcp-built-in-tool-listing';
import type { McpCaller } from './mcp-caller';
import { structuredResultOf } from './mcp-tool-call-result';

/** A tool of the MCP server that lists or decides calls waiting for approval. */
export interface ApprovalTool {
  listing: McpToolListing;
  /** `scopes`: those of the request's OAuth access token, when the server is an OAuth resource server. */
  call(args: Record<string, unknown>, scopes: ReadonlySet<string> | undefined): Promise<CallToolResult>;
}

/** The names of the approval tools. */
export const MCP_APPROVAL_TOOL_NAMES = { list: 'list_pending_approvals', decide: 'decide_approval' } as const;

/** How many runs waiting for a decision `list_pending_approvals` reads at most. */
const MAX_LISTED_RUNS = 100;

const listInput = z.strictObject({
  tool: z.string().min(1).optional().describe('Only calls of this tool.'),
});
const decideInput = z.strictObject({
  workflowId: z.string().min(1).describe("The waiting call's workflowId, as list_pending_approvals shows it."),
  stepId: z.number().int().positive().describe('Its stepId.'),
  decision: z.enum(['approve', 'reject']),
  digest: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .describe('The digest of the arguments you reviewed: the decision is refused if they are not the waiting ones.'),
  reason: z.string().min(1).max(2_000).optional().describe('Why (required to reject: the model reads it).'),
  arguments: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      "Approve with these arguments instead (approve only): validated by the tool's schema, the call runs with them.",
    ),
});

/**
 * `list_pending_approvals` (the waiting calls the caller may see, with their arguments and digests) and
 * `decide_approval` (approve or reject one, bound to the digest the caller saw). Who sees and decides what is
 * {@link mcpApprovalAccess} and {@link mcpDecisionRefusal}: a caller sees its own waiting calls; an approver also
 * sees and decides those of the other callers of this server (`taskQueue`); an approver approves its own call only
 * with `allowSelfApproval`. The recorded approver is the authenticated caller ({@link mcpApproverName}).
 */
export function approvalTools(
  client: Client,
  server: { taskQueue: string; scope: string; caller: McpCaller },
  options: McpApprovalOptions = {},
): Map<string, ApprovalTool> {
  const isApprover = options.approvers ?? mcpApproversByScope();
  const allowSelfApproval = options.allowSelfApproval ?? false;
  const who = (scopes: ReadonlySet<string> | undefined) => {
    const request: McpApproverRequest = { caller: server.caller, ...(scopes ? { scopes } : {}) };
    const person = identityRecord(server.caller);
    return { scope: server.scope, approver: isApprover(request), taskQueue: server.taskQueue, person };
  };

  const list: ApprovalTool = {
    listing: builtInToolListing(
      MCP_APPROVAL_TOOL_NAMES.list,
      'Lists the tool calls waiting for a human approval that you may see: your own, and, if you are an approver, those of the other callers of this server. Each has the exact arguments and their digest; decide one with decide_approval.',
      listInput,
      { readOnly: true, openWorld: false },
    ),
    call: async (args, scopes) => {
      const parsed = parseToolArguments(listInput, args);
      if (!parsed.ok) return toolError('INVALID_ARGUMENTS', parsed.error.message, parsed.error.hint);
      const caller = who(scopes);
      const pending = await visiblePending(client, caller, parsed.value.tool);
      const items = pending.map(({ call, access }) => ({
        workflowId: call.workflowId,
        stepId: call.stepId,
        tool: call.tool,
        arguments: call.arguments,
        digest: call.digest,
        requestedAt: new Date(call.requestedAt).toISOString(),
        deadline: new Date(call.deadline).toISOString(),
        goal: call.goal,
        ...(call.parent ? { parent: call.parent } : {}),
        own: access === 'own',
        mayApprove: caller.approver && (access !== 'own' || allowSelfApproval),
      }));
      return structuredResultOf({ pending: items });
    },
  };

  const decide: ApprovalTool = {
    listing: builtInToolListing(
      MCP_APPROVAL_TOOL_NAMES.decide,
      'Approves or rejects one call waiting for approval (from list_pending_approvals), bound to the digest of the arguments you reviewed. Approved, the call runs once; rejected, the model is told why. You are recorded as the approver.',
      decideInput,
      { readOnly: false, openWorld: false },
    ),
    call: async (args, scopes) => {
      const parsed = parseToolArguments(decideInput, args);
      if (!parsed.ok) return toolError('INVALID_ARGUMENTS', parsed.error.message, parsed.error.hint);
      const { workflowId, stepId, decision, digest, reason, arguments: edited } = parsed.value;
      if (decision === 'reject' && reason === undefined) {
        return toolError('INVALID_ARGUMENTS', 'A rejection needs a reason.', 'Send reason: the model reads it.');
      }
      if (decision === 'reject' && edited !== undefined) {
        return toolError('INVALID_ARGUMENTS', 'Edited arguments come with an approval only.', 'Leave arguments out.');
      }
      const caller = who(scopes);
      const access = await accessOf(client, workflowId, caller);
      const refusal = mcpDecisionRefusal(
        access,
        { kind: decision, workflowId, stepId },
        {
          approver: caller.approver,
          allowSelfApproval,
        },
      );
      if (refusal) return toolError(refusal.code, refusal.message, refusal.hint);
      const named = { approver: mcpApproverName(server.caller), approverIdentity: identityRecord(server.caller) };
      try {
        const result =
          decision === 'approve'
            ? await approveStep(client, workflowId, {
                stepId,
                digest,
                ...named,
                ...(reason ? { reason } : {}),
                ...(edited ? { arguments: edited } : {}),
              })
            : await rejectStep(client, workflowId, { stepId, digest, ...named, reason: reason ?? '' });
        return structuredResultOf({ ...result, decidedAt: new Date(result.decidedAt).toISOString() });
      } catch (error) {
        if (!(error instanceof ApprovalError)) throw error;
        return toolError(error.code, error.message, hintOf(error.code));
      }
    },
  };
  return new Map([
    [list.listing.name, list],
    [decide.listing.name, decide],
  ]);
}

/** The waiting calls of this server's runs that the caller may see, oldest first. */
async function visiblePending(
  client: Client,
  who: McpApprovalWho,
  tool: string | undefined,
): Promise<{ call: PendingApproval; access: McpApprovalAccess }[]> {
  const query = [
    `${SEARCH_ATTRIBUTES.awaitingApproval.name} IS NOT NULL`,
    `ExecutionStatus = "Running"`,
    `TaskQueue = ${JSON.stringify(who.taskQueue)}`,
  ].join(' AND ');
  const found: { call: PendingApproval; access: McpApprovalAccess }[] = [];
  const starters = new Map<string, CallerIdentity | undefined>();
  const listed = new Set<string>();
  let read = 0;
  for await (const execution of client.workflow.list({ query })) {
    const rootWorkflowId = execution.rootExecution?.workflowId ?? execution.workflowId;
    const startedBy =
      rootWorkflowId === execution.workflowId
        ? startedByOf(execution.memo)
        : await rootStarter(client, rootWorkflowId, starters);
    const place = { rootWorkflowId, taskQueue: execution.taskQueue, ...(startedBy ? { startedBy } : {}) };
    const access = mcpApprovalAccess(place, who);
    if (access === 'hidden') continue;
    if (read++ >= MAX_LISTED_RUNS) break;
    // A run that just ended, or has no worker to answer, waits for nothing we can show.
    const calls = await getPendingApprovals(client, execution.workflowId).catch(() => []);
    for (const call of calls) {
      // A sub-agent is found by the query itself and through its parent: list it once.
      const id = `${call.workflowId}#${call.stepId}`;
      if ((tool === undefined || call.tool === tool) && !listed.has(id)) {
        listed.add(id);
        found.push({ call, access });
      }
    }
  }
  return found.sort((a, b) => a.call.requestedAt - b.call.requestedAt || a.call.stepId - b.call.stepId);
}

/** How the caller relates to the run `workflowId` (`hidden` when it does not exist). */
async function accessOf(client: Client, workflowId: string, who: McpApprovalWho): Promise<McpApprovalAccess> {
  try {
    const description = await client.workflow.getHandle(workflowId).describe();
    const rootWorkflowId = description.rootExecution?.workflowId ?? description.workflowId;
    const startedBy =
      rootWorkflowId === description.workflowId
        ? startedByOf(description.memo)
        : await rootStarter(client, rootWorkflowId, new Map());
    const place = { rootWorkflowId, taskQueue: description.taskQueue, ...(startedBy ? { startedBy } : {}) };
    return mcpApprovalAccess(place, who);
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return 'hidden';
    throw error;
  }
}

/** Who a caller is to the approval rules: its scope, whether it approves, its server's queue, the person it is. */
type McpApprovalWho = { scope: string; approver: boolean; taskQueue: string; person: CallerIdentity };

/** The `startedBy` identity of a workflow's memo (the MCP server sets it), or undefined. */
function startedByOf(memo: Record<string, unknown> | undefined): CallerIdentity | undefined {
  const value = memo?.[STARTED_BY_MEMO] as Partial<CallerIdentity> | undefined;
  return value && typeof value.subject === 'string' ? identityRecord(value as CallerIdentity) : undefined;
}

/** Who started the root run `workflowId` (its memo), read once per listing; undefined when unknown or gone. */
async function rootStarter(
  client: Client,
  workflowId: string,
  known: Map<string, CallerIdentity | undefined>,
): Promise<CallerIdentity | undefined> {
  if (!known.has(workflowId)) {
    const memo = await client.workflow
      .getHandle(workflowId)
      .describe()
      .then((d) => d.memo)
      .catch(() => undefined);
    known.set(workflowId, startedByOf(memo));
  }
  return known.get(workflowId);
}

function hintOf(code: ApprovalError['code']): string {
  switch (code) {
    case 'APPROVAL_DIGEST_MISMATCH':
      return 'The arguments are not those you reviewed: list_pending_approvals again and review the waiting ones.';
    case 'APPROVAL_ALREADY_DECIDED':
      return 'Someone decided it already (or it timed out): nothing to do.';
    case 'APPROVAL_UNKNOWN_STEP':
    case 'APPROVAL_RUN_NOT_RUNNING':
      return 'Use list_pending_approvals for the calls that wait now.';
    default:
      return 'Try again; if it keeps failing, use `durable-tools approve`.';
  }
}

function toolError(code: string, message: string, hint: string): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: `${code}: ${message}\nHint: ${hint}` }],
    _meta: { 'io.durable-tools/error': { code, message, hint } },
  };
}
