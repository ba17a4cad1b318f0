/**
 * Fan-out caps (docs/limits.md, "Fan-out") on the real dev server: a hostile turn of 1,000 calls ends as an
 * observation the model reads, within the caps (32 calls run, at most `maxConcurrentCalls` in flight at once), no
 * workflow task completion near Temporal's payload limit, and the run goes on.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { z } from 'zod';
import { temporal as proto } from '@temporalio/proto';
import type { WorkflowHandle } from '@temporalio/client';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import type { ModelProvider, ModelRequest } from '../../src/contract/model-types';
import { PAYLOAD_LIMITS } from '../../src/contract/payload-limits';
import { defineTool } from '../../src/tools/define-tool';
import { hostileModel, type HostileTurn } from '../support/hostile-model';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';

const temporal = useTestTemporal();

/** A read-only probe that counts the calls in flight at once (each takes 50 ms or more). */
function probeTool(counts: { inFlight: number; maxInFlight: number; calls: number }) {
  return defineTool({
    name: 'probe',
    description: 'Probes a downstream.',
    input: z.object({ n: z.number() }),
    output: z.object({ n: z.number() }),
    effect: 'read-only',
  }).implement(async ({ n }) => {
    counts.calls += 1;
    counts.inFlight += 1;
    counts.maxInFlight = Math.max(counts.maxInFlight, counts.inFlight);
    await delay(50);
    counts.inFlight -= 1;
    return { n };
  });
}

/**
 * The bytes of what each workflow task completion of a run asked of the server: the events its commands
 * recorded (from one `WorkflowTaskCompleted` to the next workflow task), largest first, with the activities it
 * scheduled (`commands`).
 */
async function completionBytes(handle: WorkflowHandle): Promise<Array<{ bytes: number; commands: number }>> {
  const events = (await handle.fetchHistory()).events ?? [];
  const completions: Array<{ bytes: number; commands: number }> = [];
  let current: { bytes: number; commands: number } | undefined;
  for (const event of events) {
    if (event.workflowTaskCompletedEventAttributes) {
      current = { bytes: 0, commands: 0 };
      completions.push(current);
    } else if (event.workflowTaskScheduledEventAttributes || event.workflowTaskStartedEventAttributes) {
      current = undefined;
    } else if (current && (event.activityTaskScheduledEventAttributes || event.markerRecordedEventAttributes)) {
      current.bytes += proto.api.history.v1.HistoryEvent.encode(event).finish().length;
      if (event.activityTaskScheduledEventAttributes) current.commands += 1;
    }
  }
  return completions.sort((a, b) => b.bytes - a.bytes);
}

async function hostileRun(
  name: string,
  turns: HostileTurn[],
  limits?: { maxConcurrentCalls: number },
  fastPath?: false,
) {
  const counts = { inFlight: 0, maxInFlight: 0, calls: 0 };
  const asked: ModelRequest[] = [];
  const recording: ModelProvider = async (request, context) => {
    asked.push(request);
    return hostileModel(request, context);
  };
  const taskQueue = uniqueTaskQueue(name);
  const worker = await createTestWorker(temporal, {
    tools: [probeTool(counts)],
    taskQueue,
    modelProviders: { hostile: recording },
  });
  const started = Date.now();
  return worker.runUntil(async () => {
    const handle = await startAgentRun(
      temporal.client,
      {
        goal: name,
        model: { provider: 'hostile', turns },
        parallelToolCalls: true,
        ...(limits ? { limits } : {}),
        ...(fastPath === false ? { fastPath } : {}),
      },
      { taskQueue },
    );
    const result = await waitForAgentRun(handle);
    return { result, counts, asked, completions: await completionBytes(handle), ms: Date.now() - started };
  });
}

const THOUSAND_CALLS: HostileTurn[] = [
  { calls: [{ name: 'probe', args: { json: { n: 1 } }, repeat: 1_000 }] },
  { final: 'Probed what I could.' },
];

describe('fan-out caps', () => {
  test('a hostile turn of 1,000 calls ends as an observation within the caps, no completion near the payload limit, and the run goes on', async () => {
    const { result, counts, asked, completions, ms } = await hostileRun('fan-out-1000', THOUSAND_CALLS);
    expect(result.status).toBe('completed');
    expect(result.answer).toBe('Probed what I could.');
    expect(result.steps).toHaveLength(PAYLOAD_LIMITS.maxToolCallsPerTurn);
    expect(counts.calls).toBe(PAYLOAD_LIMITS.maxToolCallsPerTurn);
    expect(counts.maxInFlight).toBeLessThanOrEqual(8);
    const note = asked[1]?.transcript.find(
      (message) => message.role === 'user' && message.content.startsWith('(You asked for'),
    );
    expect(note).toEqual({
      role: 'user',
      content:
        '(You asked for 1,000 tool calls in one turn; at most 32 run per turn: the first 32 ran, the other 968 did ' +
        'not. Ask for the ones you still need in your next turns.)',
    });
    expect(completions[0]!.bytes).toBeLessThan(PAYLOAD_LIMITS.temporalPayloadWarnBytes);
    const widest = [...completions].sort((a, b) => b.commands - a.commands)[0]!;
    expect(widest.commands).toBeLessThanOrEqual(8);
    console.log(
      `fan-out (cap 8): 1,000 asked, 32 ran, max ${counts.maxInFlight} in flight; largest completion ` +
        `${completions[0]!.bytes} B (${completions[0]!.commands} commands), widest ${widest.bytes} B ` +
        `(${widest.commands} commands), ${completions.length} completions, ${ms} ms`,
    );
  });

  test('with maxConcurrentCalls: 32 one completion schedules all 32 calls of the turn', async () => {
    // Regular activities: the completion's commands are the calls' ScheduleActivityTask commands.
    const { result, counts, completions, ms } = await hostileRun(
      'fan-out-cap-32',
      THOUSAND_CALLS,
      { maxConcurrentCalls: 32 },
      false,
    );
    expect(result.status).toBe('completed');
    const widest = [...completions].sort((a, b) => b.commands - a.commands)[0]!;
    expect(widest.commands).toBe(32);
    console.log(
      `fan-out (cap 32): max ${counts.maxInFlight} in flight; widest completion ${widest.bytes} B ` +
        `(${widest.commands} commands), ${completions.length} completions, ${ms} ms`,
    );
  });

  test('maxConcurrentCalls sets how many calls of a turn are in flight at once', async () => {
    const turns: HostileTurn[] = [
      { calls: [{ name: 'probe', args: { json: { n: 2 } }, repeat: 12 }] },
      { final: 'ok' },
    ];
    const { result, counts } = await hostileRun('fan-out-cap-3', turns, { maxConcurrentCalls: 3 });
    expect(result.status).toBe('completed');
    expect(result.steps.map((step) => step.stepId)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(counts.calls).toBe(12);
    expect(counts.maxInFlight).toBeLessThanOrEqual(3);
  });
});
