/**
 * A worker process for the restart test (test/integration/worker-kill-restart.test.ts): the default settings
 * of `createWorker` (lease, heartbeats, timeouts) with one tool with effects, `record_step`, which POSTs to the
 * test ledger under its idempotency key and settles an unknown outcome by asking the ledger. Run as
 * `node --import tsx test/support/restart-worker.ts` so the test can SIGKILL it mid-call. Prints
 * {@link RESTART_WORKER_READY} once polling; runs until killed.
 */
import { z } from 'zod';
import { defineTool, type Tool } from '../../src/tools/define-tool';
import { withIdempotencyKey } from '../../src/tools/idempotent-fetch';
import { throwForHttpStatus } from '../../src/failures/tool-errors';
import type { LedgerEffect } from './ledger-server';
import { runWorkerProcess, workerProcessEnv } from './worker-process-main';

/** Environment variables the restart worker reads. */
export const RESTART_WORKER_ENV = workerProcessEnv('DT_RESTART', { ledgerUrl: 'LEDGER_URL' });

/** The line the worker prints when it starts polling. */
export const RESTART_WORKER_READY = 'restart-worker ready';

/** This script, for `spawnTestWorkerProcess`. */
export const RESTART_WORKER = { script: __filename, env: RESTART_WORKER_ENV, ready: RESTART_WORKER_READY };

/** The ledger kind `record_step` writes. */
export const RECORD_STEP_KIND = 'step';

/** `record_step`: one effect at the ledger per call (not idempotent downstream), reconciled after a crash. */
export function recordStepTool(ledgerUrl: string): Tool {
  return defineTool({
    name: 'record_step',
    description: 'Records a step at the test ledger. Not idempotent downstream.',
    input: z.object({ step: z.number().int() }),
    output: z.object({ effectId: z.string() }),
    effect: 'irreversible',
    idempotent: false,
    approval: 'never',
  }).implement(
    async ({ step }, ctx) => {
      const init = withIdempotencyKey(ctx, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key: ctx.idempotencyKey, kind: RECORD_STEP_KIND, amount: step }),
      });
      const response = await throwForHttpStatus(await fetch(`${ledgerUrl}/effects`, init));
      return { effectId: ((await response.json()) as { effectId: string }).effectId };
    },
    {
      reconcile: async (key, ctx) => {
        const query = new URLSearchParams({ key, kind: RECORD_STEP_KIND });
        const response = await fetch(`${ledgerUrl}/effects?${query}`, { signal: ctx.signal });
        const [done] = ((await response.json()) as { effects: LedgerEffect[] }).effects;
        return done ? { done: true, output: { effectId: done.effectId } } : { done: false };
      },
    },
  ) as Tool;
}

if (require.main === module) {
  const env = RESTART_WORKER_ENV;
  runWorkerProcess('restart-worker', env, (required) => ({ tools: [recordStepTool(required(env.ledgerUrl))] }));
}
