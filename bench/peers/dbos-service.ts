/**
 * The DBOS service process of `npm run bench:peers`: a DBOS workflow of `steps` `DBOS.runStep` calls, each
 * POSTing to the ledger under `<run id>/<step>`, on the bench's own Postgres database; runs start in this
 * process with the run id as workflow id. A process launched after a kill recovers the pending workflows of
 * its executor (DBOS's own recovery at `DBOS.launch()`), and `attach` waits for them.
 */
import { DBOS } from '@dbos-inc/dbos-sdk';
import { postEffect } from './peer-ledger';
import { serveParent, serviceEnv } from './service-protocol';

/** Settings of this service (from the bench). */
export interface DbosServiceConfig {
  systemDatabaseUrl: string;
  /** `systemDatabasePoolSize` (DBOS's default when absent). */
  poolSize?: number;
}

async function main(): Promise<void> {
  const { ledgerUrl, steps, config } = serviceEnv<DbosServiceConfig>();
  const runSteps = async (runId: string): Promise<number> => {
    for (let step = 1; step <= steps; step++) {
      await DBOS.runStep(() => postEffect(ledgerUrl, `${runId}/${step}`), { name: `step-${step}` });
    }
    return steps;
  };
  const workflow = DBOS.registerWorkflow(runSteps, { name: 'peerBenchRun' });
  DBOS.setConfig({
    name: 'peer-bench',
    systemDatabaseUrl: config.systemDatabaseUrl,
    ...(config.poolSize ? { systemDatabasePoolSize: config.poolSize } : {}),
    logLevel: 'error',
  });
  await DBOS.launch();
  const check = (runId: string, done: number): void => {
    if (done !== steps) throw new Error(`run ${runId} returned ${done}`);
  };
  serveParent({
    async run(runId, started) {
      const handle = await DBOS.startWorkflow(workflow, { workflowID: runId })(runId);
      started();
      check(runId, await handle.getResult());
    },
    async attach(runId) {
      check(runId, (await DBOS.retrieveWorkflow<number>(runId).getResult())!);
    },
    close: () => DBOS.shutdown(),
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
