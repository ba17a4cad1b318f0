import { z } from 'zod';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { defineTool } from '../../src/tools/define-tool';
import { useTestTemporal, createTestWorker, uniqueTaskQueue } from '../support/temporal-test-env';

const temporal = useTestTemporal();

function lookUpTool(failures: { left: number }) {
  return defineTool({
    name: 'look_up_stock',
    description: 'Units in stock for a SKU. Read-only.',
    input: z.object({ sku: z.string() }),
    output: z.object({ sku: z.string(), units: z.number() }),
    effect: 'read-only',
    idempotent: true,
    execution: 'local',
    retry: { maximumAttempts: 3, initialDelay: 10, maxDelay: 20 },
  }).implement(async ({ sku }) => {
    if (failures.left > 0) {
      failures.left -= 1;
      throw Object.assign(new Error('stock service busy'), { status: 503 });
    }
    return { sku, units: 7 };
  });
}

async function runLookUp(name: string, failures: { left: number }) {
  const taskQueue = uniqueTaskQueue(name);
  const worker = await createTestWorker(temporal, { tools: [lookUpTool(failures)], taskQueue });
  return worker.runUntil(async () => {
    const handle = await startAgentRun(
      temporal.client,
      {
        goal: name,
        model: {
          provider: 'scripted',
          script: [
            { toolCalls: [{ name: 'look_up_stock', arguments: { sku: 'SKU-9' } }] },
            { text: 'In stock.', final: true },
          ],
        },
      },
      { taskQueue },
    );
    const result = await waitForAgentRun(handle);
    const history = await handle.fetchHistory();
    return { result, events: history.events ?? [] };
  });
}

describe('a read-only tool declared execution: local', () => {
  test('runs as a local activity: a marker in the history, no activity task for the tool', async () => {
    const { result, events } = await runLookUp('local-tool', { left: 0 });
    expect(result.status).toBe('completed');
    expect(result.steps[0]?.observation).toEqual({ status: 'ok', output: { sku: 'SKU-9', units: 7 } });
    const scheduled = events
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter((n): n is string => typeof n === 'string');
    expect(scheduled).not.toContain('look_up_stock');
    expect(events.some((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')).toBe(true);
  });

  test('is retried after a transient failure and reports the attempt that succeeded', async () => {
    // On the fast path (the default) the first attempt runs inside the turn's fused step; the call's own local
    // activity goes on from its failure (docs/fast-path.md, "Attempts").
    const { result } = await runLookUp('local-tool-retry', { left: 2 });
    expect(result.status).toBe('completed');
    expect(result.steps[0]?.status).toBe('succeeded');
    expect(result.steps[0]?.attempts).toBe(3);
  });
});
