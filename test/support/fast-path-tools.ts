import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { z } from 'zod';
import type { ModelProvider } from '../../src/contract/model-types';
import { scriptedModel } from '../../src/model/scripted-model';
import { TransientToolError } from '../../src/failures/tool-errors';
import { defineTool, type Tool } from '../../src/tools/define-tool';
import { closeHttpServer, listenOnFreePort } from './local-server';

/** Options of {@link createFastPathTools}. */
export interface FastPathToolOptions {
  /** The test ledger (`startLedgerServer`), which records every payment and does not deduplicate. */
  ledgerUrl: string;
  /** A {@link startGateServer}: `wait_at_gate` waits for its answer. */
  gateUrl: string;
  /**
   * The worker process SIGKILLs itself when a call reaches the gate: a kill at an exact point of the workflow
   * task (after the payment and two model turns ran locally), whatever the machine's load.
   */
  dieAtGate?: boolean;
}

/**
 * The tools of the fast-path tests: `pay_fast` (an effect, POSTed to the ledger under the call's key),
 * `wait_at_gate` (read-only; waits until the test opens the gate: where a worker is killed mid-task) and
 * `slow_report` (read-only, with a 60 s attempt timeout: too long for the fast path).
 */
export function createFastPathTools(options: FastPathToolOptions): Tool[] {
  const pay = defineTool({
    name: 'pay_fast',
    description: 'Pays an amount on the test ledger. Do not use to read balances.',
    input: z.object({ amount: z.number().int().positive() }),
    output: z.object({ effectId: z.string() }),
    effect: 'irreversible',
    approval: 'never',
    idempotent: false,
  }).implement(async ({ amount }, ctx) => {
    const response = await fetch(`${options.ledgerUrl}/effects`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: ctx.idempotencyKey, kind: 'payment', amount }),
    });
    return { effectId: ((await response.json()) as { effectId: string }).effectId };
  });
  const gate = defineTool({
    name: 'wait_at_gate',
    description: 'Waits until the gate opens. Read-only.',
    input: z.object({}),
    output: z.object({ opened: z.boolean() }),
    effect: 'read-only',
    idempotent: true,
  }).implement(async () => {
    if (options.dieAtGate) process.kill(process.pid, 'SIGKILL');
    await (await fetch(`${options.gateUrl}/gate`)).text();
    return { opened: true };
  });
  const slow = defineTool({
    name: 'slow_report',
    description: 'Builds a report; may take up to a minute. Read-only.',
    input: z.object({}),
    output: z.object({ report: z.string() }),
    effect: 'read-only',
    idempotent: true,
    timeout: '60 seconds',
  }).implement(async () => ({ report: 'ready' }));
  return [pay, gate, slow];
}

/** POSTs an effect of `kind` under `key` to the test ledger; returns its id. */
async function recordEffect(ledgerUrl: string, key: string, kind: string, amount: number): Promise<string> {
  const response = await fetch(`${ledgerUrl}/effects`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key, kind, amount }),
  });
  return ((await response.json()) as { effectId: string }).effectId;
}

/**
 * The tools the fused-step tests add to {@link createFastPathTools}, each of a kind a fused step must leave to
 * the workflow, or must stop at:
 * - `book_fast` (compensable, undone by `cancel_fast`): registers a compensation before it runs;
 * - `pay_checked` (irreversible, `approval: 'always'`): waits for a human;
 * - `pay_flaky` (irreversible): the first attempt of each key fails (transient, before any effect), the next pays.
 */
export function createFusedStepTools(options: Pick<FastPathToolOptions, 'ledgerUrl'>): Tool[] {
  const failedOnce = new Set<string>();
  const amount = z.object({ amount: z.number().int().positive() });
  const effect = z.object({ effectId: z.string() });
  return [
    defineTool({
      name: 'book_fast',
      description: 'Books an amount on the test ledger; cancel_fast undoes it.',
      input: amount,
      output: effect,
      effect: 'compensable',
      undo: 'cancel_fast',
      approval: 'never',
      idempotent: false,
    }).implement(async (input, ctx) => ({
      effectId: await recordEffect(options.ledgerUrl, ctx.idempotencyKey, 'booking', input.amount),
    })),
    defineTool({
      name: 'cancel_fast',
      description: 'Cancels a booking.',
      input: z.object({ originalInput: z.unknown(), originalOutput: z.unknown().optional(), originalKey: z.string() }),
      output: z.object({ cancelled: z.string() }),
      effect: 'irreversible',
      approval: 'never',
      idempotent: false,
    }).implement(async (input) => ({
      cancelled: await recordEffect(options.ledgerUrl, input.originalKey, 'cancel', 1),
    })),
    defineTool({
      name: 'pay_checked',
      description: 'Pays an amount on the test ledger once a human approved it.',
      input: amount,
      output: effect,
      effect: 'irreversible',
      approval: 'always',
      idempotent: false,
    }).implement(async (input, ctx) => ({
      effectId: await recordEffect(options.ledgerUrl, ctx.idempotencyKey, 'payment', input.amount),
    })),
    defineTool({
      name: 'pay_flaky',
      description: 'Pays an amount on the test ledger; its first attempt fails before paying.',
      input: amount,
      output: effect,
      effect: 'irreversible',
      approval: 'never',
      idempotent: false,
    }).implement(async (input, ctx) => {
      if (!failedOnce.has(ctx.idempotencyKey)) {
        failedOnce.add(ctx.idempotencyKey);
        throw new TransientToolError('The ledger is busy; nothing was paid.', { mayHaveHadEffect: false });
      }
      return { effectId: await recordEffect(options.ledgerUrl, ctx.idempotencyKey, 'payment', input.amount) };
    }),
  ];
}

/**
 * The `counted` model provider: the scripted model, which first appends the turn it is asked for to
 * `logPath` (one line per call, shared by the worker processes of a test), so a test counts the model's calls.
 */
export function countedScriptedModel(logPath: string): ModelProvider {
  return async (request) => {
    appendFileSync(logPath, `${request.turn + 1}\n`);
    return scriptedModel(request);
  };
}

/** The turns asked of {@link countedScriptedModel}, one entry per call, in order. */
export function countedModelCalls(logPath: string): number[] {
  if (!existsSync(logPath)) return [];
  return readFileSync(logPath, 'utf8').split('\n').filter(Boolean).map(Number);
}

/** A gate: `GET /gate` is answered only once the test opens it. */
export interface GateServer {
  url: string;
  /** How many `GET /gate` arrived so far. */
  arrivals(): number;
  /** Answers the waiting requests and every later one at once. */
  open(): void;
  close(): Promise<void>;
}

/** Starts a closed {@link GateServer} on a free port of 127.0.0.1. */
export async function startGateServer(): Promise<GateServer> {
  let arrivals = 0;
  let opened = false;
  const waiting: ServerResponse[] = [];
  const answer = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/plain' }).end('open');
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    arrivals += 1;
    if (opened) answer(res);
    else waiting.push(res);
  });
  const port = await listenOnFreePort(server);
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals: () => arrivals,
    open: () => {
      opened = true;
      for (const res of waiting.splice(0)) answer(res);
    },
    close: () => closeHttpServer(server),
  };
}
