import { z } from 'zod';
import { defineAgentTool } from '../../src/tools/define-agent-tool';
import { defineTool, type Tool } from '../../src/tools/define-tool';
import type { ScriptedTurn } from '../../src/model/scripted-model';

/**
 * The tools of the authority tests (docs/security.md, "Authority of a run"), with effects counted at a counting
 * downstream (test/support/counting-http-server.ts):
 * - `raw_effect` (irreversible, no approval: the tool an operator puts behind the per-tool scope `admin`): each run
 *   of its code is one POST to the downstream, under the call's key;
 * - `helper`: an agent tool whose child (scripted) calls `raw_effect` `times` times, then answers.
 */
export function authorityTools(downstreamUrl: string): Tool[] {
  const rawEffect = defineTool({
    name: 'raw_effect',
    description: 'Makes a raw effect downstream. Admins only.',
    input: z.object({ note: z.string() }),
    output: z.object({ done: z.boolean() }),
    effect: 'irreversible',
    approval: 'never',
    idempotent: false,
    retry: { maximumAttempts: 1 },
    timeout: '5 s',
  }).implement(async ({ note }, ctx) => {
    await fetch(`${downstreamUrl}/effect?${new URLSearchParams({ key: ctx.idempotencyKey, note })}`, {
      method: 'POST',
      signal: ctx.signal,
    });
    return { done: true };
  });
  const helper = defineAgentTool({
    name: 'helper',
    description: 'Helps with a task.',
    input: z.object({ task: z.string(), times: z.number().int().min(1).max(5) }),
    goal: ({ task }) => `Help with: ${task}`,
    tools: ['raw_effect'],
    model: ({ task, times }) => ({ provider: 'scripted', script: rawEffectScript(task, times) }),
    limits: { maxSteps: 10 },
  });
  return [rawEffect, helper];
}

/** A script that calls `raw_effect` `times` times (one call a turn), then answers. */
export function rawEffectScript(note: string, times = 1): ScriptedTurn[] {
  const calls: ScriptedTurn[] = Array.from({ length: times }, (_, i) => ({
    toolCalls: [{ name: 'raw_effect', arguments: { note: `${note}-${i + 1}` } }],
  }));
  return [...calls, { text: 'Done.', final: true }];
}
