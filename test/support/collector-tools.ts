/**
 * The tools module of the collector test (`durable-tools worker --tools test/support/collector-tools.ts`):
 * - `book_hotel` (compensable, undone by `cancel_hotel`): its first attempt fails transiently (UNAVAILABLE), the
 *   retry succeeds;
 * - `cancel_hotel`: the undo;
 * - `charge_card` (irreversible, approval always): the card is declined (permanent, PERMISSION_DENIED).
 */
import { z } from 'zod';
import { PermanentToolError, TransientToolError } from '../../src/failures/tool-errors';
import { compensationInput } from '../../src/tools/compensation-input';
import { defineTool, type Tool } from '../../src/tools/define-tool';

const bookHotel = defineTool({
  name: 'book_hotel',
  description: 'Books a hotel.',
  input: z.object({ hotel: z.string() }),
  output: z.object({ bookingId: z.string() }),
  effect: 'compensable',
  undo: 'cancel_hotel',
  idempotent: true,
  retry: { initialDelay: '50 ms', maxDelay: '100 ms' },
});

export const tools: Tool[] = [
  bookHotel.implement(async (_input, ctx) => {
    if (ctx.attempt === 1) throw new TransientToolError('The hotel API is busy.', { code: 'UNAVAILABLE' });
    return { bookingId: `booking-${ctx.stepId}` };
  }),
  defineTool({
    name: 'cancel_hotel',
    description: 'Cancels a hotel booking.',
    input: compensationInput(bookHotel),
    output: z.object({ cancelled: z.boolean() }),
    effect: 'irreversible',
    idempotent: true,
    approval: 'never',
  }).implement(async () => ({ cancelled: true })),
  defineTool({
    name: 'charge_card',
    description: 'Charges the card.',
    input: z.object({ amountCents: z.number().int() }),
    output: z.object({ chargeId: z.string() }),
    effect: 'irreversible',
    idempotent: true,
    approval: 'always',
  }).implement(async () => {
    throw new PermanentToolError('The card was declined.', { code: 'PERMISSION_DENIED' });
  }),
];
