/**
 * `npx tsx bench/turn-record-cost.ts`: what recording one model turn of the fast path costs the worker, on the
 * SQLite (synchronous FULL) and Postgres key stores, in one commit (`lookup` + `insertIfAbsent`, the built-in
 * stores) vs a claim and a completion (`begin` + `complete`, the path of a store without `insertIfAbsent`).
 * `callModelOnce` with a model that answers at once, `BENCH_TURNS` new turns per slice, the two paths in
 * alternating slices of `BENCH_ROUNDS` rounds; prints ms and CPU per turn (medians of the rounds and the
 * median of per-round ratios). Printed, never asserted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { createRecordedModelActivities } from '../src/activities/recorded-model-turn';
import type { ModelTurn } from '../src/contract/model-types';
import type { IdempotencyStore } from '../src/stores/idempotency/idempotency-store';
import { PostgresIdempotencyStore } from '../src/stores/idempotency/postgres-idempotency-store';
import { SqliteIdempotencyStore } from '../src/stores/idempotency/sqlite-idempotency-store';
import { LoadSampler, machineLine, median } from './bench-report';

const BENCH = {
  turns: Number(process.env.BENCH_TURNS ?? 200),
  rounds: Number(process.env.BENCH_ROUNDS ?? 5),
} as const;

const TURN: ModelTurn = { text: 'Paying the invoice.', toolCalls: [], done: false };

/** The same store without `lookup` / `insertIfAbsent`: turns go through `begin` + `complete`. */
function claimOnly(store: IdempotencyStore): IdempotencyStore {
  return {
    begin: (...args) => store.begin(...args),
    heartbeat: (...args) => store.heartbeat(...args),
    complete: (...args) => store.complete(...args),
    fail: (...args) => store.fail(...args),
    release: (...args) => store.release(...args),
    reap: (...args) => store.reap(...args),
    close: () => store.close(),
  };
}

/** ms and CPU ms per turn of `turns` new turns recorded one after the other. */
async function slice(store: IdempotencyStore): Promise<{ ms: number; cpu: number }> {
  const { callModelOnce } = createRecordedModelActivities({ callModel: async () => TURN, store });
  const run = randomUUID();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let n = 0; n < BENCH.turns; n++) {
    await callModelOnce({
      runKey: run,
      goal: 'Pay.',
      settings: { provider: 'scripted' },
      turn: n,
      fromIndex: 0,
      messages: [],
      turnKey: `${run}/exec/turn/${n}`,
    });
  }
  const ms = (performance.now() - t0) / BENCH.turns;
  const cpu = process.cpuUsage(cpu0);
  return { ms, cpu: (cpu.user + cpu.system) / 1000 / BENCH.turns };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'durable-tools-bench-turns-'));
  const table = `bench_turns_${process.pid}`;
  const pool = new Pool({
    connectionString: process.env.DURABLE_TOOLS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    max: 2,
  });
  const stores = {
    sqlite: new SqliteIdempotencyStore({ path: join(dir, 'keys.sqlite') }),
    postgres: new PostgresIdempotencyStore({ pool, table }),
  };
  const load = new LoadSampler();
  try {
    for (const [name, store] of Object.entries(stores)) {
      const paths = { 'one commit': store, 'claim + complete': claimOnly(store) };
      await slice(store); // warm-up: the table, the statements, the JIT
      const results: Record<string, { ms: number; cpu: number }[]> = { 'one commit': [], 'claim + complete': [] };
      for (let round = 0; round < BENCH.rounds; round++) {
        const order = Object.entries(paths);
        if (round % 2 === 1) order.reverse();
        for (const [path, pathStore] of order) results[path]!.push(await slice(pathStore));
      }
      const one = results['one commit']!;
      const two = results['claim + complete']!;
      const line = (label: string, values: { ms: number; cpu: number }[]) =>
        `  ${label.padEnd(17)} ${median(values.map((v) => v.ms)).toFixed(2)} ms, ${median(values.map((v) => v.cpu)).toFixed(3)} ms CPU per turn`;
      console.log(`${name}:`);
      console.log(line('one commit', one));
      console.log(line('claim + complete', two));
      const msRatio = median(one.map((v, i) => v.ms / two[i]!.ms));
      const cpuRatio = median(one.map((v, i) => v.cpu / two[i]!.cpu));
      console.log(`  one commit x${msRatio.toFixed(2)} of claim + complete in time, x${cpuRatio.toFixed(2)} in CPU`);
    }
  } finally {
    await stores.sqlite.close();
    await stores.postgres.close();
    await pool.query(`DROP TABLE IF EXISTS "${table}"`);
    await pool.end();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `machine: ${machineLine()}; load average ${load.range()}; ${BENCH.rounds} rounds of ${BENCH.turns} turns`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
