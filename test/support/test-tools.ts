import { z } from 'zod';
import { defineTool, type Tool } from '../../src/tools/define-tool';
import type { AgentRunInput } from '../../src/contract/agent-run-types';

/** One call that reached an implementation. */
export interface RecordedCall {
  tool: string;
  input: unknown;
  idempotencyKey: string;
  attempt: number;
}

/** `add` (read-only): `{ a: number, b: number }` → `{ sum }`. */
export const addContract = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  output: z.object({ sum: z.number() }),
  effect: 'read-only',
  idempotent: true,
});

/** A fast-path run whose one turn calls `add` with 2 and 3, then answers "The sum is 5.". */
export const ADD_TWO_NUMBERS_RUN: AgentRunInput = {
  goal: 'Add two numbers',
  model: {
    provider: 'scripted',
    script: [{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }],
    finalText: 'The sum is 5.',
  },
  fastPath: true,
};

/** `create_order` (compensable, undone by `cancel_order`): `{ item: string, quantity: int }` → `{ orderId }`. */
export const createOrderContract = defineTool({
  name: 'create_order',
  description: 'Creates an order.',
  input: z.object({ item: z.string(), quantity: z.number().int().min(1) }),
  output: z.object({ orderId: z.string() }),
  effect: 'compensable',
  undo: 'cancel_order',
  idempotent: true,
});

/** `charge_card` (irreversible): `{ amountCents: int }` → `{ chargeId }`, approved as `approval` says (default never). */
export function defineChargeCard(approval: 'never' | 'always' = 'never') {
  return defineTool({
    name: 'charge_card',
    description: 'Charges the card.',
    input: z.object({ amountCents: z.number().int() }),
    output: z.object({ chargeId: z.string() }),
    effect: 'irreversible',
    idempotent: true,
    approval,
  });
}

/** `charge_card` (irreversible, no approval): `{ amountCents: int }` → `{ chargeId }`. */
export const chargeCardContract = defineChargeCard();

/** `lookup_rate` (read-only): `{ city: string }` → `{ rate: 120 }`. */
export const lookupRateTool = defineTool({
  name: 'lookup_rate',
  description: 'Looks up a nightly rate.',
  input: z.object({ city: z.string() }),
  output: z.object({ rate: z.number() }),
  effect: 'read-only',
}).implement(async () => ({ rate: 120 }));

/**
 * Test tools that record every call that reaches their implementation:
 * - `add` (read-only): `{ a: number, b: number }` → `{ sum }`
 * - `set_mode` (irreversible): `{ mode: 'fast' | 'safe' }` → `{ mode }`
 * - `create_order` (compensable): `{ item: string, quantity: int }` → `{ orderId }`, undone by `cancel_order`
 */
export function createRecordingTools(): { tools: Tool[]; calls: RecordedCall[] } {
  const calls: RecordedCall[] = [];
  const record = (tool: string, input: unknown, ctx: { idempotencyKey: string; attempt: number }) =>
    calls.push({ tool, input, idempotencyKey: ctx.idempotencyKey, attempt: ctx.attempt });
  const tools = [
    addContract.implement(async (input, ctx) => {
      record('add', input, ctx);
      return { sum: input.a + input.b };
    }),
    defineTool({
      name: 'set_mode',
      description: 'Sets the processing mode.',
      input: z.object({ mode: z.enum(['fast', 'safe']) }),
      output: z.object({ mode: z.string() }),
      effect: 'irreversible',
      idempotent: true,
      approval: 'never',
    }).implement(async (input, ctx) => {
      record('set_mode', input, ctx);
      return { mode: input.mode };
    }),
    createOrderContract.implement(async (input, ctx) => {
      record('create_order', input, ctx);
      return { orderId: `order-${ctx.idempotencyKey}` };
    }),
    defineTool({
      name: 'cancel_order',
      description: 'Cancels an order.',
      input: z.object({ originalInput: z.unknown(), originalOutput: z.unknown().optional(), originalKey: z.string() }),
      output: z.object({ cancelled: z.boolean() }),
      effect: 'irreversible',
      idempotent: true,
    }).implement(async (input, ctx) => {
      record('cancel_order', input, ctx);
      return { cancelled: true };
    }),
  ];
  return { tools, calls };
}

/**
 * `wait_for_cancel`: a read-only stand-in for a long call that only ends when it is cancelled; `onCancel` hears the
 * label of each cancelled call.
 */
export function createWaitForCancelTool(onCancel: (label: string) => void = () => {}): Tool {
  return defineTool({
    name: 'wait_for_cancel',
    description: 'Waits until the call is cancelled (a stand-in for a long call).',
    input: z.object({ label: z.string() }),
    output: z.object({ label: z.string() }),
    effect: 'read-only',
    idempotent: true,
    timeout: '2 minutes',
    retry: { totalDeadline: '5 minutes' },
  }).implement(
    (input, ctx) =>
      new Promise((_resolve, reject) =>
        ctx.signal.addEventListener('abort', () => {
          onCancel(input.label);
          reject(new Error('cancelled'));
        }),
      ),
  );
}
