import { writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { z } from 'zod';
import { defineTool, type ReconcileResult, type Tool } from '../../src/tools/define-tool';
import { CHAOS_TOOL_SETTINGS } from './chaos-tools';
import { LEDGER_SETTINGS, type LedgerEffect } from './ledger-server';

/** The HTTP client the plain tool sends its effect with. */
export type PlainHttpClient = 'fetch' | 'node-http';

/** What the plain tool writes to `<reportDir>/<worker>.json` after it tried to send its effect. */
export interface PlainSendReport {
  worker: string;
  outcome: 'sent' | 'refused';
  /** The error the send failed with (its cause's, for fetch), when it did. */
  error?: string;
}

/** Options of {@link createPlainHttpTools}. */
export interface PlainHttpToolOptions {
  ledgerUrl: string;
  /**
   * A downstream the tool reads before its effect (`GET <gateUrl>/gate/<worker>`): the test holds the answer
   * to one worker's read to stop that worker inside the await, and learns from the request that it got there.
   */
  gateUrl: string;
  client: PlainHttpClient;
  /** The name of this worker process, in the gate path and the report. */
  worker: string;
  /** Where the tool writes its {@link PlainSendReport} (a file, so the report itself needs no HTTP). */
  reportDir: string;
}

/**
 * `pay_plain`: a tool written the ordinary way, with no helper and no `ctx` in sight of its requests:
 * it awaits a downstream read, then POSTs its effect to the test ledger (which does not deduplicate) with
 * plain `fetch` or plain `node:http`. Its reconcile asks the ledger what happened under the key.
 */
export function createPlainHttpTools(options: PlainHttpToolOptions): Tool[] {
  const ledger = options.ledgerUrl.replace(/\/$/, '');
  const report = (value: Omit<PlainSendReport, 'worker'>): void =>
    writeFileSync(
      join(options.reportDir, `${options.worker}.json`),
      JSON.stringify({ worker: options.worker, ...value }),
    );
  const pay = defineTool({
    name: 'pay_plain',
    description: 'Pays an amount on the test ledger. Do not use to read balances.',
    input: z.object({ amount: z.number().int().positive() }),
    output: z.object({ effectId: z.string() }),
    effect: 'irreversible',
    // The only step of its run: no approval needed for this test (the default asks one for irreversible tools).
    approval: 'never',
    idempotent: false,
    ...CHAOS_TOOL_SETTINGS,
  }).implement(
    async ({ amount }, ctx) => {
      await (await fetch(`${options.gateUrl}/gate/${options.worker}`)).text();
      const body = JSON.stringify({ key: ctx.idempotencyKey, kind: 'payment', amount });
      try {
        const effectId = await (options.client === 'fetch' ? postWithFetch : postWithNodeHttp)(
          `${ledger}/effects`,
          body,
        );
        report({ outcome: 'sent' });
        return { effectId };
      } catch (error) {
        const cause = (error as Error).cause ?? error;
        report({ outcome: 'refused', error: String(cause) });
        throw error;
      }
    },
    {
      reconcile: async (key): Promise<ReconcileResult<{ effectId: string }>> => {
        const query = new URLSearchParams({ key, kind: 'payment' });
        const response = await fetch(`${ledger}/effects?${query}`, {
          headers: { [LEDGER_SETTINGS.purposeHeader]: 'reconcile' },
        });
        const [done] = ((await response.json()) as { effects: LedgerEffect[] }).effects;
        return done ? { done: true, output: { effectId: done.effectId } } : { done: false };
      },
    },
  );
  return [pay];
}

async function postWithFetch(url: string, body: string): Promise<string> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return ((await response.json()) as { effectId: string }).effectId;
}

function postWithNodeHttp(url: string, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve((JSON.parse(text) as { effectId: string }).effectId));
    });
    req.on('error', reject);
    req.end(body);
  });
}
