import { z } from 'zod';
import { compensationInput } from '../../src/tools/compensation-input';
import { defineTool, type ReconcileResult, type Tool } from '../../src/tools/define-tool';
import { withIdempotencyKey } from '../../src/tools/idempotent-fetch';
import type { ToolContext } from '../../src/tools/tool-context';
import { throwForHttpStatus } from '../../src/failures/tool-errors';
import { LEDGER_SETTINGS, type LedgerEffect } from './ledger-server';

/**
 * Timeouts and retries of the chaos tools. An attempt on a killed worker ends only by its start-to-close
 * timeout, so it is short; retries are many and the deadline long, so a call survives several kills.
 * The key store's lease (see the chaos worker) must be shorter than `timeout`, so the retry after a
 * kill finds the lease expired and reconciles.
 */
export const CHAOS_TOOL_SETTINGS = {
  timeout: '3 seconds',
  retry: { maximumAttempts: 30, initialDelay: '200 ms', maxDelay: '2 seconds', totalDeadline: '5 minutes' },
} as const;

/** Ledger effect kinds the chaos tools write. */
export const CHAOS_EFFECT_KINDS = { charge: 'charge', refund: 'refund', notify: 'notify' } as const;

/** Contract: charge an account (non-idempotent downstream: the ledger does not deduplicate). */
export const chargeContract = defineTool({
  name: 'charge',
  description: 'Charges an account on the test ledger. Undone by refund. Do not use to read balances.',
  input: z.object({ account: z.string().min(1), amount: z.number().int().positive() }),
  output: z.object({ effectId: z.string() }),
  effect: 'compensable',
  undo: 'refund',
  idempotent: false,
  ...CHAOS_TOOL_SETTINGS,
});

/** Contract: refund what a charge did under its key (the undo of charge). */
export const refundContract = defineTool({
  name: 'refund',
  description: 'Refunds the charge made under an earlier charge call. Used only to undo charge.',
  input: compensationInput(chargeContract),
  output: z.object({ refunded: z.boolean(), effectId: z.string().optional() }),
  effect: 'irreversible',
  idempotent: false,
  ...CHAOS_TOOL_SETTINGS,
});

/**
 * Contract: send the account holder a receipt (irreversible, no undo). With no undo tool and no approval it is
 * pre-cleared on the fast path, so a turn that calls it alone runs it inside its fused step (`callModelAndTools`,
 * docs/fast-path.md): the chaos runs that complete call it last, which puts the fused step's crash windows under
 * the kills and pauses.
 */
export const notifyContract = defineTool({
  name: 'notify',
  description: 'Sends the account holder a receipt for the charges made. Cannot be undone. Call it last.',
  input: z.object({ account: z.string().min(1), total: z.number().int().positive() }),
  output: z.object({ effectId: z.string() }),
  effect: 'irreversible',
  idempotent: false,
  approval: 'never',
  ...CHAOS_TOOL_SETTINGS,
});

/** Moments at which the pause chaos stops a worker from inside a tool (synchronously, as a GC pause would). */
export type ChaosPauseMoment = 'after-claim' | 'before-send' | 'in-activation';

/** Request header naming the worker process that sent a ledger write (the pause chaos stops that one). */
export const CHAOS_WORKER_PID_HEADER = 'x-chaos-worker-pid';

/** Options of {@link createChaosTools}. */
export interface ChaosToolOptions {
  /**
   * Called at each {@link ChaosPauseMoment}: the chaos worker SIGSTOPs itself there when the harness armed
   * that moment (for that tool, if it was named). `before-send` comes in the synchronous work just before the
   * request is built and sent.
   */
  pausePoint?: (moment: ChaosPauseMoment, tool: string) => void;
  /** Base URL of the ledger (`startLedgerServer().url`). */
  ledgerUrl: string;
  /** Each call first waits a random 0..thinkMs, widening the "key claimed, effect not yet done" window. */
  thinkMs?: number;
  random?: () => number;
}

