import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { preparePrivateStateFile } from '../private-state';
import { breakerAfter, closedBreaker, decideSlot } from './limit-decision';
import type { BreakerState, CallOutcome, SlotDecision, SlotRequest, ToolLimitStore } from './tool-limit-store';

/** Options of {@link SqliteToolLimitStore}. */
export interface SqliteToolLimitStoreOptions {
  /** Database file (default `.data/idempotency.sqlite`, next to the idempotency keys), 0600 in a 0700 directory. */
  path?: string;
  /** Prefix of the four tables (default `tool_limit`). */
  tablePrefix?: string;
  /** Total time one operation waits for the write lock (default 5 s); then it fails. */
  busyTimeoutMs?: number;
  /** Clock in epoch ms (default `Date.now`): every worker sharing the file must read the same clock (one machine). */
  clock?: () => number;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,40}$/;

interface BreakerRow {
  scope: string;
  open_until: number;
  failures: number;
  opens: number;
  probe_holder: string | null;
  probe_expires: number;
  reason: string;
}

/**
 * The {@link ToolLimitStore} of the workers of one machine: four tables in a SQLite file (WAL). Every `acquire`
 * is one `BEGIN IMMEDIATE` transaction (the database's write lock taken before reading), so of any number of
 * processes only one can take a scope's last slot. A lock wait blocks at most 20 ms at a time, then waits
 * asynchronously, so the worker's heartbeats go on.
 */
export class SqliteToolLimitStore implements ToolLimitStore {
  readonly path: string;
  private readonly db: Database.Database;
  private readonly busyTimeoutMs: number;
  private readonly clock: () => number;
  private readonly acquireTx: (request: SlotRequest) => SlotDecision;
  private readonly releaseTx: (scope: string, holder: string, outcome: CallOutcome, breaker: boolean) => boolean;
  private readonly sql: ReturnType<typeof statements>;

  constructor(options: SqliteToolLimitStoreOptions = {}) {
    const prefix = options.tablePrefix ?? 'tool_limit';
    if (!IDENTIFIER.test(prefix)) throw new TypeError(`Invalid SQLite table prefix "${prefix}".`);
    this.busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
    this.clock = options.clock ?? Date.now;
    const file = options.path ?? '.data/idempotency.sqlite';
    this.path = file === ':memory:' ? file : resolve(file);
    preparePrivateStateFile(this.path);
    this.db = new Database(this.path, { timeout: this.busyTimeoutMs });
    this.db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(schema(prefix));
    this.db.pragma('busy_timeout = 20');
    this.sql = statements(this.db, prefix);
    this.acquireTx = this.db.transaction((request: SlotRequest) => this.acquireIn(request));
    this.releaseTx = this.db.transaction((scope: string, holder: string, outcome: CallOutcome, breaker: boolean) => {
      this.sql.deleteSlot.run(scope, holder);
      this.sql.endStart.run(this.clock(), scope, holder);
      if (!breaker) return false;
      const current = this.breakerOf(scope);
      const after = breakerAfter(current, holder, outcome, this.clock());
      this.writeBreaker(after);
      return after.opens > current.opens;
    });
  }

  acquire(request: SlotRequest): Promise<SlotDecision> {
    return this.withLock(() =>
      (this.acquireTx as unknown as { immediate: (r: SlotRequest) => SlotDecision }).immediate(request),
    );
  }

  renew(scope: string, holder: string, leaseMs: number): Promise<boolean> {
    return this.withLock(() => {
      const now = this.clock();
      const renewed = this.sql.renewSlot.run(now + leaseMs, scope, holder, now).changes === 1;
      if (renewed) this.sql.renewProbe.run(now + leaseMs, scope, holder);
      return renewed;
    });
  }

  release(scope: string, holder: string, outcome: CallOutcome, breaker: boolean): Promise<boolean> {
    return this.withLock(() =>
      (this.releaseTx as unknown as { immediate: (...a: unknown[]) => boolean }).immediate(
        scope,
        holder,
        outcome,
        breaker,
      ),
    );
  }

