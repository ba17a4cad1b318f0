/**
 * One worker start of `npm run bench:startup`: `createWorker` with the benchmark's tools (bundle cache on or
 * off by STARTUP_BUNDLE_CACHE), then prints `startup-ms <ms since this process started>` and exits.
 */
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { createWorker } from '../src/runtime/create-worker';
import { AGENT_BENCH_TOOLS } from './agent-bench-tools';

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const connection = await NativeConnection.connect({ address: process.env.STARTUP_TEMPORAL_ADDRESS! });
  const cacheDir = process.env.STARTUP_BUNDLE_CACHE;
  const { worker } = await createWorker({
    // Stores not given here stay in memory (durable ones are the default).
    stores: 'memory',
    tools: AGENT_BENCH_TOOLS,
    connection,
    settings: { namespace: 'default', taskQueue: 'bench-startup' },
    workflowBundleCache: cacheDir ? { dir: cacheDir } : false,
  });
  console.log(`startup-ms ${Math.round(performance.now())}`);
  await worker.runUntil(Promise.resolve());
  await connection.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
