import { z } from 'zod';
import { compensationInput } from '../../src/tools/compensation-input';
import { defineTool, type Tool } from '../../src/tools/define-tool';
import { withIdempotencyKey } from '../../src/tools/idempotent-fetch';
import { throwForHttpStatus } from '../../src/failures/tool-errors';
import type { LedgerEffect } from './ledger-server';

/** The ledger kinds the conversation tools write. */
export const CONVERSATION_LEDGER_KINDS = { booking: 'booking', cancellation: 'cancellation' } as const;

/** How a tool posts one effect to the test ledger under its key, and finds it again after a crash. */
function ledgerWriter(ledgerUrl: string, kind: string) {
  return {
    post: async (key: string, amount: number, init: RequestInit): Promise<string> => {
      const response = await throwForHttpStatus(
        await fetch(`${ledgerUrl}/effects`, { ...init, method: 'POST', body: JSON.stringify({ key, kind, amount }) }),
      );
      return ((await response.json()) as { effectId: string }).effectId;
    },
    find: async (key: string, signal: AbortSignal): Promise<LedgerEffect | undefined> => {
      const query = new URLSearchParams({ key, kind });
      const response = await fetch(`${ledgerUrl}/effects?${query}`, { signal });
      return ((await response.json()) as { effects: LedgerEffect[] }).effects[0];
    },
  };
}

/**
 * The conversation tests' tools over the test ledger (which does not deduplicate, so a duplicate shows):
 * `book_hotel` (compensable, undone by `cancel_hotel`; with `approval`, every call needs a human) and its undo.
 * Both settle an unknown outcome after a crash by asking the ledger.
 */
export function conversationTools(ledgerUrl: string, options: { approval?: boolean } = {}): Tool[] {
  const bookings = ledgerWriter(ledgerUrl, CONVERSATION_LEDGER_KINDS.booking);
  const cancellations = ledgerWriter(ledgerUrl, CONVERSATION_LEDGER_KINDS.cancellation);
  const book = defineTool({
    name: 'book_hotel',
    description: 'Books a hotel room for some nights.',
    input: z.object({ city: z.string(), nights: z.number().int().positive() }),
    output: z.object({ bookingId: z.string() }),
    effect: 'compensable',
    undo: 'cancel_hotel',
    idempotent: false,
    approval: options.approval ? 'always' : 'never',
  });
  const cancel = defineTool({
    name: 'cancel_hotel',
    description: 'Cancels a hotel booking.',
    input: compensationInput(book),
    output: z.object({ cancellationId: z.string() }),
    effect: 'irreversible',
    idempotent: false,
  });
  return [
    book.implement(
      async ({ nights }, ctx) => ({
        bookingId: await bookings.post(ctx.idempotencyKey, nights, withIdempotencyKey(ctx, {})),
      }),
      {
        reconcile: async (key, ctx) => {
          const done = await bookings.find(key, ctx.signal);
          return done ? { done: true, output: { bookingId: done.effectId } } : { done: false };
        },
      },
    ) as Tool,
    cancel.implement(
      async (_input, ctx) => ({
        cancellationId: await cancellations.post(ctx.idempotencyKey, 1, withIdempotencyKey(ctx, {})),
      }),
      {
        reconcile: async (key, ctx) => {
          const done = await cancellations.find(key, ctx.signal);
          return done ? { done: true, output: { cancellationId: done.effectId } } : { done: false };
        },
      },
    ) as Tool,
  ];
}