  leave(scope: string, waiter: string): Promise<void> {
    return this.withLock(() => void this.sql.deleteWaiter.run(scope, waiter));
  }

  openBreakers(): Promise<BreakerState[]> {
    return this.withLock(() => this.sql.openBreakers.all().map(breakerOfRow));
  }

  close(): Promise<void> {
    if (this.db.open) this.db.close();
    return Promise.resolve();
  }

  private acquireIn(request: SlotRequest): SlotDecision {
    const now = this.clock();
    const { scope, holder, waiter } = request;
    this.sql.pruneSlots.run(scope, now);
    this.sql.pruneWaiters.run(scope, now - request.waiterStaleMs);
    if (request.rate) this.sql.pruneStarts.run(scope, now);
    const mine = this.sql.waiter.get(scope, waiter);
    const since = mine?.since ?? now;
    const window = request.rate ? this.sql.window.get(scope)! : { count: 0, oldest: null };
    let breaker = this.breakerOf(scope);
    if (breaker.probeHolder !== null && breaker.probeExpires <= now) {
      breaker = { ...breaker, probeHolder: null, probeExpires: 0 };
    }
    const decision = decideSlot(request, {
      now,
      running: this.sql.running.get(scope, holder)!.count,
      startsInWindow: window.count,
      oldestStart: window.oldest ?? undefined,
      ahead: this.sql.ahead.get(scope, since, since, waiter, waiter)!.count,
      breaker,
    });
    if (!decision.granted) {
      this.sql.upsertWaiter.run(scope, waiter, since, now);
      return decision;
    }
    this.sql.deleteWaiter.run(scope, waiter);
    this.sql.upsertSlot.run(scope, holder, now + request.leaseMs);
    if (request.rate) this.sql.insertStart.run(scope, holder, now + 2 * request.rate.periodMs, request.rate.periodMs);
    if (decision.probe) this.writeBreaker({ ...breaker, probeHolder: holder, probeExpires: now + request.leaseMs });
    return decision;
  }

  private breakerOf(scope: string): BreakerState {
    const row = this.sql.breaker.get(scope);
    return row ? breakerOfRow(row) : closedBreaker(scope);
  }

  private writeBreaker(b: BreakerState): void {
    this.sql.upsertBreaker.run(b.scope, b.openUntil, b.failures, b.opens, b.probeHolder, b.probeExpires, b.reason);
  }

  private async withLock<T>(operation: () => T): Promise<T> {
    const deadline = Date.now() + this.busyTimeoutMs;
    for (let attempt = 0; ; attempt += 1) {
      try {
        return operation();
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        const busy = typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
        if (!busy || Date.now() >= deadline) throw error;
        await sleep(Math.random() * Math.min(50, 2 ** attempt));
      }
    }
  }
}

function breakerOfRow(row: BreakerRow): BreakerState {
  return {
    scope: row.scope,
    openUntil: row.open_until,
    failures: row.failures,
    opens: row.opens,
    probeHolder: row.probe_holder,
    probeExpires: row.probe_expires,
    reason: row.reason,
  };
}

function schema(p: string): string {
  return `
    CREATE TABLE IF NOT EXISTS ${p}_slots (scope TEXT NOT NULL, holder TEXT NOT NULL, expires_at INTEGER NOT NULL,
      PRIMARY KEY (scope, holder)) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS ${p}_rate (scope TEXT NOT NULL, holder TEXT NOT NULL, counts_until INTEGER NOT NULL,
      period_ms INTEGER NOT NULL);
    CREATE INDEX IF NOT EXISTS ${p}_rate_scope ON ${p}_rate (scope, counts_until);
    CREATE TABLE IF NOT EXISTS ${p}_waiters (scope TEXT NOT NULL, waiter TEXT NOT NULL, since INTEGER NOT NULL,
      seen INTEGER NOT NULL, PRIMARY KEY (scope, waiter)) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS ${p}_waiters_line ON ${p}_waiters (scope, since, waiter);
    CREATE TABLE IF NOT EXISTS ${p}_breakers (scope TEXT PRIMARY KEY NOT NULL, open_until INTEGER NOT NULL,
      failures INTEGER NOT NULL, opens INTEGER NOT NULL, probe_holder TEXT, probe_expires INTEGER NOT NULL,
      reason TEXT NOT NULL) WITHOUT ROWID;`;
}

