/**
 * The rules of approvals through the MCP server on their own: who is an approver, who sees which waiting call, who
 * may decide it, the name a decision is recorded under, and `DURABLE_TOOLS_MCP_APPROVERS`.
 */
import {
  mcpApprovalAccess,
  mcpApproverName,
  mcpApproverNamesFromEnv,
  mcpApproversByName,
  mcpApproversByScope,
  mcpDecisionRefusal,
} from '../../src/mcp/server/mcp-approver-rules';
import { mcpAgentRunIdIn, mcpCallerScope, mcpCallWorkflowIdIn } from '../../src/mcp/server/mcp-caller';

const ALICE = { subject: 'token:alice' };
const CAROL = { subject: 'token:carol' };
const alice = mcpCallerScope('durable-tools', ALICE);
const carol = mcpCallerScope('durable-tools', CAROL);
const taskQueue = 'durable-tools-mcp-test';
const onQueue = (rootWorkflowId: string, queue = taskQueue) => ({ rootWorkflowId, taskQueue: queue });

describe('who sees a waiting call', () => {
  test("a caller's own MCP call and its own agent run's steps are its own, approver or not", () => {
    for (const approver of [false, true]) {
      const who = { scope: alice, approver, taskQueue };
      expect(mcpApprovalAccess(onQueue(mcpCallWorkflowIdIn(alice, 'k')), who)).toBe('own');
      expect(mcpApprovalAccess(onQueue(mcpAgentRunIdIn(alice, undefined)), who)).toBe('own');
    }
  });

  test("another caller's MCP call is hidden from a caller who is not an approver", () => {
    const who = { scope: carol, approver: false, taskQueue };
    expect(mcpApprovalAccess(onQueue(mcpCallWorkflowIdIn(alice, 'k')), who)).toBe('hidden');
  });

  test("an approver sees another caller's MCP calls and runs on this server's task queue", () => {
    const who = { scope: carol, approver: true, taskQueue };
    expect(mcpApprovalAccess(onQueue(mcpCallWorkflowIdIn(alice, 'k')), who)).toBe('approver');
    expect(mcpApprovalAccess(onQueue(mcpAgentRunIdIn(alice, 'k')), who)).toBe('approver');
  });

  test('an approver does not see runs started from code, nor MCP calls of another task queue', () => {
    const who = { scope: carol, approver: true, taskQueue };
    expect(mcpApprovalAccess(onQueue('agent-run-1'), who)).toBe('hidden');
    expect(mcpApprovalAccess(onQueue(mcpCallWorkflowIdIn(alice, 'k'), 'another-queue'), who)).toBe('hidden');
  });
});

describe('who may decide it', () => {
  const decision = (kind: 'approve' | 'reject') => ({ kind, workflowId: 'mcp-call-x', stepId: 1 });
  const approver = { approver: true, allowSelfApproval: false };

  test('a hidden call is answered as unknown, whatever the caller is', () => {
    expect(mcpDecisionRefusal('hidden', decision('approve'), approver)?.code).toBe('NOT_FOUND');
  });

  test('a caller who is not an approver decides nothing, not even its own call', () => {
    const rules = { approver: false, allowSelfApproval: true };
    expect(mcpDecisionRefusal('own', decision('approve'), rules)?.code).toBe('APPROVAL_NOT_APPROVER');
    expect(mcpDecisionRefusal('own', decision('reject'), rules)?.code).toBe('APPROVAL_NOT_APPROVER');
  });

  test('an approver cannot approve its own call by default', () => {
    expect(mcpDecisionRefusal('own', decision('approve'), approver)?.code).toBe('APPROVAL_SELF_APPROVAL');
  });

  test('an approver may reject its own call, and approve it when self-approval is allowed', () => {
    expect(mcpDecisionRefusal('own', decision('reject'), approver)).toBeUndefined();
    expect(mcpDecisionRefusal('own', decision('approve'), { approver: true, allowSelfApproval: true })).toBeUndefined();
  });

  test("an approver may decide another caller's call", () => {
    expect(mcpDecisionRefusal('approver', decision('approve'), approver)).toBeUndefined();
  });
});

describe('who is an approver', () => {
  test('by scope: a request whose OAuth token grants the approvals scope, never one without OAuth scopes', () => {
    const byScope = mcpApproversByScope();
    expect(byScope({ caller: ALICE, scopes: new Set(['tools:read', 'approvals']) })).toBe(true);
    expect(byScope({ caller: ALICE, scopes: new Set(['tools:read', 'tools:write']) })).toBe(false);
    expect(byScope({ caller: ALICE })).toBe(false);
  });

  test('by name: the callers of the named static tokens', () => {
    const byName = mcpApproversByName(['carol']);
    expect(byName({ caller: CAROL })).toBe(true);
    expect(byName({ caller: ALICE })).toBe(false);
    expect(byName({ caller: { subject: 'carol' } })).toBe(false);
  });
});

describe('the recorded approver', () => {
  test("is the authenticated subject, with the OAuth client id when it is not the subject's", () => {
    expect(mcpApproverName({ subject: 'token:carol' })).toBe('mcp:token:carol');
    expect(mcpApproverName({ subject: 'svc', clientId: 'svc' })).toBe('mcp:svc');
    expect(mcpApproverName({ subject: 'user-7', clientId: 'review-app' })).toBe('mcp:user-7 (client review-app)');
  });
});

describe('DURABLE_TOOLS_MCP_APPROVERS', () => {
  test('names token callers, and is empty when unset', () => {
    expect(mcpApproverNamesFromEnv(['alice', 'carol'], { DURABLE_TOOLS_MCP_APPROVERS: ' carol ,' })).toEqual(['carol']);
    expect(mcpApproverNamesFromEnv(['alice'], {})).toEqual([]);
  });

  test('refuses a name that is not a token name, and approvers without static tokens', () => {
    expect(mcpApproverNamesFromEnv(['alice'], { DURABLE_TOOLS_MCP_APPROVERS: 'mallory' })).toContain('"mallory"');
    expect(mcpApproverNamesFromEnv([], { DURABLE_TOOLS_MCP_APPROVERS: 'carol' })).toContain('DURABLE_TOOLS_MCP_TOKENS');
  });
});
