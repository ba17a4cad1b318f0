/**
 * `npm run bench:streams`: the measurement behind the choice of stream store (docs/streaming.md). For the SQLite
 * file, Postgres (table + LISTEN/NOTIFY) and the in-process bus (memory), it prints:
 * - appends/s of one text delta per append (what a provider emitting tokens one by one costs the worker), and
 *   events/s in batches of 20 (what the publisher does while an append is in flight);
 * - the delivery latency of events from a writer in another process to a waiting reader (p50, p95, max) at
 *   one event every 10 ms: SQLite by polling its head (`pollMs` 20), Postgres by NOTIFY. The memory bus cannot
 *   cross processes: its latency is measured in one process, for reference.
 * Printed, never asserted.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { MemoryStreamStore } from '../src/stores/streams/memory-stream-store';
import { PostgresStreamStore } from '../src/stores/streams/postgres-stream-store';
import { SqliteStreamStore } from '../src/stores/streams/sqlite-stream-store';
import type { StreamStore } from '../src/stores/streams/stream-store';
import type { AgentStreamEventData } from '../src/stores/streams/stream-events';
import { machineLine } from './bench-report';

const POSTGRES_URL = process.env.DURABLE_TOOLS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const BENCH = { singleAppends: 2000, batches: 200, batchSize: 20, deliveries: 300, intervalMs: 10 } as const;
const segment = { workflowId: 'bench', runId: 'r', turn: 0, attempt: 1 };
const delta = (text: string): AgentStreamEventData => ({ type: 'text-delta', segment, delta: text });

type Kind = 'sqlite' | 'postgres' | 'memory';

function openStore(kind: Kind, where: string): StreamStore {
  if (kind === 'sqlite') return new SqliteStreamStore({ path: where });
  if (kind === 'postgres') return new PostgresStreamStore({ connectionString: POSTGRES_URL, table: where });
  return new MemoryStreamStore();
}

async function appendRates(store: StreamStore): Promise<{ single: number; batched: number }> {
  await store.append('warm', [delta('w')]);
  let started = performance.now();
  for (let i = 0; i < BENCH.singleAppends; i += 1) await store.append('single', [delta('tok ')]);
  const single = BENCH.singleAppends / ((performance.now() - started) / 1000);
  const batch = Array.from({ length: BENCH.batchSize }, () => delta('tok '));
  started = performance.now();
  for (let i = 0; i < BENCH.batches; i += 1) await store.append('batched', batch);
  const batched = (BENCH.batches * BENCH.batchSize) / ((performance.now() - started) / 1000);
  return { single, batched };
}

/** Appends `deliveries` events, one every `intervalMs`, each carrying its send time (the writer process's body). */
async function write(store: StreamStore, stream: string): Promise<void> {
  for (let i = 0; i < BENCH.deliveries; i += 1) {
    await store.append(stream, [delta(String(Date.now()))]);
    await new Promise((resolve) => setTimeout(resolve, BENCH.intervalMs));
  }
}

/** Reads the stream as `streamAgentRun` does (read, then wait) and returns each event's latency in ms. */
async function readLatencies(store: StreamStore, stream: string): Promise<number[]> {
  const latencies: number[] = [];
  let next = 1;
  while (latencies.length < BENCH.deliveries) {
    const events = await store.read(stream, next);
    const now = Date.now();
    for (const event of events) {
      if (event.type === 'text-delta') latencies.push(now - Number(event.delta));
      next = event.offset + 1;
    }
    if (events.length === 0) await store.waitFor(stream, next, { timeoutMs: 5_000 });
  }
  return latencies;
}

async function delivery(kind: Kind, where: string): Promise<number[]> {
  const reader = openStore(kind, where);
  const stream = `delivery-${Date.now()}`;
  try {
    if (kind === 'memory') {
      const [latencies] = await Promise.all([readLatencies(reader, stream), write(reader, stream)]);
      return latencies;
    }
    await reader.head(stream); // tables exist before the writer starts
    const child = spawn(process.execPath, ['--import', 'tsx', __filename, 'writer', kind, where, stream], {
      stdio: 'inherit',
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const latencies = await readLatencies(reader, stream);
    await exited;
    return latencies;
  } finally {
    await reader.close();
  }
}

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

async function main(): Promise<void> {
  if (process.argv[2] === 'writer') {
    const store = openStore(process.argv[3] as Kind, process.argv[4]!);
    await write(store, process.argv[5]!);
    await store.close();
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'dt-bench-streams-'));
  const table = `bench_stream_${process.pid}`;
  console.log(machineLine());
  console.log('store     appends/s (1 event)  events/s (batches of 20)  delivery p50 / p95 / max ms  across processes');
  try {
    for (const kind of ['sqlite', 'postgres', 'memory'] as const) {
      const where = kind === 'sqlite' ? join(dir, 'streams.sqlite') : table;
      const store = openStore(kind, where);
      const rates = await appendRates(store);
      await store.close();
      const latencies = await delivery(kind, where);
      console.log(
        `${kind.padEnd(9)} ${rates.single.toFixed(0).padStart(19)}  ${rates.batched.toFixed(0).padStart(24)}  ` +
          `${[50, 95, 100]
            .map((p) => percentile(latencies, p).toFixed(0))
            .join(' / ')
            .padStart(27)}  ${kind === 'memory' ? 'no (one process)' : 'yes'}`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    const admin = new Pool({ connectionString: POSTGRES_URL, max: 1 });
    await admin.query(`DROP TABLE IF EXISTS "${table}_events", "${table}_heads"`).catch(() => undefined);
    await admin.end();
  }
}

void main();
