/**
 * The authority of a run on its own (docs/security.md, "Authority of a run"): the pure rules (which tools a grant
 * names, who is the same person) and the tool activity's check, with the activity info Temporal would give it.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { z } from 'zod';
import { createToolActivities, type ToolActivity } from '../../src/activities/tool-activities';
import type { ToolErrorObservation } from '../../src/contract/activity-protocol';
import { samePerson } from '../../src/contract/caller-identity';
import { grantedTools } from '../../src/contract/run-grant';
import type { ToolActivityInput, ToolActivityResult } from '../../src/contract/tool-activity-types';
import { mcpApprovalAccess } from '../../src/mcp/server/mcp-approver-rules';
import { mcpCallerScope, mcpCallWorkflowIdIn } from '../../src/mcp/server/mcp-caller';
import { mcpGrantedTools } from '../../src/mcp/server/mcp-run-authority';
import { MemoryAuditStore } from '../../src/stores/audit/memory-audit-store';
import { MemoryIdempotencyStore } from '../../src/stores/idempotency/memory-idempotency-store';
import { defineAgentTool } from '../../src/tools/define-agent-tool';
import { defineTool, type Tool } from '../../src/tools/define-tool';
import { createToolRegistry } from '../../src/tools/tool-registry';
import { failureOf } from '../support/application-failure';

const RUN = 'run-a';

function tools(ran: string[]): Tool[] {
  const effect = (name: string, extra: { undo?: string } = {}) =>
    defineTool({
      name,
      description: `${name} makes an effect.`,
      input: z.object({}).passthrough(),
      output: z.object({ ok: z.boolean() }),
      effect: extra.undo ? 'compensable' : 'irreversible',
      approval: 'never',
      idempotent: true,
      ...extra,
    }).implement(async () => {
      ran.push(name);
      return { ok: true };
    });
  const helper = defineAgentTool({
    name: 'helper',
    description: 'Helps.',
    input: z.object({}),
    goal: () => 'Help.',
    tools: ['note', 'raw_effect'],
  });
  return [effect('note'), effect('raw_effect'), effect('book', { undo: 'unbook' }), effect('unbook'), helper];
}

function worker(restrictedTools: string[] = []) {
  const ran: string[] = [];
  const store = new MemoryAuditStore();
  const activities = createToolActivities({
    registry: createToolRegistry(tools(ran)),
    auditStore: store,
    idempotencyStore: new MemoryIdempotencyStore(),
    restrictedTools,
  });
  const call = (tool: string, extra: Partial<ToolActivityInput> = {}, workflowId = RUN) =>
    new MockActivityEnvironment({
      attempt: 1,
      scheduledTimestampMs: Date.now(),
      workflowExecution: { workflowId, runId: 'r1' },
    }).run(activities[tool] as ToolActivity, {
      arguments: {},
      idempotencyKey: `${workflowId}/r1/${tool}`,
      stepId: 1,
      ...extra,
    });
  const grant = (tools: string[], workflowId = RUN) => store.recordGrant({ workflowId, tools, grantedAt: 1 });
  return { ran, store, call, grant };
}

async function refusal(promise: Promise<unknown>): Promise<ToolErrorObservation | undefined> {
  const failure = await failureOf(promise);
  return (failure.details?.[0] as ToolErrorObservation | undefined) ?? undefined;
}

describe('the tool activity', () => {
  test('runs every tool of a run without a grant on a worker that restricts none (the default)', async () => {
    const w = worker();
    await w.call('raw_effect');
    expect(w.ran).toEqual(['raw_effect']);
  });

  test('refuses a restricted tool to a run without a grant, before it runs', async () => {
    const w = worker(['raw_effect']);
    expect(await refusal(w.call('raw_effect'))).toMatchObject({ code: 'TOOL_NOT_PERMITTED', retryable: false });
    await w.call('note');
    expect(w.ran).toEqual(['note']);
  });

  test('refuses a run with a grant every tool its grant does not name, restricted or not', async () => {
    const w = worker(['raw_effect']);
    await w.grant(['raw_effect']);
    await w.call('raw_effect');
    expect(await refusal(w.call('note'))).toMatchObject({ code: 'TOOL_NOT_PERMITTED' });
    expect(w.ran).toEqual(['raw_effect']);
  });

  test("reads the grant of the run Temporal names, never the one the input's key or run key names", async () => {
    const w = worker(['raw_effect']);
    await w.grant(['raw_effect'], 'admin-run');
    const forged = { idempotencyKey: 'admin-run/r1/1', runKey: 'admin-run/r1' };
    expect(await refusal(w.call('raw_effect', forged, 'own-run'))).toMatchObject({ code: 'TOOL_NOT_PERMITTED' });
    expect(w.ran).toEqual([]);
  });

  test("runs the engine's compensation of a call the grant names, judged as the call it undoes", async () => {
    const w = worker();
    await w.grant(['book']);
    await w.call('unbook', {
      compensationOf: 'book',
      idempotencyKey: `${RUN}/r1/1/undo`,
      arguments: { originalInput: {}, originalKey: `${RUN}/r1/1` },
    });
    expect(w.ran).toEqual(['unbook']);
    expect(await refusal(w.call('unbook'))).toMatchObject({ code: 'TOOL_NOT_PERMITTED' });
  });

  test("records an agent tool's child grant: the tools of its spec that its parent's grant names", async () => {
    const w = worker();
    await w.grant(['helper', 'note']);
    const result = (await w.call('helper', { idempotencyKey: `${RUN}/r1/3` })) as ToolActivityResult;
    expect(await w.store.grantOf(`${RUN}/r1/3/helper`)).toMatchObject({ tools: ['note'], parentWorkflowId: RUN });
    expect(result.childGrant).toEqual(['note']);
  });

  test("bounds a child of a run without a grant by the run's tools, and never grants it a restricted tool", async () => {
    const w = worker(['raw_effect']);
    await w.call('helper', { idempotencyKey: `${RUN}/r1/4`, runTools: ['helper', 'note', 'raw_effect'] });
    expect(await w.store.grantOf(`${RUN}/r1/4/helper`)).toMatchObject({ tools: ['note'] });
    await w.call('helper', { idempotencyKey: `${RUN}/r1/5`, runTools: ['helper'] });
    expect(await w.store.grantOf(`${RUN}/r1/5/helper`)).toMatchObject({ tools: [] });
    await w.call('helper', { idempotencyKey: `${RUN}/r1/6` });
    expect(await w.store.grantOf(`${RUN}/r1/6/helper`)).toBeUndefined();
  });

  test("records no child grant for a call under another run's key", async () => {
    const w = worker();
    await w.grant(['helper', 'note']);
    await w.grant(['helper', 'note', 'raw_effect'], 'victim');
    await w.call('helper', { idempotencyKey: 'victim/r1/3' });
    expect(await w.store.grantOf('victim/r1/3/helper')).toBeUndefined();
  });
});

describe('the rules', () => {
  test("a grant names the tools asked for that the starter may call and, for a child, its parent's", () => {
    const mayCall = (tool: string) => tool !== 'raw_effect';
    expect(grantedTools(['a', 'b', 'raw_effect'], { mayCall })).toEqual(['a', 'b']);
    expect(grantedTools(['a', 'b', 'raw_effect'], { requested: ['b', 'raw_effect'], mayCall })).toEqual(['b']);
    expect(grantedTools(['a', 'b'], { requested: ['a', 'b'], parent: ['b'], mayCall })).toEqual(['b']);
  });

  test('an MCP caller may call the tools whose scopes its token grants, and a named caller only its own', () => {
    const catalog = ['note', 'raw_effect'];
    const options = { grants: new MemoryAuditStore(), scopes: { perTool: { raw_effect: ['admin'] } } };
    const caller = { subject: 'alice' };
    const agent = new Set(['tools:read', 'tools:write']);
    expect(mcpGrantedTools(catalog, options, { caller, tokenScopes: agent })).toEqual(['note']);
    expect(mcpGrantedTools(catalog, options, { caller, tokenScopes: new Set([...agent, 'admin']) })).toEqual(catalog);
    const named = { ...options, callerTools: { alice: ['raw_effect'] } };
    expect(mcpGrantedTools(catalog, named, { caller, tokenScopes: undefined })).toEqual(['raw_effect']);
  });

  test('one person through two clients is the same person; the same subject of another issuer is not', () => {
    const carol = { subject: 'carol', issuer: 'https://id.example' };
    expect(samePerson({ ...carol, clientId: 'app1' }, { ...carol, clientId: 'app2' })).toBe(true);
    expect(samePerson(carol, { subject: 'carol', issuer: 'https://other.example' })).toBe(false);
  });

  test("a call whose root was started by the same person through another client is the caller's own", () => {
    const carol = { subject: 'carol', issuer: 'https://id.example' };
    const app2 = mcpCallerScope('durable-tools', { ...carol, clientId: 'app2' });
    const app1 = mcpCallerScope('durable-tools', { ...carol, clientId: 'app1' });
    const place = { rootWorkflowId: mcpCallWorkflowIdIn(app2, 'k'), taskQueue: 'q', startedBy: carol };
    const who = { scope: app1, approver: true, taskQueue: 'q' };
    expect(mcpApprovalAccess(place, { ...who, person: { ...carol, clientId: 'app1' } })).toBe('own');
    expect(mcpApprovalAccess(place, { ...who, person: { subject: 'dave', issuer: carol.issuer } })).toBe('approver');
  });
});
