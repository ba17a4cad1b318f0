/**
 * A tools module (`--tools`) other than test-tools-module.ts, for a second `durable-tools mcp` server in the same
 * namespace: none of its tool names is the first module's, and `wire_b` needs a human approval (its decision goes to
 * the worker's audit trail).
 */
import { z } from 'zod';
import { defineTool } from '../../src/tools/define-tool';

export const tools = [
  defineTool({
    name: 'echo_b',
    description: 'Echoes a text.',
    input: z.object({ text: z.string() }),
    output: z.object({ echoed: z.string() }),
    effect: 'read-only',
    idempotent: true,
  }).implement(async ({ text }) => ({ echoed: text })),
  defineTool({
    name: 'wire_b',
    description: 'Wires money. Irreversible, so a human approves each call.',
    input: z.object({ amount: z.number().positive() }),
    output: z.object({ wired: z.number() }),
    effect: 'irreversible',
    idempotent: true,
  }).implement(async ({ amount }) => ({ wired: amount })),
];
