/**
 * Tools and scripted runs of the agent benchmarks (`bench:agent`, `bench:throughput`): each model turn
 * makes one tool call, alternating a read-only look-up and a call with effects (idempotent downstream, so
 * it goes through the key store), both with small realistic outputs.
 */
import { z } from 'zod';
import type { ScriptedModelSettings } from '../src/model/scripted-model';
import { defineTool } from '../src/tools/define-tool';
import type { AgentRunInput } from '../src/contract/agent-run-types';

const lookUpPrice = defineTool({
  name: 'look_up_price',
  description: 'Price of a product by SKU. Read-only.',
  input: z.object({ sku: z.string() }),
  output: z.object({ sku: z.string(), priceCents: z.number(), currency: z.string() }),
  effect: 'read-only',
  idempotent: true,
}).implement(async ({ sku }) => ({ sku, priceCents: 1999, currency: 'EUR' }));

const addToCart = defineTool({
  name: 'add_to_cart',
  description: 'Adds a product to the cart. The cart deduplicates by idempotency key.',
  input: z.object({ sku: z.string(), quantity: z.number().int().positive() }),
  output: z.object({ cartLine: z.string(), sku: z.string(), quantity: z.number() }),
  effect: 'irreversible',
  idempotent: true,
  approval: 'never', // a benchmark of the engine, not of a human
}).implement(async ({ sku, quantity }, ctx) => ({ cartLine: `line-${ctx.idempotencyKey}`, sku, quantity }));

/** The benchmark's tools. */
export const AGENT_BENCH_TOOLS = [lookUpPrice, addToCart];

/**
 * A run of `steps` tool calls, one per model turn, then a final answer; `more` adds run options (such as
 * `fastPath: true`, docs/fast-path.md).
 */
export function agentBenchRun(steps: number, more: Partial<AgentRunInput> = {}): AgentRunInput {
  const model: ScriptedModelSettings = {
    provider: 'scripted',
    script: [
      { text: 'Checking the price.', toolCalls: [{ name: 'look_up_price', arguments: { sku: 'SKU-1' } }] },
      { text: 'Adding it.', toolCalls: [{ name: 'add_to_cart', arguments: '{"sku":"SKU-1","quantity":1}' }] },
    ],
    repeat: Math.ceil(steps / 2),
    finalText: `Done after ${steps} steps.`,
  };
  return {
    goal: 'Fill my cart.',
    model: model as unknown as AgentRunInput['model'],
    limits: { maxSteps: steps, maxTurns: steps + 1 },
    trackStatusSearchAttribute: false,
    ...more,
  };
}
