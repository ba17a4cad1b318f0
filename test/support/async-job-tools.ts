import type { Duration } from '@temporalio/common';
import { z } from 'zod';
import { defineAsyncJobTool } from '../../src/tools/define-async-job-tool';
import { defineTool, type Tool } from '../../src/tools/define-tool';
import { throwForHttpStatus } from '../../src/failures/tool-errors';

const input = z.object({ value: z.number().int() });
const output = z.object({ jobId: z.string(), doubled: z.number().int() });

/** Where the async-job tools send their jobs and where callbacks go (known once both servers run). */
export interface AsyncJobUrls {
  downstream: string;
  callbacks: string;
}

/**
 * The async-job tools of the tests, against `startJobDownstream`:
 * - `double_by_callback`: the downstream calls back (the callback URL carries the call's token);
 * - `double_by_polling`: the worker polls, 150 ms first, at most 600 ms between polls, deadline `pollDeadline`;
 * - `double_in_background`: like the callback one, and the model may fetch its result later;
 * - `look_up_weather`: an ordinary read-only tool, the "other work" of a run;
 * - `reserve_in_background`: a compensable fetch-later tool whose undo `release_reservation` records the keys
 *   it undid in `undone`.
 */
export function createAsyncJobTools(urls: AsyncJobUrls, pollDeadline: Duration = '2 m', undone: string[] = []): Tool[] {
  const submit = async (
    { value }: { value: number },
    ctx: { idempotencyKey: string; callbackToken: string; signal: AbortSignal },
  ) => {
    const response = await fetch(`${urls.downstream}/jobs`, {
      method: 'POST',
      body: JSON.stringify({ key: ctx.idempotencyKey, value, callbackUrl: `${urls.callbacks}/${ctx.callbackToken}` }),
      signal: ctx.signal,
    });
    await throwForHttpStatus(response);
    return (await response.json()) as { jobId: string };
  };
  const common = {
    description: 'Doubles a number on a slow remote service.',
    input,
    output,
    effect: 'irreversible' as const,
    approval: 'never' as const,
    idempotent: true,
  };
  const byCallback = defineAsyncJobTool({
    ...common,
    name: 'double_by_callback',
    asyncJob: { completion: 'callback', deadline: '2 m' },
  }).implement({ submit });
  const inBackground = defineAsyncJobTool({
    ...common,
    name: 'double_in_background',
    asyncJob: { completion: 'callback', deadline: '2 m', fetchLater: true },
  }).implement({ submit });
  const byPolling = defineAsyncJobTool({
    ...common,
    name: 'double_by_polling',
    heartbeatTimeout: '2 s',
    asyncJob: { completion: 'poll', deadline: pollDeadline, pollInterval: '150 ms', maxPollInterval: '600 ms' },
  }).implement({
    submit,
    poll: async ({ jobId }, ctx) => {
      const response = await fetch(`${urls.downstream}/jobs/${jobId}`, { signal: ctx.signal });
      await throwForHttpStatus(response);
      return (await response.json()) as
        { done: true; output: z.input<typeof output> } | { done: false; percent: number };
    },
  });
  const weather = defineTool({
    name: 'look_up_weather',
    description: 'The weather in a city.',
    input: z.object({ city: z.string() }),
    output: z.object({ city: z.string(), sky: z.string() }),
    effect: 'read-only',
    idempotent: true,
  }).implement(async ({ city }) => ({ city, sky: 'clear' }));
  const reserveInBackground = defineAsyncJobTool({
    ...common,
    name: 'reserve_in_background',
    effect: 'compensable',
    undo: 'release_reservation',
    asyncJob: { completion: 'callback', deadline: '2 m', fetchLater: true },
  }).implement({ submit });
  const release = defineTool({
    name: 'release_reservation',
    description: 'Releases a reservation (undo of reserve_in_background).',
    input: z.object({ originalKey: z.string() }).passthrough(),
    output: z.object({ released: z.boolean() }),
    effect: 'irreversible',
    approval: 'never',
    idempotent: true,
  }).implement(async ({ originalKey }) => {
    undone.push(originalKey);
    return { released: true };
  });
  return [byCallback, inBackground, byPolling, weather, reserveInBackground, release];
}
