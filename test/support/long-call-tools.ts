import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineTool, type Tool } from '../../src/tools/define-tool';
import type { ToolContext } from '../../src/tools/tool-context';
import { throwForHttpStatus } from '../../src/failures/tool-errors';

/** Where a unit's work is told to the downstream: `/start/<i>` when it begins, `/commit/<i>` when it is done. */
export const UNIT_PATHS = {
  start: (unit: number) => `/start/${unit}`,
  commit: (unit: number) => `/commit/${unit}`,
} as const;

const input = z.object({ units: z.number().int().min(1).max(1000), unitMs: z.number().int().min(0).max(60_000) });
const output = z.object({ processed: z.number().int(), resumedFrom: z.number().int() });

/**
 * The long tools of the long-call tests: both process `units` units of `unitMs` each against a downstream
 * that counts every request (it does not deduplicate). A unit tells the downstream it starts, works, commits,
 * then checkpoints `{ next }` and reports progress. A retried attempt continues at `resumeFrom.next`.
 * - `process_units`: cancellation aborts at once (the unit in progress is not committed);
 * - `process_units_gently`: cancellation lets the unit in progress finish (`onCancel: 'finish-unit'`).
 */
export function createLongCallTools(downstreamUrl: string): Tool[] {
  const declare = (name: string, onCancel: 'abort' | 'finish-unit') =>
    defineTool({
      name,
      description: 'Processes units of a batch job, one after another.',
      input,
      output,
      effect: 'irreversible',
      idempotent: false,
      approval: 'never',
      retry: { maximumAttempts: 3, initialDelay: '200 ms' },
      longCall: { heartbeatTimeout: '3 s', deadline: '5 m', onCancel },
    }).implement(processUnits);
  const send = async (path: string, ctx: ToolContext) => {
    const response = await fetch(`${downstreamUrl}${path}`, {
      method: 'POST',
      headers: { 'Idempotency-Key': `${ctx.idempotencyKey}${path}` },
      signal: ctx.signal,
    });
    await throwForHttpStatus(response);
  };
  async function processUnits({ units, unitMs }: z.output<typeof input>, ctx: ToolContext) {
    const resumedFrom = (ctx.resumeFrom as { next?: number } | undefined)?.next ?? 0;
    for (let unit = resumedFrom; unit < units; unit += 1) {
      await send(UNIT_PATHS.start(unit), ctx);
      await sleep(unitMs, undefined, { signal: ctx.signal });
      await send(UNIT_PATHS.commit(unit), ctx);
      await ctx.checkpoint({ next: unit + 1 });
      ctx.progress(((unit + 1) / units) * 100, `unit ${unit + 1} of ${units}`);
    }
    return { processed: units, resumedFrom };
  }
  return [declare('process_units', 'abort'), declare('process_units_gently', 'finish-unit')];
}