/**
 * The chaos tools: `charge` (compensable, undone by `refund`), `refund` and `notify` (irreversible, no undo),
 * each writing to the test ledger under the call's idempotency key and each able to reconcile an unknown outcome by asking the
 * ledger what happened under the key. A charge above the ledger's limit fails permanently (HTTP 422).
 */
export function createChaosTools(options: ChaosToolOptions): Tool[] {
  const random = options.random ?? Math.random;
  const ledger = options.ledgerUrl.replace(/\/$/, '');
  const think = async (ctx: ToolContext): Promise<void> => {
    const ms = Math.floor(random() * (options.thinkMs ?? 0));
    if (ms > 0) await sleep(ms, ctx.signal);
  };
  const write = async (ctx: ToolContext, kind: string, amount: number): Promise<string> => {
    options.pausePoint?.('before-send', kind); // each tool writes effects of its own kind
    // withIdempotencyKey asserts the lease first: after a pause longer than the lease nothing is sent.
    // The ledger checks neither the key nor the fencing token: only the engine stands between a stale
    // holder and a second effect here.
    const init = withIdempotencyKey(ctx, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [CHAOS_WORKER_PID_HEADER]: String(process.pid) },
      body: JSON.stringify({ key: ctx.idempotencyKey, kind, amount }),
    });
    const response = await throwForHttpStatus(await fetch(`${ledger}/effects`, init));
    return ((await response.json()) as { effectId: string }).effectId;
  };
  const find = async (key: string, kind: string, ctx: ToolContext, purpose = 'lookup'): Promise<LedgerEffect[]> => {
    const query = new URLSearchParams({ key, kind });
    const response = await throwForHttpStatus(
      await fetch(`${ledger}/effects?${query}`, {
        headers: { [LEDGER_SETTINGS.purposeHeader]: purpose },
        signal: ctx.signal,
      }),
    );
    return ((await response.json()) as { effects: LedgerEffect[] }).effects;
  };

  const charge = chargeContract.implement(
    async ({ amount }, ctx) => {
      options.pausePoint?.('after-claim', chargeContract.name);
      await think(ctx);
      return { effectId: await write(ctx, CHAOS_EFFECT_KINDS.charge, amount) };
    },
    {
      reconcile: async (key, ctx): Promise<ReconcileResult<{ effectId: string }>> => {
        const [done] = await find(key, CHAOS_EFFECT_KINDS.charge, ctx, 'reconcile');
        return done ? { done: true, output: { effectId: done.effectId } } : { done: false };
      },
    },
  );
  const refund = refundContract.implement(
    async ({ originalInput, originalKey }, ctx) => {
      options.pausePoint?.('after-claim', refundContract.name);
      await think(ctx);
      // Undo whatever was done under the forward key: nothing to refund if the charge never happened.
      const charges = await find(originalKey, CHAOS_EFFECT_KINDS.charge, ctx);
      if (charges.length === 0) return { refunded: false };
      return { refunded: true, effectId: await write(ctx, CHAOS_EFFECT_KINDS.refund, originalInput.amount) };
    },
    {
      reconcile: async (key, ctx): Promise<ReconcileResult<{ refunded: boolean; effectId?: string }>> => {
        const [done] = await find(key, CHAOS_EFFECT_KINDS.refund, ctx, 'reconcile');
        return done ? { done: true, output: { refunded: true, effectId: done.effectId } } : { done: false };
      },
    },
  );
  const notify = notifyContract.implement(
    async ({ total }, ctx) => {
      options.pausePoint?.('after-claim', notifyContract.name);
      await think(ctx);
      return { effectId: await write(ctx, CHAOS_EFFECT_KINDS.notify, total) };
    },
    {
      reconcile: async (key, ctx): Promise<ReconcileResult<{ effectId: string }>> => {
        const [done] = await find(key, CHAOS_EFFECT_KINDS.notify, ctx, 'reconcile');
        return done ? { done: true, output: { effectId: done.effectId } } : { done: false };
      },
    },
  );
  return [charge, refund, notify] as Tool[];
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason as Error);
      },
      { once: true },
    );
  });
}
