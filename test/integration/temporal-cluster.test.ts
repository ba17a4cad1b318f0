import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, makeTelemetryFilterString, NativeConnection, Runtime } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'pg';
import { z } from 'zod';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { createWorker } from '../../src/runtime/create-worker';
import { PostgresIdempotencyStore } from '../../src/stores/idempotency';
import { defineTool } from '../../src/tools/define-tool';
import { callTurn, scriptedRun } from '../support/agent-runs';
import { startLedgerServer, type LedgerServer } from '../support/ledger-server';
import {
  findCachedTemporalServer,
  findGo,
  resolveTemporalServer,
  startTemporalCluster,
  type TemporalCluster,
} from '../support/temporal-cluster';
import { testServer, uniqueTaskQueue } from '../support/temporal-test-env';

/**
 * Issue 49: the engine on a real Temporal cluster — the server's frontend, history, matching and worker services,
 * each its own process, on PostgreSQL — with the Postgres key store. The history service is restarted while a tool
 * call is in flight; the run finishes, and the ledger (which does not deduplicate) saw one effect per step.
 */

const POSTGRES_URL = process.env.DURABLE_TOOLS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** Its own databases: a cluster started by hand (`npm run cluster`, database temporal_cluster) may be running. */
const DATABASE = 'temporal_cluster_test';
/** Building the server when CI's `npm run install-cluster` did not (minutes on 2 busy cores). */
const BUILD_TIMEOUT_MS = 40 * 60_000;

const serverAvailable = findGo() !== undefined || findCachedTemporalServer() !== undefined;
const describeWithServer = serverAvailable ? describe : describe.skip;
if (!serverAvailable) {
  console.warn('temporal-cluster.test.ts skipped: no Go toolchain to build the Temporal server, and no cached build.');
}

describeWithServer('an agent run on a Temporal cluster on PostgreSQL', () => {
  let cluster: TemporalCluster;
  let ledger: LedgerServer;
  let connection: Connection;
  let nativeConnection: NativeConnection;
  let store: PostgresIdempotencyStore;
  const schema = `cluster_keys_${randomUUID().replace(/-/g, '').slice(0, 12)}`;

  beforeAll(async () => {
    await resolveTemporalServer({ log: () => {} });
    cluster = await startTemporalCluster({ database: DATABASE, log: () => {} });
    ledger = await startLedgerServer();
    const logFile = join(process.env.DT_TEST_DIR ?? cluster.dataDir, 'cluster-worker.log');
    // The worker's logs, core's included (heartbeats refused while history is down), go to a file.
    Runtime.install({
      logger: new DefaultLogger('WARN', (entry) => appendFileSync(logFile, `${entry.level} ${entry.message}\n`)),
      telemetryOptions: { logging: { forward: {}, filter: makeTelemetryFilterString({ core: 'WARN' }) } },
    });
    connection = await Connection.connect({ address: cluster.address });
    nativeConnection = await NativeConnection.connect({ address: cluster.address });
    store = new PostgresIdempotencyStore({ connectionString: POSTGRES_URL, schema });
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await connection?.close();
    await nativeConnection?.close();
    await store?.close();
    const pool = new Pool({ connectionString: POSTGRES_URL });
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await pool.end();
    await ledger?.close();
    await cluster?.stop();
  });

  test('refuses a second cluster on the same database while the first runs (they would join one ring)', async () => {
    await expect(startTemporalCluster({ database: DATABASE, log: () => {} })).rejects.toMatchObject({
      name: 'TemporalClusterError',
      message: expect.stringContaining(`A Temporal cluster is running on database ${DATABASE}`),
    });
  });

  test('finishes with one effect per step when the history service restarts during a tool call', async () => {
    const restarts: string[] = [];
    const book = defineTool({
      name: 'book_room',
      description: 'Books a room.',
      input: z.object({ city: z.string() }),
      output: z.object({ effectId: z.string() }),
      effect: 'irreversible',
      idempotent: false,
      approval: 'never',
    }).implement(async (_input, ctx) => {
      // Step 2's first attempt: the history service goes down and comes back while the call is in flight.
      if (ctx.idempotencyKey.endsWith('/2') && restarts.length === 0) {
        restarts.push(ctx.idempotencyKey);
        await cluster.restartService('history');
      }
      const response = await fetch(`${ledger.url}/effects`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key: ctx.idempotencyKey, kind: 'book', amount: 1 }),
      });
      return { effectId: ((await response.json()) as { effectId: string }).effectId };
    });
    const taskQueue = uniqueTaskQueue('cluster');
    const { worker } = await createWorker({
      stores: 'memory',
      warn: () => {},
      tools: [book],
      idempotencyStore: store,
      connection: nativeConnection,
      settings: { namespace: cluster.namespace, taskQueue },
      workflowBundle: { codePath: testServer().bundlePath },
    });
    const client = new Client({ connection, namespace: cluster.namespace });
    const pidBefore = cluster.pids().history;

    const { result, runKey } = await worker.runUntil(async () => {
      const handle = await startAgentRun(
        client,
        scriptedRun(
          'book three rooms',
          [
            callTurn('book_room', { city: 'Lisbon' }),
            callTurn('book_room', { city: 'Porto' }),
            callTurn('book_room', { city: 'Faro' }),
            { text: 'Booked.', final: true },
          ],
          { fastPath: false },
        ),
        { taskQueue },
      );
      return { result: await waitForAgentRun(handle), runKey: `${handle.workflowId}/${handle.firstExecutionRunId}` };
    });

    expect(restarts).toEqual([`${runKey}/2`]);
    expect(cluster.pids().history).not.toBe(pidBefore);
    expect(result).toMatchObject({ status: 'completed', answer: 'Booked.' });
    expect(result.steps.map((step) => [step.stepId, step.status])).toEqual([
      [1, 'succeeded'],
      [2, 'succeeded'],
      [3, 'succeeded'],
    ]);
    expect(ledger.effects.map((effect) => effect.key)).toEqual([`${runKey}/1`, `${runKey}/2`, `${runKey}/3`]);
  });
});
