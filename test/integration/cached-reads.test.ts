/**
 * Cached reads (docs/tools.md, "Cached reads") on the real dev server: a read-only tool declaring
 * `cache: { ttl, key? }` answers the same read from the idempotency store it shares with other workers, and the
 * step record (and `show`) says the answer was cached.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { SqliteIdempotencyStore } from '../../src/stores/idempotency/sqlite-idempotency-store';
import { defineTool } from '../../src/tools/define-tool';
import type { AgentRunInput, AgentRunState } from '../../src/contract/agent-run-types';
import { stepsTable } from '../../src/cli/run-view';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';

const temporal = useTestTemporal();

/** A weather service that counts the requests it gets. */
function weatherTool(requests: string[]) {
  return defineTool({
    name: 'get_weather',
    description: 'The weather in a city.',
    input: z.object({ city: z.string(), units: z.enum(['C', 'F']).default('C') }),
    output: z.object({ city: z.string(), sky: z.string() }),
    effect: 'read-only',
    cache: { ttl: '10m', key: ({ city }) => city.toLowerCase() },
  }).implement(async ({ city }) => {
    requests.push(city);
    return { city, sky: 'clear' };
  });
}

function weatherRun(city: string): AgentRunInput {
  return {
    goal: `Weather in ${city}`,
    model: {
      provider: 'scripted',
      script: [{ toolCalls: [{ name: 'get_weather', arguments: { city } }] }],
      finalText: 'Clear skies.',
    },
  };
}

describe('cached reads', () => {
  test('two runs on two workers sharing the store ask the same cached read: the downstream sees one request', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dt-cache-'));
    const requests: string[] = [];
    const taskQueue = uniqueTaskQueue('cached-reads');
    const runOn = async (city: string): Promise<AgentRunState> => {
      // Each run on a worker of its own, each with its own connection to the one SQLite file.
      const idempotencyStore = new SqliteIdempotencyStore({ path: join(dir, 'keys.sqlite') });
      const worker = await createTestWorker(temporal, { tools: [weatherTool(requests)], taskQueue, idempotencyStore });
      try {
        return await worker.runUntil(async () =>
          waitForAgentRun(await startAgentRun(temporal.client, weatherRun(city), { taskQueue })),
        );
      } finally {
        await idempotencyStore.close();
      }
    };
    const first = await runOn('Lisbon');
    const second = await runOn('LISBON');
    expect([first.status, second.status]).toEqual(['completed', 'completed']);
    expect(requests).toEqual(['Lisbon']);
    expect(first.steps[0]?.observation).toEqual({ status: 'ok', output: { city: 'Lisbon', sky: 'clear' } });
    expect(second.steps[0]?.observation).toEqual({
      status: 'ok',
      output: { city: 'Lisbon', sky: 'clear' },
      cached: true,
    });
    expect(stepsTable(second.steps)).toContain('ok (cached)');
  });

  test('another key is another read: the downstream is asked again', async () => {
    const requests: string[] = [];
    const taskQueue = uniqueTaskQueue('cached-reads-other');
    const worker = await createTestWorker(temporal, { tools: [weatherTool(requests)], taskQueue });
    const results = await worker.runUntil(async () => [
      await waitForAgentRun(await startAgentRun(temporal.client, weatherRun('Porto'), { taskQueue })),
      await waitForAgentRun(await startAgentRun(temporal.client, weatherRun('Berlin'), { taskQueue })),
    ]);
    expect(results.map((result) => result.steps[0]?.observation)).toEqual([
      { status: 'ok', output: { city: 'Porto', sky: 'clear' } },
      { status: 'ok', output: { city: 'Berlin', sky: 'clear' } },
    ]);
    expect(requests).toEqual(['Porto', 'Berlin']);
  });
});
