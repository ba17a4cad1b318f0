import type { Worker } from '@temporalio/worker';
import { join } from 'node:path';
import { SqliteIdempotencyStore } from '../../src/stores/idempotency/sqlite-idempotency-store';
import { SqliteTranscriptStore } from '../../src/stores/transcripts/sqlite-transcript-store';
import { createWorker, type CreateWorkerOptions } from '../../src/runtime/create-worker';
import { testServer, type TestTemporal } from './temporal-test-env';
import { SqliteAuditStore } from '../../src/stores/audit/sqlite-audit-store';
import { auditPathBeside } from './worker-process-main';

/** Where a worker's SQLite stores are: the files a killed worker process used, to take its calls over. */
export interface SqliteStorePaths {
  /** The idempotency keys. */
  keysPath: string;
  /** The transcripts (checkpoints, job records); none when not given. */
  transcriptsPath?: string;
}

/** The SQLite files of the workers of the test `name`, in `dir`: `${name}-keys.sqlite`, `${name}-transcripts.sqlite`. */
export function sqliteStoresIn(dir: string, name: string): Required<SqliteStorePaths> {
  return { keysPath: join(dir, `${name}-keys.sqlite`), transcriptsPath: join(dir, `${name}-transcripts.sqlite`) };
}

/** A worker of this process and what closes the stores it opened. */
export interface SqliteTestWorker {
  worker: Worker;
  /** Closes the worker's own resources and the SQLite stores (after its run ended). */
  close(): Promise<void>;
}

/**
 * Creates a worker in this process on the test dev server, its workflow bundle and `taskQueue`, with SQLite
 * stores at `paths` and the rest of `options` (tools, lease, MCP servers, ...).
 */
export async function createSqliteTestWorker(
  temporal: TestTemporal,
  taskQueue: string,
  paths: SqliteStorePaths,
  options: Omit<CreateWorkerOptions, 'connection' | 'settings' | 'workflowBundle' | 'idempotencyStore' | 'transcripts'>,
): Promise<SqliteTestWorker> {
  const idempotencyStore = new SqliteIdempotencyStore({ path: paths.keysPath });
  const transcripts = paths.transcriptsPath ? new SqliteTranscriptStore({ path: paths.transcriptsPath }) : undefined;
  // The approval decisions a killed worker process recorded (worker-process-main.ts), unless the test brings a store.
  const auditStore = options.auditStore ? undefined : new SqliteAuditStore({ path: auditPathBeside(paths.keysPath) });
  const { worker, close } = await createWorker({
    // Stores not given here stay in memory (durable ones are the default).
    stores: 'memory',
    ...(auditStore ? { auditStore } : {}),
    ...options,
    connection: temporal.nativeConnection,
    settings: { namespace: testServer().namespace, taskQueue },
    workflowBundle: { codePath: testServer().bundlePath },
    idempotencyStore,
    ...(transcripts ? { transcripts } : {}),
  });
  return {
    worker,
    close: async () => {
      await close();
      await idempotencyStore.close();
      await transcripts?.close();
      await auditStore?.close();
    },
  };
}
