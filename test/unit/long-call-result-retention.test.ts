import { MockActivityEnvironment } from '@temporalio/testing';
import { z } from 'zod';
import { createToolActivities, type ToolActivity } from '../../src/activities/tool-activities';
import { checkpointHandle } from '../../src/activities/call-heartbeat';
import { outputHandle } from '../../src/contract/claim-check-reference';
import { MemoryIdempotencyStore } from '../../src/stores/idempotency/memory-idempotency-store';
import { defineTool } from '../../src/tools/define-tool';
import type { ToolLongCallOptions } from '../../src/tools/long-call';
import { createToolRegistry } from '../../src/tools/tool-registry';
import { MemoryTranscriptStore } from '../../src/stores/transcripts/memory-transcript-store';

const DAY = 24 * 60 * 60 * 1000;
const KEY = 'run-1/1';
const base = {
  name: 'export_ledger',
  description: 'Exports a ledger. Takes hours.',
  input: z.object({ ledger: z.string() }),
  output: z.object({ rows: z.array(z.string()) }),
  effect: 'irreversible' as const,
  approval: 'never' as const, // not a test of approvals
  idempotent: true,
};

describe('longCall.resultRetention at definition', () => {
  test('a declared retention is carried by the catalog entry in milliseconds', () => {
    const entry = defineTool({ ...base, longCall: { resultRetention: '30d' } }).catalogEntry;
    expect(entry.longCall?.resultRetentionMs).toBe(30 * DAY);
  });

  test.each([['soon'], [0], [-5], ['0s'], [Number.POSITIVE_INFINITY], [{}], ['3651d']])(
    'a retention of %p is refused with a ToolDefinitionError',
    (resultRetention) => {
      const longCall = { resultRetention } as unknown as ToolLongCallOptions;
      expect(() => defineTool({ ...base, longCall })).toThrow(
        expect.objectContaining({ name: 'ToolDefinitionError', message: expect.stringContaining('resultRetention') }),
      );
    },
  );
});

describe('a long call that declares resultRetention', () => {
  function setup(longCall: ToolLongCallOptions) {
    const clock = { now: Date.now() };
    const keys = new MemoryIdempotencyStore({ clock: () => clock.now });
    const payloads = new MemoryTranscriptStore({ clock: () => clock.now });
    let runs = 0;
    const tool = defineTool({ ...base, budget: { maxOutputBytes: 64 }, longCall }).implement(
      async ({ ledger }, ctx) => {
        runs += 1;
        await ctx.checkpoint({ next: 1 });
        return { rows: Array.from({ length: 20 }, (_, i) => `${ledger}-row-${i}`) };
      },
    );
    const activities = createToolActivities({
      registry: createToolRegistry([tool]),
      idempotencyStore: keys,
      payloadStore: payloads,
    });
    const call = () =>
      new MockActivityEnvironment({ attempt: 1, scheduledTimestampMs: Date.now() }).run(
        activities['export_ledger'] as ToolActivity,
        { arguments: { ledger: 'L-7' }, idempotencyKey: KEY, stepId: 1 },
      );
    return { clock, keys, payloads, call, runs: () => runs };
  }

  test('its stored result replays until the retention ends and is reaped after', async () => {
    const s = setup({ resultRetention: '30d' });
    await s.call();
    s.clock.now += 30 * DAY - 1;

    expect(await s.keys.reap()).toBe(0);
    expect(await s.call()).toMatchObject({ replayed: true });
    s.clock.now += 1;
    expect(await s.keys.reap()).toBe(1);
    expect(s.runs()).toBe(1);
  });

  test('without the declaration its result is reaped after the store retention of 24 h', async () => {
    const s = setup({});
    await s.call();
    s.clock.now += DAY;

    expect(await s.keys.reap()).toBe(1);
  });

  test('its claim-check output is kept the retention from completion and reaped after', async () => {
    const s = setup({ resultRetention: '30d' });
    const before = Date.now();
    await s.call();
    const after = Date.now();

    const output = await s.payloads.getPayload(outputHandle(KEY));
    expect(output?.expiresAt).toBeGreaterThanOrEqual(before + 30 * DAY);
    expect(output?.expiresAt).toBeLessThanOrEqual(after + 30 * DAY);
    s.clock.now = output!.expiresAt! - 1;
    expect(await s.payloads.getPayload(outputHandle(KEY))).toBeDefined();
    s.clock.now += 1;
    expect(await s.payloads.getPayload(outputHandle(KEY))).toBeUndefined();
    expect(await s.payloads.reapPayloads()).toBe(1);
  });

  test('its checkpoint is kept the deadline plus the retention from its save and reaped after', async () => {
    const s = setup({ resultRetention: '30d', deadline: '2h' });
    const before = Date.now();
    await s.call();
    const after = Date.now();

    const checkpoint = await s.payloads.getPayload(checkpointHandle(KEY));
    expect(checkpoint?.expiresAt).toBeGreaterThanOrEqual(before + 2 * 60 * 60 * 1000 + 30 * DAY);
    expect(checkpoint?.expiresAt).toBeLessThanOrEqual(after + 2 * 60 * 60 * 1000 + 30 * DAY);
    expect(await s.payloads.reapPayloads(checkpoint!.expiresAt! - 1)).toBe(1); // the output, earlier
    expect(await s.payloads.reapPayloads(checkpoint!.expiresAt!)).toBe(1);
    expect(await s.payloads.getPayload(checkpointHandle(KEY))).toBeUndefined();
  });
});
