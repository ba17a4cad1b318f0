import { z } from 'zod';
import type { Duration } from '@temporalio/common';
import { defineTool, type Tool } from '../../src/tools/define-tool';
import { throwForHttpStatus } from '../../src/failures/tool-errors';

/** The limits of the test tool: the options of `defineTool` a test or the bench sets. */
export interface LimitedToolOptions {
  /** `concurrency.max`, keyed by the call's `account`. */
  concurrency?: number;
  /** `rateLimit.perSecond`, keyed by the call's `account`. */
  perSecond?: number;
  /** The attempt timeout (default 30 s). */
  timeout?: Duration;
  slotWait?: Duration;
  /** Sent as `x-worker`, so the downstream knows which worker called. */
  label?: string;
}

/**
 * `limited_call { account }`: a read-only tool that POSTs to the limits downstream (`/call?key=<account>`), its
 * limits keyed by the account, its HTTP failures classified by the engine (a 429's Retry-After included).
 */
export function limitedCallTool(downstreamUrl: string, options: LimitedToolOptions): Tool {
  const key = ({ account }: { account: string }) => account;
  return defineTool({
    name: 'limited_call',
    description: 'Calls the limited downstream for an account.',
    input: z.object({ account: z.string(), n: z.number().int().optional() }),
    output: z.object({ ok: z.boolean() }),
    effect: 'read-only',
    ...(options.concurrency !== undefined ? { concurrency: { max: options.concurrency, key } } : {}),
    ...(options.perSecond !== undefined ? { rateLimit: { perSecond: options.perSecond, key } } : {}),
    ...(options.concurrency === undefined && options.perSecond === undefined ? { breaker: true } : {}),
    ...(options.timeout ? { timeout: options.timeout } : {}),
    ...(options.slotWait ? { slotWait: options.slotWait } : {}),
    retry: { maximumAttempts: 3, totalDeadline: '10 minutes' },
  }).implement(async ({ account }, ctx) => {
    const response = await throwForHttpStatus(
      await fetch(`${downstreamUrl}/call?key=${encodeURIComponent(account)}`, {
        method: 'POST',
        signal: ctx.signal,
        ...(options.label ? { headers: { 'x-worker': options.label } } : {}),
      }),
    );
    return (await response.json()) as { ok: boolean };
  });
}
