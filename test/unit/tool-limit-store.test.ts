import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { MemoryToolLimitStore } from '../../src/stores/limits/memory-tool-limit-store';
import { SqliteToolLimitStore } from '../../src/stores/limits/sqlite-tool-limit-store';
import { PostgresToolLimitStore } from '../../src/stores/limits/postgres-tool-limit-store';
import type { SlotRequest, ToolLimitStore } from '../../src/stores/limits/tool-limit-store';

const dir = mkdtempSync(join(tmpdir(), 'tool-limits-'));
const POSTGRES_URL = process.env.DURABLE_TOOLS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const pool = new Pool({ connectionString: POSTGRES_URL, max: 4 });
const prefixes: string[] = [];
let places = 0;

/** Two handles on one place (a file, a table prefix): two workers sharing the store. */
const backends: Array<{ name: string; open(): [ToolLimitStore, ToolLimitStore] }> = [
  {
    name: 'memory',
    open: () => {
      const store = new MemoryToolLimitStore();
      return [store, store];
    },
  },
  {
    name: 'sqlite',
    open: () => {
      const path = join(dir, `limits-${(places += 1)}.sqlite`);
      return [new SqliteToolLimitStore({ path }), new SqliteToolLimitStore({ path })];
    },
  },
  {
    name: 'postgres',
    open: () => {
      const tablePrefix = `tl_${process.pid}_${Date.now().toString(36)}_${(places += 1)}`;
      prefixes.push(tablePrefix);
      return [new PostgresToolLimitStore({ pool, tablePrefix }), new PostgresToolLimitStore({ pool, tablePrefix })];
    },
  },
];

afterAll(async () => {
  for (const p of prefixes) {
    for (const t of ['slots', 'rate', 'waiters', 'breakers']) await pool.query(`DROP TABLE IF EXISTS ${p}_${t}`);
  }
  await pool.end();
  rmSync(dir, { recursive: true, force: true });
});

function request(holder: string, more: Partial<SlotRequest> = {}): SlotRequest {
  return {
    scope: 'send_email#acct-1',
    holder,
    waiter: `call-${holder}`,
    breaker: true,
    leaseMs: 30_000,
    waiterStaleMs: 5_000,
    ...more,
  };
}

describe.each(backends)('the $name tool limit store', ({ open }) => {
  test('grants no more slots than the concurrency limit, across two handles', async () => {
    const [a, b] = open();
    const grants = await Promise.all(
      ['1', '2', '3', '4'].map((h, i) => (i % 2 ? a : b).acquire(request(h, { concurrency: 2 }))),
    );
    expect(grants.filter((g) => g.granted)).toHaveLength(2);
    const refused = grants.find((g) => !g.granted);
    expect(refused).toMatchObject({ granted: false, reason: 'concurrency', running: 2 });
  });

  test('a freed slot goes to the call that waited first', async () => {
    const [a, b] = open();
    await a.acquire(request('1', { concurrency: 1 }));
    await a.acquire(request('2', { concurrency: 1 }));
    await b.acquire(request('3', { concurrency: 1 }));
    await a.release('send_email#acct-1', '1', { kind: 'ok' }, true);
    expect(await b.acquire(request('3', { concurrency: 1 }))).toMatchObject({ granted: false, ahead: 1 });
    expect(await a.acquire(request('2', { concurrency: 1 }))).toMatchObject({ granted: true });
  });

  test('a slot whose holder stopped renewing it is free after its lease', async () => {
    const [a, b] = open();
    expect(await a.acquire(request('dead', { concurrency: 1, leaseMs: 1_000 }))).toMatchObject({ granted: true });
    expect(await b.acquire(request('next', { concurrency: 1 }))).toMatchObject({ granted: false });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await b.acquire(request('next', { concurrency: 1 }))).toMatchObject({ granted: true });
    expect(await a.renew('send_email#acct-1', 'dead', 1_000)).toBe(false);
  });

  test('starts no more calls in a window than the rate limit, counting each until a period after it ended', async () => {
    const [a, b] = open();
    const rate = { limit: 3, periodMs: 1_000 };
    const results = [];
    for (let i = 0; i < 5; i += 1) results.push(await (i % 2 ? a : b).acquire(request(`r${i}`, { rate })));
    expect(results.map((r) => r.granted)).toEqual([true, true, true, false, false]);
    expect(results[3]).toMatchObject({ granted: false, reason: 'rate' });
    for (const holder of ['r0', 'r1', 'r2']) await a.release('send_email#acct-1', holder, { kind: 'ok' }, true);
    expect(await b.acquire(request('r3', { rate }))).toMatchObject({ granted: false, reason: 'rate' });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await b.acquire(request('r3', { rate }))).toMatchObject({ granted: true });
  });

  test('a 429 with Retry-After pauses every call of the scope, then lets one probe before the rest', async () => {
    const [a, b] = open();
    expect(await a.acquire(request('first'))).toMatchObject({ granted: true });
    const outcome = { kind: 'overloaded', retryAfterMs: 200, reason: 'Retry-After 0.2 s' } as const;
    expect(await a.release('send_email#acct-1', 'first', outcome, true)).toBe(true);
    expect(await b.acquire(request('x'))).toMatchObject({ granted: false, reason: 'paused' });
    expect((await a.openBreakers()).map((s) => s.scope)).toEqual(['send_email#acct-1']);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(await b.acquire(request('x'))).toMatchObject({ granted: true, probe: true });
    expect(await a.acquire(request('y'))).toMatchObject({ granted: false, reason: 'probing' });
    await b.release('send_email#acct-1', 'x', { kind: 'ok' }, true);
    expect(await a.acquire(request('y'))).toMatchObject({ granted: true, probe: false });
    expect(await a.openBreakers()).toEqual([]);
  });

  test('a storm of overload failures opens the breaker; a failed probe reopens it', async () => {
    const [a] = open();
    const unavailable = { kind: 'overloaded', reason: 'unavailable' } as const;
    for (let i = 0; i < 5; i += 1) {
      await a.acquire(request(`s${i}`));
      await a.release('send_email#acct-1', `s${i}`, unavailable, true);
    }
    expect(await a.acquire(request('z'))).toMatchObject({ granted: false, reason: 'paused' });
    const [open1] = await a.openBreakers();
    await new Promise((resolve) => setTimeout(resolve, open1!.openUntil - Date.now() + 20));
    expect(await a.acquire(request('z'))).toMatchObject({ granted: true, probe: true });
    expect(await a.release('send_email#acct-1', 'z', unavailable, true)).toBe(true);
    const [open2] = await a.openBreakers();
    expect(open2!.opens).toBe(2);
  });
});
