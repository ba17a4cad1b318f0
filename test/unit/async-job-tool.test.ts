import { z } from 'zod';
import { defineAsyncJobTool } from '../../src/tools/define-async-job-tool';
import { defineTool } from '../../src/tools/define-tool';
import { callbackTokenOf, newJobRecord, parseCallbackToken, secretMatches } from '../../src/long-calls/job-record';
import { FETCH_TOOL_RESULT_TOOL, parseFetchArguments, withFetchToolResult } from '../../src/contract/fetch-tool-result';

const base = {
  name: 'render',
  description: 'Renders a scene on a remote farm.',
  input: z.object({ scene: z.string() }),
  output: z.object({ url: z.string() }),
  effect: 'irreversible' as const,
  approval: 'never' as const,
  idempotent: true,
};
const submit = async () => ({ jobId: 'j1' });

test('an async-job tool carries its settings and a long-call deadline in its catalog entry', () => {
  const contract = defineAsyncJobTool({
    ...base,
    asyncJob: { completion: 'poll', deadline: '10 m', pollInterval: '2 s', fetchLater: true },
  });
  expect(contract.catalogEntry.asyncJob).toEqual({
    completion: 'poll',
    deadlineMs: 600_000,
    pollIntervalMs: 2_000,
    maxPollIntervalMs: 30_000,
    fetchLater: true,
  });
  // Temporal's timeouts of a polled call come a minute after its deadline: the worker's own check ends it first.
  expect(contract.catalogEntry.longCall?.deadlineMs).toBe(660_000);
  expect(contract.catalogEntry.timeoutMs).toBe(660_000);
});

test("a callback call's Temporal deadline is its own deadline; a short polled one gets a grace as long as itself", () => {
  const callback = defineAsyncJobTool({ ...base, asyncJob: { completion: 'callback', deadline: '10 m' } });
  expect(callback.catalogEntry.longCall?.deadlineMs).toBe(600_000);
  const polled = defineAsyncJobTool({
    ...base,
    heartbeatTimeout: '2 s',
    asyncJob: { completion: 'poll', deadline: '3 s', pollInterval: '100 ms', maxPollInterval: '500 ms' },
  });
  expect(polled.catalogEntry.longCall?.deadlineMs).toBe(6_000);
});

test('an async-job declaration with a bad completion, an unknown option or inverted intervals is refused', () => {
  expect(() => defineAsyncJobTool({ ...base, asyncJob: { completion: 'later' as 'poll' } })).toThrow(
    /completion must be "callback" or "poll"/,
  );
  expect(() => defineAsyncJobTool({ ...base, asyncJob: { completion: 'poll', every: 1 } as never })).toThrow(
    /unknown asyncJob option "every"/,
  );
  expect(() =>
    defineAsyncJobTool({ ...base, asyncJob: { completion: 'poll', pollInterval: '5 s', maxPollInterval: '1 s' } }),
  ).toThrow(/pollInterval <= maxPollInterval/);
  expect(() => defineAsyncJobTool({ ...base, asyncJob: { completion: 'callback', pollInterval: '1 s' } })).toThrow(
    /completion "poll" only/,
  );
});

test('a polling tool without a poll function, or any without submit, cannot be implemented', () => {
  expect(() => defineAsyncJobTool({ ...base, asyncJob: { completion: 'poll' } }).implement({ submit })).toThrow(
    /needs a poll function/,
  );
  expect(() => defineAsyncJobTool({ ...base, asyncJob: { completion: 'callback' } }).implement({} as never)).toThrow(
    /needs a submit function/,
  );
});

test('a callback token names its call and is accepted only with the call secret', () => {
  const record = newJobRecord('render', 'run-1/3', 'run-1', 60_000);
  const token = callbackTokenOf(record);
  const parsed = parseCallbackToken(token);
  expect(parsed).toEqual({ idempotencyKey: 'run-1/3', secret: record.secret });
  expect(secretMatches(record, parsed!.secret)).toBe(true);
  expect(secretMatches(record, 'A'.repeat(32))).toBe(false);
  for (const bad of ['', 'abc', `${token}x`, 'a.b', 42, null, `${'a'.repeat(5000)}.${record.secret}`]) {
    expect(parseCallbackToken(bad)).toBeUndefined();
  }
});

test('fetch_tool_result is offered only when a visible tool allows fetch-later', () => {
  const later = defineAsyncJobTool({ ...base, asyncJob: { completion: 'callback', fetchLater: true } }).catalogEntry;
  const now = defineAsyncJobTool({ ...base, name: 'render_now', asyncJob: { completion: 'callback' } }).catalogEntry;
  const plain = defineTool({ ...base, name: 'plain' }).catalogEntry;
  expect(withFetchToolResult([now, plain], [now, plain]).map((e) => e.name)).toEqual(['render_now', 'plain']);
  expect(withFetchToolResult([later, plain], [later, plain]).map((e) => e.name)).toEqual([
    'render',
    'plain',
    FETCH_TOOL_RESULT_TOOL,
  ]);
});

test('fetch_tool_result arguments are checked: a handle, and a bounded wait', () => {
  expect(parseFetchArguments({ handle: 'bg_1' })).toEqual({ ok: true, handle: 'bg_1', waitMs: 0 });
  expect(parseFetchArguments('{"handle":"bg_2","waitSeconds":1.5}')).toEqual({
    ok: true,
    handle: 'bg_2',
    waitMs: 1_500,
  });
  expect(parseFetchArguments({ handle: 'bg_1', waitSeconds: 10_000 })).toMatchObject({ ok: false });
  expect(parseFetchArguments({ handle: '' })).toMatchObject({ ok: false });
  expect(parseFetchArguments({ handle: 'bg_1', extra: 1 })).toMatchObject({
    ok: false,
    message: 'Unknown field "extra".',
  });
  expect(parseFetchArguments('not json')).toMatchObject({ ok: false });
});
