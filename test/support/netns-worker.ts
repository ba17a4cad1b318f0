/**
 * The worker process of one worker host (a network namespace, test/support/netns-network.ts), run as
 * `ip netns exec <ns> node --import tsx test/support/netns-worker.ts` so that its pid is the worker's. The chaos tools
 * write to the downstream ledger; the idempotency keys and the transcripts live in PostgreSQL tables shared by every
 * host (the key store that the hosts race on for one key over the network). It runs until killed or SIGTERMed.
 *
 * Environment: see {@link NETNS_WORKER_ENV}. Prints {@link NETNS_WORKER_READY} on stdout once polling.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { PostgresIdempotencyStore } from '../../src/stores/idempotency/postgres-idempotency-store';
import { PostgresTranscriptStore } from '../../src/stores/transcripts/postgres-transcript-store';
import { CHAOS_WORKER_DEFAULTS, createChaosWorker, requiredEnv } from './chaos-worker';

/** Environment variables the netns worker reads. */
export const NETNS_WORKER_ENV = {
  address: 'DT_NETNS_TEMPORAL_ADDRESS',
  namespace: 'DT_NETNS_NAMESPACE',
  taskQueue: 'DT_NETNS_TASK_QUEUE',
  bundlePath: 'DT_NETNS_WORKFLOW_BUNDLE',
  ledgerUrl: 'DT_NETNS_LEDGER_URL',
  postgresUrl: 'DT_NETNS_POSTGRES_URL',
  keysTable: 'DT_NETNS_KEYS_TABLE',
  transcriptsTable: 'DT_NETNS_TRANSCRIPTS_TABLE',
  /** The host's number, for the logs. */
  host: 'DT_NETNS_HOST',
} as const;

/** The line the worker prints when it starts polling. */
export const NETNS_WORKER_READY = 'netns-worker ready';

const required = (name: string) => requiredEnv('netns-worker', name);

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const env = NETNS_WORKER_ENV;
  const connectionString = required(env.postgresUrl);
  const idempotencyStore = new PostgresIdempotencyStore({ connectionString, table: required(env.keysTable) });
  const transcripts = new PostgresTranscriptStore({ connectionString, table: required(env.transcriptsTable) });
  const worker = await createChaosWorker({
    who: 'netns-worker',
    env,
    idempotencyStore,
    transcripts,
    thinkMs: CHAOS_WORKER_DEFAULTS.thinkMs,
    leaseMs: CHAOS_WORKER_DEFAULTS.leaseMs,
  });
  const running = worker.run();
  console.log(`${NETNS_WORKER_READY} host=${process.env[env.host] ?? '?'} pid=${process.pid}`);
  await running;
  await idempotencyStore.close();
  await transcripts.close();
  process.exit(0);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error('netns-worker failed:', error);
    process.exit(1);
  });
}
