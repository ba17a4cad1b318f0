/**
 * The tools module the command-line tests hand to `durable-tools worker --tools` / `dev --tools`:
 * - `create_order` (compensable, undone by `cancel_order`);
 * - `charge` (irreversible): a card that is declined (permanent 402) when `amount` is over 100;
 * - `hold` (read-only): blocks until its call is cancelled, so a run can be cancelled mid-call;
 * - `crunch` (read-only long call): `units` units of `unitMs`, reporting progress after each.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { compensationInput } from '../../src/tools/compensation-input';
import { defineTool, type Tool } from '../../src/tools/define-tool';
import { PermanentToolError } from '../../src/failures/tool-errors';

const createOrder = defineTool({
  name: 'create_order',
  description: 'Creates an order. Undone by cancel_order.',
  input: z.object({ item: z.string() }),
  output: z.object({ orderId: z.string() }),
  effect: 'compensable',
  undo: 'cancel_order',
  idempotent: true,
});

export const tools: Tool[] = [
  createOrder.implement(async (_input, ctx) => ({ orderId: `order-${ctx.stepId}` })),
  defineTool({
    name: 'cancel_order',
    description: 'Cancels an order made by create_order.',
    input: compensationInput(createOrder),
    output: z.object({ cancelled: z.boolean() }),
    effect: 'irreversible',
    idempotent: true,
  }).implement(async () => ({ cancelled: true })),
  defineTool({
    name: 'charge',
    description: 'Charges the card. Declined above 100.',
    input: z.object({ amount: z.number() }),
    output: z.object({ charged: z.number() }),
    effect: 'irreversible',
    approval: 'never', // not a test of approvals
    idempotent: true,
  }).implement(async ({ amount }) => {
    if (amount > 100) throw new PermanentToolError('The card was declined (402).', { code: 'PERMISSION_DENIED' });
    return { charged: amount };
  }),
  defineTool({
    name: 'hold',
    description: 'Waits until cancelled.',
    input: z.object({}),
    output: z.object({ held: z.boolean() }),
    effect: 'read-only',
    idempotent: true,
    timeout: '10 min',
  }).implement(
    (_input, ctx) =>
      new Promise((_resolve, reject) => {
        ctx.signal.addEventListener('abort', () => reject(new Error('cancelled')), { once: true });
      }),
  ),
  defineTool({
    name: 'crunch',
    description: 'Crunches a batch, unit by unit.',
    input: z.object({ units: z.number().int().min(1), unitMs: z.number().int().min(0) }),
    output: z.object({ crunched: z.number() }),
    effect: 'read-only',
    idempotent: true,
    longCall: { heartbeatTimeout: '5 s', deadline: '5 min' },
  }).implement(async ({ units, unitMs }, ctx) => {
    for (let unit = 0; unit < units; unit += 1) {
      await sleep(unitMs, undefined, { signal: ctx.signal });
      ctx.progress(((unit + 1) / units) * 100, `unit ${unit + 1} of ${units}`);
    }
    return { crunched: units };
  }),
];