function statements(db: Database.Database, p: string) {
  return {
    pruneSlots: db.prepare<[string, number]>(`DELETE FROM ${p}_slots WHERE scope = ? AND expires_at <= ?`),
    pruneWaiters: db.prepare<[string, number]>(`DELETE FROM ${p}_waiters WHERE scope = ? AND seen < ?`),
    pruneStarts: db.prepare<[string, number]>(`DELETE FROM ${p}_rate WHERE scope = ? AND counts_until <= ?`),
    waiter: db.prepare<[string, string], { since: number }>(
      `SELECT since FROM ${p}_waiters WHERE scope = ? AND waiter = ?`,
    ),
    window: db.prepare<[string], { count: number; oldest: number | null }>(
      `SELECT COUNT(*) AS count, MIN(counts_until) AS oldest FROM ${p}_rate WHERE scope = ?`,
    ),
    running: db.prepare<[string, string], { count: number }>(
      `SELECT COUNT(*) AS count FROM ${p}_slots WHERE scope = ? AND holder <> ?`,
    ),
    ahead: db.prepare<[string, number, number, string, string], { count: number }>(
      `SELECT COUNT(*) AS count FROM ${p}_waiters WHERE scope = ? AND (since < ? OR (since = ? AND waiter < ?)) AND waiter <> ?`,
    ),
    upsertWaiter: db.prepare<[string, string, number, number]>(
      `INSERT INTO ${p}_waiters (scope, waiter, since, seen) VALUES (?, ?, ?, ?)
       ON CONFLICT (scope, waiter) DO UPDATE SET seen = excluded.seen`,
    ),
    deleteWaiter: db.prepare<[string, string]>(`DELETE FROM ${p}_waiters WHERE scope = ? AND waiter = ?`),
    upsertSlot: db.prepare<[string, string, number]>(
      `INSERT INTO ${p}_slots (scope, holder, expires_at) VALUES (?, ?, ?)
       ON CONFLICT (scope, holder) DO UPDATE SET expires_at = excluded.expires_at`,
    ),
    renewSlot: db.prepare<[number, string, string, number]>(
      `UPDATE ${p}_slots SET expires_at = ? WHERE scope = ? AND holder = ? AND expires_at > ?`,
    ),
    renewProbe: db.prepare<[number, string, string]>(
      `UPDATE ${p}_breakers SET probe_expires = ? WHERE scope = ? AND probe_holder = ?`,
    ),
    deleteSlot: db.prepare<[string, string]>(`DELETE FROM ${p}_slots WHERE scope = ? AND holder = ?`),
    insertStart: db.prepare<[string, string, number, number]>(
      `INSERT INTO ${p}_rate (scope, holder, counts_until, period_ms) VALUES (?, ?, ?, ?)`,
    ),
    endStart: db.prepare<[number, string, string]>(
      `UPDATE ${p}_rate SET counts_until = MIN(counts_until, ? + period_ms) WHERE scope = ? AND holder = ?`,
    ),
    breaker: db.prepare<[string], BreakerRow>(`SELECT * FROM ${p}_breakers WHERE scope = ?`),
    openBreakers: db.prepare<[], BreakerRow>(`SELECT * FROM ${p}_breakers WHERE open_until > 0`),
    upsertBreaker: db.prepare<[string, number, number, number, string | null, number, string]>(
      `INSERT INTO ${p}_breakers (scope, open_until, failures, opens, probe_holder, probe_expires, reason)
       VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (scope) DO UPDATE SET open_until = excluded.open_until,
       failures = excluded.failures, opens = excluded.opens, probe_holder = excluded.probe_holder,
       probe_expires = excluded.probe_expires, reason = excluded.reason`,
    ),
  };
}
