import { z } from 'zod';
import { defineTool, type Tool } from '../../src/tools/define-tool';
import { PermanentToolError } from '../../src/failures/tool-errors';

/** Effects counted per idempotency key, as a downstream ledger that does not deduplicate would see them. */
export class EffectLedger {
  readonly effects = new Map<string, number>();
  /** Lengths of what undo tools received as `originalInput.text`, by forward key. */
  readonly undone = new Map<string, number>();

  record(key: string): void {
    this.effects.set(key, (this.effects.get(key) ?? 0) + 1);
  }

  /** Effects of one run (keys start with its workflow id). */
  of(workflowId: string): Array<[string, number]> {
    return [...this.effects].filter(([key]) => key.startsWith(`${workflowId}/`));
  }
}

/**
 * Tools that return or accept big payloads, and a ledger of their effects:
 * - `big_output` (read-only): `{ kb }` → `{ data: kb KB of text }`;
 * - `big_effect` (irreversible, not idempotent downstream): records one effect, returns `{ receipt, blob: mb MB }`;
 * - `echo` (compensable by `unecho`, accepts arguments up to 1.5 MB): records an effect, returns `{ echoed }`;
 * - `unecho`: records the length of the text it undoes;
 * - `save_note` (compensable by `unecho`): `{ note: string, meta?: unknown }`, records an effect;
 * - `ship` (compensable by `unecho`): a discriminated union and a plain union of objects;
 * - `explode` (read-only): fails with a message of `mb` megabytes;
 * - `reject_payment` (irreversible): always fails permanently.
 */
export function createPayloadTools(ledger: EffectLedger): Tool[] {
  const echoInput = z.object({ text: z.string() });
  const echo = defineTool({
    name: 'echo',
    description: 'Stores a text and returns it.',
    input: echoInput,
    output: z.object({ echoed: z.string() }),
    effect: 'compensable',
    undo: 'unecho',
    idempotent: true,
    budget: { maxArgumentBytes: 1536 * 1024 },
  });
  return [
    defineTool({
      name: 'big_output',
      description: 'Returns a large text.',
      input: z.object({ kb: z.number().int().min(1).max(10_000) }),
      output: z.object({ data: z.string() }),
      effect: 'read-only',
      idempotent: true,
    }).implement(async ({ kb }) => ({ data: 'r'.repeat(kb * 1024) })),
    defineTool({
      name: 'big_effect',
      description: 'Does something once and returns a large receipt.',
      input: z.object({ mb: z.number().min(0).max(10) }),
      output: z.object({ receipt: z.string(), blob: z.string() }),
      effect: 'irreversible',
      approval: 'never', // not a test of approvals
      idempotent: false,
    }).implement(async ({ mb }, ctx) => {
      ledger.record(ctx.idempotencyKey);
      return { receipt: ctx.idempotencyKey, blob: 'b'.repeat(Math.round(mb * 1024 * 1024)) };
    }),
    echo.implement(async ({ text }, ctx) => {
      ledger.record(ctx.idempotencyKey);
      return { echoed: text };
    }),
    defineTool({
      name: 'unecho',
      description: 'Undoes echo, save_note and ship.',
      input: z.object({ originalInput: z.unknown(), originalOutput: z.unknown().optional(), originalKey: z.string() }),
      output: z.object({ undone: z.boolean() }),
      effect: 'irreversible',
      approval: 'never', // the stress runs have no human in the loop
      idempotent: true,
    }).implement(async (input, ctx) => {
      ledger.record(ctx.idempotencyKey);
      const text = (input.originalInput as { text?: unknown }).text;
      ledger.undone.set(input.originalKey, typeof text === 'string' ? text.length : -1);
      return { undone: true };
    }),
    defineTool({
      name: 'save_note',
      description: 'Saves a note with optional metadata.',
      input: z.object({ note: z.string(), meta: z.unknown().optional() }),
      output: z.object({ saved: z.boolean() }),
      effect: 'compensable',
      undo: 'unecho',
      idempotent: true,
    }).implement(async (_input, ctx) => {
      ledger.record(ctx.idempotencyKey);
      return { saved: true };
    }),
    defineTool({
      name: 'ship',
      description: 'Ships an order by post or for pickup.',
      input: z.object({
        method: z.discriminatedUnion('kind', [
          z.object({ kind: z.literal('post'), address: z.string() }),
          z.object({ kind: z.literal('pickup'), store: z.string() }),
        ]),
        gift: z.union([z.object({ wrap: z.boolean() }), z.object({ card: z.string() })]).optional(),
      }),
      output: z.object({ shipped: z.boolean() }),
      effect: 'compensable',
      undo: 'unecho',
      idempotent: true,
    }).implement(async (_input, ctx) => {
      ledger.record(ctx.idempotencyKey);
      return { shipped: true };
    }),
    defineTool({
      name: 'explode',
      description: 'Fails with an enormous error message.',
      input: z.object({ mb: z.number().min(0).max(10) }),
      output: z.object({ ok: z.boolean() }),
      effect: 'read-only',
      idempotent: true,
    }).implement(async ({ mb }) => {
      throw new PermanentToolError(`Exploded: ${'e'.repeat(Math.round(mb * 1024 * 1024))}`, { code: 'INTERNAL' });
    }),
    defineTool({
      name: 'reject_payment',
      description: 'Always declines.',
      input: z.object({}),
      output: z.object({ ok: z.boolean() }),
      effect: 'irreversible',
      approval: 'never', // not a test of approvals
      idempotent: true,
    }).implement(async () => {
      throw new PermanentToolError('Card declined.', { code: 'PERMISSION_DENIED' });
    }),
  ] as Tool[];
}
