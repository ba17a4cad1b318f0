/**
 * The hotel booking that ends declined, the run of the tracing tests (tracing, workflow-span-bytes) and, as the
 * tools module of the collector test (`durable-tools worker --tools test/support/collector-tools.ts`), of that one:
 * - `book_hotel` (compensable, undone by `cancel_hotel`): its first attempt fails transiently (UNAVAILABLE), the
 *   retry succeeds;
 * - `cancel_hotel`: the undo;
 * - `charge_card` (irreversible): the card is declined (permanent, PERMISSION_DENIED).
 */
import { z } from 'zod';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import { PermanentToolError, TransientToolError } from '../../src/failures/tool-errors';
import { compensationInput } from '../../src/tools/compensation-input';
import { defineTool, type Tool } from '../../src/tools/define-tool';
import { defineChargeCard } from './test-tools';

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

/** The run: book the hotel, pay 999.99 with the card (declined), done. */
export const declinedBookingScript: ScriptedTurn[] = [
  { toolCalls: [{ name: 'book_hotel', arguments: { hotel: 'Adlon' } }] },
  { toolCalls: [{ name: 'charge_card', arguments: { amountCents: 99_999 } }] },
  { text: 'done', final: true },
];

/** The three tools; `charge_card` asks for approval as `chargeApproval` says. */
export function declinedBookingTools(chargeApproval: 'never' | 'always'): Tool[] {
  return [
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
    defineChargeCard(chargeApproval).implement(async () => {
      throw new PermanentToolError('The card was declined.', { code: 'PERMISSION_DENIED' });
    }),
  ];
}

/** The collector test's tools: the card payment waits for a human's approval. */
export const tools: Tool[] = declinedBookingTools('always');
