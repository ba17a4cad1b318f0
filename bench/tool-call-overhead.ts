/**
 * `npm run bench`: latency and throughput of a no-op tool through the full durable-tools wrapper vs a
 * bare Temporal activity doing nothing. Same server, same worker, same run, interleaved rounds.
 * Printed, never asserted.
 */
import { Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { createToolActivities } from '../src/activities/tool-activities';
import { defineTool } from '../src/tools/define-tool';
import { createToolRegistry } from '../src/tools/tool-registry';
import { benchTemporal } from './bench-temporal';
import type { OverheadMode } from './overhead-workflows';

const BENCH = {
  rounds: 10,
  sequentialCallsPerRound: 50,
  concurrentCallsPerRound: 100,
  concurrency: 20,
  warmupCalls: 30,
} as const;

const noop = defineTool({
  name: 'noop',
  description: 'Does nothing.',
  input: z.object({ n: z.number() }),
  output: z.object({ n: z.number() }),
  effect: 'read-only',
  idempotent: true,
}).implement(async ({ n }) => ({ n }));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function main(): Promise<void> {
  const temporal = await benchTemporal();
  const taskQueue = `bench-overhead-${randomUUID().slice(0, 8)}`;
  const worker = await Worker.create({
    connection: temporal.nativeConnection,
    namespace: temporal.namespace,
    taskQueue,
    workflowsPath: require.resolve('./overhead-workflows'),
    activities: {
      ...createToolActivities({ registry: createToolRegistry([noop]) }),
      bareNoop: async (i: unknown) => i,
    },
  });

  const runWorkflow = async (type: string, args: unknown[]): Promise<number> => {
    const started = process.hrtime.bigint();
    await temporal.client.workflow.execute(type, { taskQueue, workflowId: `${type}-${randomUUID()}`, args });
    return Number(process.hrtime.bigint() - started) / 1e6;
  };

  const latency: Record<OverheadMode, number[]> = { tool: [], bare: [] };
  const throughput: Record<OverheadMode, number[]> = { tool: [], bare: [] };
  const calls: Record<OverheadMode, number> = { tool: 0, bare: 0 };

  await worker.runUntil(async () => {
    for (const mode of ['bare', 'tool'] as const) await runWorkflow('sequentialCalls', [mode, BENCH.warmupCalls]);
    for (let round = 0; round < BENCH.rounds; round++) {
      // Alternate which mode goes first so drift on a noisy machine hits both alike.
      const order: OverheadMode[] = round % 2 === 0 ? ['bare', 'tool'] : ['tool', 'bare'];
      for (const mode of order) {
        const ms = await runWorkflow('sequentialCalls', [mode, BENCH.sequentialCallsPerRound]);
        latency[mode].push(ms / BENCH.sequentialCallsPerRound);
        calls[mode] += BENCH.sequentialCallsPerRound;
      }
      for (const mode of order) {
        const ms = await runWorkflow('concurrentCalls', [mode, BENCH.concurrentCallsPerRound, BENCH.concurrency]);
        throughput[mode].push((BENCH.concurrentCallsPerRound / ms) * 1000);
        calls[mode] += BENCH.concurrentCallsPerRound;
      }
      process.stderr.write(`round ${round + 1}/${BENCH.rounds} done\n`);
    }
  });
  await temporal.close();

  const lat = { tool: median(latency.tool), bare: median(latency.bare) };
  const thr = { tool: median(throughput.tool), bare: median(throughput.bare) };
  console.log(`calls: ${calls.tool} through the wrapper, ${calls.bare} bare (interleaved, ${BENCH.rounds} rounds)`);
  console.log(`                        bare activity   durable-tools tool`);
  console.log(
    `latency (ms/call, median of rounds, sequential)   ${lat.bare.toFixed(2).padStart(8)}   ${lat.tool.toFixed(2).padStart(8)}`,
  );
  console.log(
    `throughput (calls/s, median of rounds, ${BENCH.concurrency} in flight) ${thr.bare.toFixed(0).padStart(8)}   ${thr.tool.toFixed(0).padStart(8)}`,
  );
  console.log(
    `tool-call overhead: latency x${(lat.tool / lat.bare).toFixed(2)}, throughput x${(thr.tool / thr.bare).toFixed(2)}`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
