import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { Pool } from 'pg';
import { z } from 'zod';
import { createToolActivities, type ToolActivity } from '../../src/activities/tool-activities';
import { fingerprint, PostgresIdempotencyStore, type BeginOutcome } from '../../src/stores/idempotency';
import { defineTool } from '../../src/tools/define-tool';
import { createToolRegistry } from '../../src/tools/tool-registry';

/**
 * Issue 8, "store time, not worker time": two workers whose clocks differ by minutes share one Postgres
 * store. Each worker's clock is Date.now(), skewed here by minutes; the store must decide leases by the
 * database's clock, so the skewed worker can neither take over a live key nor shorten its own lease.
 */

const POSTGRES_URL = process.env.DURABLE_TOOLS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SCHEMA = `idem_skew_${process.pid}_${Date.now().toString(36)}`;
const SKEW_MS = 10 * 60_000;
const LEASE_MS = 5_000;
const realNow = Date.now.bind(Date);
const stores: PostgresIdempotencyStore[] = [];
let tables = 0;

function openStore(table: string): PostgresIdempotencyStore {
  const store = new PostgresIdempotencyStore({ connectionString: POSTGRES_URL, schema: SCHEMA, table, poolSize: 2 });
  stores.push(store);
  return store;
}

/** Runs `work` as a worker whose wall clock is `skewMs` off. */
async function withWorkerClock<T>(skewMs: number, work: () => Promise<T>): Promise<T> {
  const spy = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + skewMs);
  try {
    return await work();
  } finally {
    spy.mockRestore();
  }
}

afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  const admin = new Pool({ connectionString: POSTGRES_URL, max: 1 });
  await admin.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await admin.end();
});

describe('Postgres leases under worker clock skew', () => {
  let workerA: PostgresIdempotencyStore;
  let workerB: PostgresIdempotencyStore;
  beforeEach(() => {
    const table = `skew_${++tables}`;
    workerA = openStore(table);
    workerB = openStore(table);
  });

  test('a worker whose clock runs minutes ahead cannot take over a live key', async () => {
    const claim = await withWorkerClock(0, () => workerA.begin('k', 'fp', { owner: 'worker-a', leaseMs: LEASE_MS }));
    expect(claim.state).toBe('started');

    const rival: BeginOutcome = await withWorkerClock(SKEW_MS, () =>
      workerB.begin('k', 'fp', { owner: 'worker-b', leaseMs: LEASE_MS }),
    );

    expect(rival).toMatchObject({ state: 'in_flight', owner: 'worker-a' });
    const { retryAfterMs } = rival as { retryAfterMs: number };
    expect(retryAfterMs).toBeGreaterThan(0);
    expect(retryAfterMs).toBeLessThanOrEqual(LEASE_MS);
  });

  test('a worker whose clock runs minutes behind gets a full lease, not one that already ran out', async () => {
    const claim = await withWorkerClock(-SKEW_MS, () =>
      workerA.begin('k', 'fp', { owner: 'worker-a', leaseMs: LEASE_MS }),
    );
    expect(claim.state).toBe('started');
    expect(
      await withWorkerClock(-SKEW_MS, () => workerA.heartbeat('k', (claim as { token: string }).token, LEASE_MS)),
    ).toBe(true);

    const rival = await withWorkerClock(0, () => workerB.begin('k', 'fp', { owner: 'worker-b', leaseMs: LEASE_MS }));

    expect(rival).toMatchObject({ state: 'in_flight', owner: 'worker-a' });
    expect((rival as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(LEASE_MS / 2);
  });

  test('gives every new owner a larger fencing token, whatever the owners’ clocks say', async () => {
    const first = await withWorkerClock(SKEW_MS, () => workerA.begin('f', 'fp', { owner: 'a', leaseMs: 50 }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const second = await withWorkerClock(-SKEW_MS, () => workerB.begin('f', 'fp', { owner: 'b', leaseMs: 50 }));
    expect(first.state).toBe('started');
    expect(second.state).toBe('outcome_unknown');
    const token = (o: BeginOutcome) => Number((o as { fencingToken: string }).fencingToken);
    expect(token(second)).toBeGreaterThan(token(first));
  });
});

describe('a tool call on a worker whose clock runs minutes ahead', () => {
  test('waits for the live holder on another worker instead of running the tool a second time', async () => {
    const table = `skew_${++tables}`;
    const holder = openStore(table);
    const skewed = openStore(table);
    let runs = 0;
    const charge = defineTool({
      name: 'charge',
      description: 'Charges an amount.',
      input: z.object({ amount: z.number() }),
      output: z.object({ chargeId: z.string() }),
      effect: 'irreversible',
      approval: 'never', // not a test of approvals
      idempotent: false,
    }).implement(async () => {
      runs += 1;
      return { chargeId: 'ch-1' };
    });
    const registry = createToolRegistry([charge]);
    const onSkewed = createToolActivities({ registry, idempotencyStore: skewed, leaseMs: LEASE_MS })
      .charge as ToolActivity;
    const input = { arguments: { amount: 5 }, idempotencyKey: 'run-skew/1', stepId: 1 };

    // The holder claims the key and is still working on it (its lease is live by the database's clock).
    const claim = await holder.begin('run-skew/1', fingerprint({ tool: 'charge', input: { amount: 5 } }), {
      owner: 'holder',
      leaseMs: LEASE_MS,
    });
    expect(claim.state).toBe('started');

    const error = await withWorkerClock(SKEW_MS, () =>
      new MockActivityEnvironment({ attempt: 2, scheduledTimestampMs: realNow() + SKEW_MS }).run(onSkewed, input).then(
        () => undefined,
        (e: unknown) => e,
      ),
    );

    expect(error).toBeInstanceOf(ApplicationFailure);
    expect((error as ApplicationFailure).type).toBe('CONFLICT');
    expect((error as ApplicationFailure).nonRetryable).toBe(false);
    expect(runs).toBe(0);
  });
});
