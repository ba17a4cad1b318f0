/**
 * The plain Temporal service process of `npm run bench:peers`: a Temporal worker with the SDK's defaults
 * (`Worker.create` with nothing tuned) running `plainLedgerRun` (10 sequential local or regular activities,
 * each POSTing to the ledger under `<run id>/<step>`), and the client that starts the runs with eager start
 * (the client on the worker's `NativeConnection`). No idempotency store: a step interrupted by a crash runs again.
 */
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { plainTemporalActivities } from './temporal-activities';
import type { PlainActivityKind } from './temporal-workflows';
import { serveParent, serviceEnv } from './service-protocol';

/** Settings of this service (from the bench). */
export interface TemporalServiceConfig {
  address: string;
  namespace: string;
  taskQueue: string;
  /** The workflow bundle the bench built (bench/peers/temporal-workflows.ts). */
  bundlePath: string;
  kind: PlainActivityKind;
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger((process.env.PEERS_LOG_LEVEL as 'WARN' | undefined) ?? 'ERROR') });
  const { ledgerUrl, steps, config } = serviceEnv<TemporalServiceConfig>();
  const connection = await NativeConnection.connect({ address: config.address });
  const client = new Client({ connection, namespace: config.namespace });
  const worker = await Worker.create({
    connection,
    namespace: config.namespace,
    taskQueue: config.taskQueue,
    workflowBundle: { codePath: config.bundlePath },
    activities: plainTemporalActivities(ledgerUrl),
  });
  const running = worker.run();
  const check = (runId: string, done: number): void => {
    if (done !== steps) throw new Error(`run ${runId} returned ${done}`);
  };
  serveParent({
    async run(runId, started) {
      const handle = await client.workflow.start('plainLedgerRun', {
        taskQueue: config.taskQueue,
        workflowId: runId,
        args: [runId, steps, config.kind],
        requestEagerStart: true,
      });
      started();
      check(runId, (await handle.result()) as number);
    },
    async attach(runId) {
      check(runId, (await client.workflow.getHandle(runId).result()) as number);
    },
    async close() {
      worker.shutdown();
      await running;
      await connection.close();
    },
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
