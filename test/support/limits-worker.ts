import { SqliteToolLimitStore } from '../../src/stores/limits/sqlite-tool-limit-store';
import { limitedCallTool } from './limit-tools';
import { runWorkerProcess, workerProcessEnv } from './worker-process-main';

/** The variables of {@link LIMITS_WORKER}: the test server's, plus the downstream, the limit store and the limits. */
export const LIMITS_WORKER_ENV = workerProcessEnv('LIMITS_WORKER', {
  url: 'URL',
  limitsDb: 'LIMITS_DB',
  concurrency: 'CONCURRENCY',
  perSecond: 'PER_SECOND',
  slotLeaseMs: 'SLOT_LEASE_MS',
  label: 'LABEL',
});

/**
 * A worker process running `limited_call` against the limits downstream, its slots in a SQLite file other workers
 * share: the worker a test kills while it holds a slot, and each of the bench's workers (bench/limits.ts).
 */
export const LIMITS_WORKER = { script: __filename, env: LIMITS_WORKER_ENV, ready: 'limits-worker ready' } as const;

if (require.main === module) {
  runWorkerProcess('limits-worker', LIMITS_WORKER_ENV, (required) => {
    const concurrency = process.env[LIMITS_WORKER_ENV.concurrency];
    const perSecond = process.env[LIMITS_WORKER_ENV.perSecond];
    const slotLeaseMs = process.env[LIMITS_WORKER_ENV.slotLeaseMs];
    const label = process.env[LIMITS_WORKER_ENV.label];
    return {
      tools: [
        limitedCallTool(required(LIMITS_WORKER_ENV.url), {
          ...(concurrency ? { concurrency: Number(concurrency) } : {}),
          ...(perSecond ? { perSecond: Number(perSecond) } : {}),
          ...(label ? { label } : {}),
        }),
      ],
      limitStore: new SqliteToolLimitStore({ path: required(LIMITS_WORKER_ENV.limitsDb) }),
      ...(slotLeaseMs ? { slotLeaseMs: Number(slotLeaseMs) } : {}),
    };
  });
}
