/**
 * The tools of the "own workflows" tests (test/integration/own-workflows.test.ts): a trip pipeline with effects,
 * recorded where they run. Workflows see them only through `import type` (test/support/own-workflows.ts).
 */
import { z } from 'zod';
import { defineTool } from '../../src/tools/define-tool';
import { compensationInput } from '../../src/tools/compensation-input';
import { PermanentToolError } from '../../src/failures/tool-errors';
import { TOOL_ERROR_CODES } from '../../src/contract/activity-protocol';

/** One effect a tool made (or undid), in the order the tools ran. */
export interface Effect {
  tool: string;
  key: string;
  /** What the effect was about (a booking, a charge, a notice). */
  subject: string;
}

const undoOutput = z.object({ undone: z.boolean() });

/** The pipeline's tools and the effects they recorded (one list per test file). */
export function createOwnWorkflowTools() {
  const effects: Effect[] = [];
  const record = (tool: string, key: string, subject: string) => effects.push({ tool, key, subject });

  const reserveRoomContract = defineTool({
    name: 'reserve_room',
    description: 'Reserves a hotel room for some nights.',
    input: z.object({ city: z.string(), nights: z.number().int().min(1) }),
    output: z.object({ bookingId: z.string(), priceCents: z.number() }),
    effect: 'compensable',
    undo: 'cancel_room',
    idempotent: true,
  });
  const reserveRoom = reserveRoomContract.implement(async ({ city, nights }, ctx) => {
    record('reserve_room', ctx.idempotencyKey, city);
    return { bookingId: `room-${city}-${nights}`, priceCents: nights * 10_000 };
  });
  const chargeCardContract = defineTool({
    name: 'charge_card',
    description: 'Charges the card for a booking.',
    input: z.object({ bookingId: z.string(), amountCents: z.number().int() }),
    output: z.object({ chargeId: z.string() }),
    effect: 'compensable',
    undo: 'refund_card',
    idempotent: true,
  });
  const chargeCard = chargeCardContract.implement(async ({ bookingId }, ctx) => {
    record('charge_card', ctx.idempotencyKey, bookingId);
    return { chargeId: `charge-${bookingId}` };
  });
  // Each undo records the key of the call it undoes as its subject.
  const cancelRoom = defineTool({
    name: 'cancel_room',
    description: 'Cancels a room reservation.',
    input: compensationInput(reserveRoomContract),
    output: undoOutput,
    effect: 'irreversible',
    idempotent: true,
    approval: 'never',
  }).implement(async ({ originalKey }, ctx) => {
    record('cancel_room', ctx.idempotencyKey, originalKey);
    return { undone: true };
  });
  const refundCard = defineTool({
    name: 'refund_card',
    description: 'Refunds a charge.',
    input: compensationInput(chargeCardContract),
    output: undoOutput,
    effect: 'irreversible',
    idempotent: true,
    approval: 'never',
  }).implement(async ({ originalKey }, ctx) => {
    record('refund_card', ctx.idempotencyKey, originalKey);
    return { undone: true };
  });
  const confirmTrip = defineTool({
    name: 'confirm_trip',
    description: 'Confirms the trip with the travel agency; refused when the agency is closed.',
    input: z.object({ bookingId: z.string(), agencyOpen: z.boolean() }),
    output: z.object({ confirmation: z.string() }),
    effect: 'irreversible',
    idempotent: true,
    approval: 'never',
  }).implement(async ({ bookingId, agencyOpen }, ctx) => {
    if (!agencyOpen) {
      throw new PermanentToolError('The agency is closed today.', {
        code: TOOL_ERROR_CODES.CONFLICT,
        hint: 'Confirm the trip tomorrow.',
      });
    }
    record('confirm_trip', ctx.idempotencyKey, bookingId);
    return { confirmation: `confirmed-${bookingId}` };
  });
  const stampKey = defineTool({
    name: 'stamp_key',
    description: 'Returns the idempotency key it was called with.',
    input: z.object({ note: z.string() }),
    output: z.object({ key: z.string() }),
    effect: 'read-only',
  }).implement(async ({ note }, ctx) => {
    record('stamp_key', ctx.idempotencyKey, note);
    return { key: ctx.idempotencyKey };
  });
  const sendNotice = defineTool({
    name: 'send_notice',
    description: 'Sends a notice to a guest. Irreversible: a human approves each notice.',
    input: z.object({ to: z.string(), text: z.string() }),
    output: z.object({ sent: z.boolean() }),
    effect: 'irreversible',
    idempotent: true,
    approval: 'always',
  }).implement(async ({ to }, ctx) => {
    record('send_notice', ctx.idempotencyKey, to);
    return { sent: true };
  });
  const readReport = defineTool({
    name: 'read_report',
    description: 'Reads a long report (60 KB).',
    input: z.object({ page: z.number().int() }),
    output: z.object({ text: z.string() }),
    effect: 'read-only',
    budget: { maxOutputBytes: 64 * 1024, maxOutputTokens: 64 * 1024 },
  }).implement(async ({ page }) => ({ text: `${page}`.padEnd(60_000, '.') }));
  const tools = { reserveRoom, cancelRoom, chargeCard, refundCard, confirmTrip, stampKey, sendNotice, readReport };
  return { tools, effects };
}

/** The tools as the workflows type them (`proxyTools<OwnWorkflowTools>()`). */
export type OwnWorkflowTools = ReturnType<typeof createOwnWorkflowTools>['tools'];
