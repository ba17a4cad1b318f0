import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';

const PROCESSES = 8;
const BEGINS_PER_PROCESS_PER_KEY = 8; // 8 processes × 8 = 64 concurrent begins of each key
const KEYS = 1_000;
const ROOT = resolve(__dirname, '../..');

/**
 * Each child opens its own SqliteIdempotencyStore (its own connection) on the shared file, waits for "go",
 * then begins every key 8 times and reports the tokens it was given and the other outcomes it saw.
 */
const CHILD = `
const { SqliteIdempotencyStore } = require(${JSON.stringify(join(ROOT, 'src/stores/idempotency'))});
const [path, keys, perKey, id] = process.argv.slice(1);
const store = new SqliteIdempotencyStore({ path });
process.send({ ready: true });
process.once('message', async () => {
  const started = [];
  const others = {};
  for (let k = 0; k < Number(keys); k++) {
    for (let j = 0; j < Number(perKey); j++) {
      const outcome = await store.begin('key-' + k, 'fp', { owner: 'p' + id + '-' + j, leaseMs: 600000 });
      if (outcome.state === 'started') started.push([k, outcome.token]);
      else others[outcome.state] = (others[outcome.state] || 0) + 1;
    }
  }
  await store.close();
  process.send({ started, others }, () => process.exit(0));
});
`;

interface ChildReport {
  started: Array<[number, string]>;
  others: Record<string, number>;
}

function startChild(
  path: string,
  id: number,
): { child: ChildProcess; ready: Promise<void>; report: Promise<ChildReport> } {
  const child = spawn(
    process.execPath,
    ['--require', 'tsx/cjs', '-e', CHILD, path, String(KEYS), String(BEGINS_PER_PROCESS_PER_KEY), String(id)],
    { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  const messages: unknown[] = [];
  const waiters: Array<(message: unknown) => void> = [];
  child.on('message', (message) => {
    const waiter = waiters.shift();
    if (waiter) waiter(message);
    else messages.push(message);
  });
  const next = () =>
    new Promise<unknown>((resolveMessage, reject) => {
      if (messages.length > 0) return resolveMessage(messages.shift());
      waiters.push(resolveMessage);
      child.once('exit', (code) => reject(new Error(`child ${id} exited with ${code}`)));
    });
  const ready = next().then(() => undefined);
  return { child, ready, report: ready.then(() => next() as Promise<ChildReport>) };
}

describe('the SQLite idempotency store under contention', () => {
  const dir = mkdtempSync(join(tmpdir(), 'idem-sqlite-contention-'));
  const path = join(dir, 'idempotency.sqlite');
  const children: ChildProcess[] = [];

  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives exactly one started per key to 64 concurrent begins from 8 processes on one file, for 1,000 keys', async () => {
    const started = Array.from({ length: PROCESSES }, (_, id) => startChild(path, id));
    children.push(...started.map((s) => s.child));
    await Promise.all(started.map((s) => s.ready));

    const t0 = Date.now();
    for (const s of started) s.child.send('go');
    const reports = await Promise.all(started.map((s) => s.report));
    const elapsedMs = Date.now() - t0;

    const winners = new Map<number, string[]>();
    const others: Record<string, number> = {};
    for (const report of reports) {
      for (const [key, token] of report.started) winners.set(key, [...(winners.get(key) ?? []), token]);
      for (const [state, count] of Object.entries(report.others)) others[state] = (others[state] ?? 0) + count;
    }
    const keysWithOneWinner = [...winners.values()].filter((tokens) => tokens.length === 1).length;
    expect(keysWithOneWinner).toBe(KEYS);
    expect(winners.size).toBe(KEYS);
    expect(others).toEqual({ in_flight: KEYS * (PROCESSES * BEGINS_PER_PROCESS_PER_KEY - 1) });

    const db = new Database(path, { readonly: true });
    const rows = db.prepare('SELECT key, token FROM idempotency_keys').all() as Array<{ key: string; token: string }>;
    db.close();
    expect(rows).toHaveLength(KEYS);
    for (const row of rows) expect(winners.get(Number(row.key.slice(4)))).toEqual([row.token]);

    const begins = KEYS * PROCESSES * BEGINS_PER_PROCESS_PER_KEY;
    console.log(`SQLite: ${begins} begins from ${PROCESSES} processes in ${elapsedMs} ms`);
  });
});
