/**
 * Issue 15 part 5 on the real dev server: a tool argument marked `.meta({ sensitive: true })` stays out of the
 * activity summary, the failure message stored in the history, the run's recorded steps and the observation
 * the model reads back, while the tool itself receives it whole (the tool's log: sensitive-arguments unit test).
 */
import { z } from 'zod';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import type { ModelProvider, ModelRequest } from '../../src/contract/model-types';
import { defineTool } from '../../src/tools/define-tool';
import { PermanentToolError } from '../../src/failures/tool-errors';
import { useTestTemporal, createTestWorker, uniqueTaskQueue } from '../support/temporal-test-env';

const CARD = '4000056655665556';
const received: string[] = [];

const charge = defineTool({
  name: 'charge_card',
  description: 'Charges a card.',
  input: z.object({ amountEur: z.number(), card: z.string().meta({ sensitive: true }) }),
  output: z.object({ ok: z.boolean() }),
  effect: 'read-only',
  idempotent: true,
  retry: { maximumAttempts: 1 },
}).implement(async (input) => {
  received.push(input.card);
  throw new PermanentToolError(`The card ${input.card} was declined.`, { code: 'PERMISSION_DENIED' });
});

/** A model that charges once, then reads what came back and finishes; it records what it was sent. */
const requests: ModelRequest[] = [];
const model: ModelProvider = async (request) => {
  requests.push(request);
  return request.turn === 0
    ? { toolCalls: [{ id: 'c1', name: 'charge_card', arguments: { amountEur: 5, card: CARD } }], done: false }
    : { text: 'The card was declined.', toolCalls: [], done: true };
};

const temporal = useTestTemporal();

test('a sensitive argument reaches the tool but no summary, failure message, step record or observation', async () => {
  const taskQueue = uniqueTaskQueue('sensitive');
  const worker = await createTestWorker(temporal, {
    tools: [charge],
    taskQueue,
    modelProviders: { recording: model },
  });
  const { result, history } = await worker.runUntil(async () => {
    // Regular activities: the summary and the failure are the activity's (on the fast path, the default, the call
    // runs inside the turn's fused step, and its failure makes the workflow run it again as its own local activity).
    const handle = await startAgentRun(
      temporal.client,
      { goal: 'pay', model: { provider: 'recording' }, fastPath: false },
      { taskQueue },
    );
    const result = await waitForAgentRun(handle);
    return { result, history: await handle.fetchHistory() };
  });
  expect(received).toEqual([CARD]);
  expect(result.steps[0]).toMatchObject({
    tool: 'charge_card',
    status: 'failed',
    arguments: { amountEur: 5, card: '[redacted]' },
    observation: { code: 'PERMISSION_DENIED', message: 'The card [redacted] was declined.' },
  });
  // What the model read back on its second turn.
  expect(JSON.stringify(requests[1]?.transcript)).toContain('The card [redacted] was declined.');
  expect(JSON.stringify(requests[1]?.transcript.filter((m) => m.role === 'tool'))).not.toContain(CARD);
  // The history: the activity's summary and its failure (message in clear on the server, details).
  const scheduled = history.events?.find(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'charge_card',
  );
  expect(JSON.parse(Buffer.from(scheduled?.userMetadata?.summary?.data ?? []).toString())).toBe(
    'charge_card {"amountEur":5,"card":"[redacted]"}',
  );
  const failed = history.events?.find((e) => e.activityTaskFailedEventAttributes);
  expect(failed?.activityTaskFailedEventAttributes?.failure?.message).toBe('The card [redacted] was declined.');
  const stored = JSON.stringify(history.events?.filter((e) => !e.activityTaskScheduledEventAttributes));
  expect(stored).not.toContain(CARD);
});
