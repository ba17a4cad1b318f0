import { z } from 'zod';
import { defineTool, type Tool } from '../../src/tools/define-tool';
import type { LedgerServer } from './ledger-server';

/** What `show_card` returns: far above its output budget, so it is stored and the model sees a handle. */
export const CARD_NUMBER = '4111 1111 1111 1111';

/**
 * Trip tools whose effects land on a test ledger (test/support/ledger-server.ts), where they are counted:
 * - `book_flight` (compensable, undone by `cancel_flight`): records `book` under the call's key;
 * - `cancel_flight`: records `cancel` under the key of the booking it undoes (`originalKey`);
 * - `show_card` (read-only): returns a large output with a card number, stored as a claim check.
 */
export function tripLedgerTools(ledger: LedgerServer): Tool[] {
  const write = async (key: string, kind: string): Promise<string> => {
    const response = await fetch(`${ledger.url}/effects`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key, kind, amount: 1 }),
    });
    if (response.status !== 201) throw new Error(`ledger answered ${response.status}`);
    return ((await response.json()) as { effectId: string }).effectId;
  };
  return [
    defineTool({
      name: 'book_flight',
      description: 'Books a flight.',
      input: z.object({ to: z.string() }),
      output: z.object({ bookingId: z.string() }),
      effect: 'compensable',
      undo: 'cancel_flight',
      idempotent: false,
    }).implement(async (_input, ctx) => ({ bookingId: await write(ctx.idempotencyKey, 'book') })),
    defineTool({
      name: 'cancel_flight',
      description: 'Cancels a booked flight.',
      input: z.object({ originalInput: z.unknown(), originalOutput: z.unknown().optional(), originalKey: z.string() }),
      output: z.object({ cancelled: z.string() }),
      effect: 'irreversible',
      idempotent: false,
      approval: 'never',
    }).implement(async (input) => ({ cancelled: await write(input.originalKey, 'cancel') })),
    defineTool({
      name: 'show_card',
      description: 'Shows the card on file.',
      input: z.object({}),
      output: z.object({ card: z.string(), statement: z.string() }),
      effect: 'read-only',
      idempotent: true,
      budget: { maxOutputBytes: 1_024 },
    }).implement(async () => ({ card: CARD_NUMBER, statement: 'x'.repeat(4_000) })),
  ];
}

/**
 * `charge_card` (compensable, undone by `cancel_flight`): records `charge` with its amount under the call's key on
 * the ledger. Not in {@link tripLedgerTools}: only the runs that charge list it.
 */
export function chargeCardTool(ledger: LedgerServer): Tool {
  return defineTool({
    name: 'charge_card',
    description: 'Charges the card on file.',
    input: z.object({ amount: z.number() }),
    output: z.object({ chargeId: z.string() }),
    effect: 'compensable',
    undo: 'cancel_flight',
    idempotent: false,
  }).implement(async ({ amount }, ctx) => {
    const response = await fetch(`${ledger.url}/effects`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: ctx.idempotencyKey, kind: 'charge', amount }),
    });
    return { chargeId: ((await response.json()) as { effectId: string }).effectId };
  });
}
