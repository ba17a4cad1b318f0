import { z } from 'zod';
import { compensationInput } from '../../src/tools/compensation-input';
import { defineTool, type Tool, type ToolContract } from '../../src/tools/define-tool';
import type { ToolContext } from '../../src/tools/tool-context';
import { throwForHttpStatus } from '../../src/failures/tool-errors';
import type { LedgerEffect } from './ledger-server';

/** One call that reached an implementation. */
export interface ApprovalToolCall {
  tool: string;
  input: unknown;
  key: string;
}

/**
 * The tools of the approval tests, each recording the calls that reach its implementation:
 * - `pay` (irreversible, so approval `always` by default): `{ amountEur, reference }` → `{ paymentId }`;
 * - `transfer` (compensable, undone by `cancel_transfer`): approval only above 100 (a predicate);
 * - `reserve` (compensable, undone by `release`): no approval;
 * - `lookup` (read-only).
 */
export function createApprovalTools(): { tools: Tool[]; calls: ApprovalToolCall[] } {
  const calls: ApprovalToolCall[] = [];
  const record = (tool: string, input: unknown, ctx: ToolContext) =>
    calls.push({ tool, input, key: ctx.idempotencyKey });
  const reserve = defineTool({
    name: 'reserve',
    description: 'Reserves an item.',
    input: z.object({ item: z.string() }),
    output: z.object({ reservationId: z.string() }),
    effect: 'compensable',
    undo: 'release',
    idempotent: true,
  });
  const transfer = defineTool({
    name: 'transfer',
    description: 'Transfers money to an account. Amounts above 100 need a human approval.',
    input: z.object({ to: z.string(), amount: z.number().int().positive() }),
    output: z.object({ transferId: z.string() }),
    effect: 'compensable',
    undo: 'cancel_transfer',
    idempotent: true,
    approval: ({ amount }) => amount > 100,
  });
  const undo = <I extends z.ZodType, O extends z.ZodType>(name: string, forward: ToolContract<I, O>) =>
    defineTool({
      name,
      description: `Undoes ${forward.name}.`,
      input: compensationInput(forward),
      output: z.object({ undone: z.boolean() }),
      effect: 'irreversible',
      idempotent: true,
    }).implement(async (input, ctx) => {
      record(name, input, ctx);
      return { undone: true };
    });
  const tools: Tool[] = [
    defineTool({
      name: 'lookup',
      description: 'Looks up an account balance.',
      input: z.object({ account: z.string() }),
      output: z.object({ balance: z.number() }),
      effect: 'read-only',
      idempotent: true,
    }).implement(async (input, ctx) => {
      record('lookup', input, ctx);
      return { balance: 42 };
    }),
    reserve.implement(async (input, ctx) => {
      record('reserve', input, ctx);
      return { reservationId: `res-${ctx.stepId}` };
    }),
    undo('release', reserve),
    transfer.implement(async (input, ctx) => {
      record('transfer', input, ctx);
      return { transferId: `tr-${ctx.stepId}` };
    }),
    undo('cancel_transfer', transfer),
    createPayTool((input, ctx) => {
      record('pay', input, ctx);
      return Promise.resolve({ paymentId: `pay-${ctx.stepId}` });
    }),
  ];
  return { tools, calls };
}

/** Contract of `pay`: irreversible, so it needs approval by default. */
export const payContract = defineTool({
  name: 'pay',
  description: 'Charges the card. Irreversible.',
  input: z.object({ amountEur: z.number().positive(), reference: z.string() }),
  output: z.object({ paymentId: z.string() }),
  effect: 'irreversible',
  idempotent: false,
  retry: { maximumAttempts: 5, initialDelay: '100 ms', maxDelay: '500 ms' },
  timeout: '5 s',
});

function createPayTool(
  execute: (input: { amountEur: number; reference: string }, ctx: ToolContext) => Promise<{ paymentId: string }>,
): Tool {
  return payContract.implement(execute);
}

/**
 * `pay` writing to the test ledger (which does not deduplicate), with a reconcile that asks the ledger what
 * happened under the key: the tool of the crash tests, where effects are counted at the downstream.
 */
export function createLedgerPayTool(ledgerUrl: string): Tool {
  const ledger = ledgerUrl.replace(/\/$/, '');
  return payContract.implement(
    async ({ amountEur }, ctx) => {
      const response = await throwForHttpStatus(
        await fetch(`${ledger}/effects`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ key: ctx.idempotencyKey, kind: 'payment', amount: Math.round(amountEur) }),
          signal: ctx.signal,
        }),
      );
      return { paymentId: ((await response.json()) as { effectId: string }).effectId };
    },
    {
      reconcile: async (key, ctx) => {
        const response = await throwForHttpStatus(
          await fetch(`${ledger}/effects?${new URLSearchParams({ key, kind: 'payment' })}`, { signal: ctx.signal }),
        );
        const [done] = ((await response.json()) as { effects: LedgerEffect[] }).effects;
        return done ? { done: true, output: { paymentId: done.effectId } } : { done: false };
      },
    },
  );
}

/**
 * `wire` of the MCP approval tests: `{ amount }` → `{ wired: amount }`, irreversible, so a human approves each call
 * (the default of the tier); `wired` lists the amounts of the calls that really ran.
 */
export function createWireTool(): { tool: Tool; wired: number[] } {
  const wired: number[] = [];
  const tool = defineTool({
    name: 'wire',
    description: 'Wires money. Irreversible, so a human approves each call.',
    input: z.object({ amount: z.number().positive() }),
    output: z.object({ wired: z.number() }),
    effect: 'irreversible',
    idempotent: true,
  }).implement(async ({ amount }) => {
    wired.push(amount);
    return { wired: amount };
  });
  return { tool, wired };
}
