/**
 * The engine's audit stores as grant stores (docs/security.md, "Authority of a run"), each backend alike: a grant is
 * recorded once and never replaced, and an approval's identity (subject, client, issuer) is kept; a SQLite file made
 * before the identity column gains it when opened.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Pool } from 'pg';
import type { ApprovalAuditRecord } from '../../src/contract/approval-types';
import type { AuditStore } from '../../src/stores/audit/audit-store';
import { MemoryAuditStore } from '../../src/stores/audit/memory-audit-store';
import { PostgresAuditStore } from '../../src/stores/audit/postgres-audit-store';
import type { RunGrantStore } from '../../src/stores/audit/run-grant-store';
import { SqliteAuditStore } from '../../src/stores/audit/sqlite-audit-store';

const POSTGRES_URL = process.env.DURABLE_TOOLS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `grants_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
const dir = mkdtempSync(join(tmpdir(), 'run-grant-store-'));
const backends: [string, () => AuditStore & RunGrantStore][] = [
  ['memory', () => new MemoryAuditStore()],
  ['sqlite', () => new SqliteAuditStore({ path: join(dir, `${randomUUID()}.sqlite`) })],
  ['postgres', () => new PostgresAuditStore({ connectionString: POSTGRES_URL, schema })],
];
const opened: AuditStore[] = [];

afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
  const pool = new Pool({ connectionString: POSTGRES_URL });
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
  await pool.end();
});

const decided = (key: string): ApprovalAuditRecord => ({
  idempotencyKey: key,
  workflowId: 'wf',
  stepId: 1,
  tool: 'pay',
  argumentsDigest: 'd',
  arguments: {},
  requestedAt: 1,
  deadline: 2,
  decision: 'approved',
  decidedBy: 'mcp:carol (client app1)',
  decidedByIdentity: { subject: 'carol', clientId: 'app1', issuer: 'https://id.example' },
  decidedAt: 2,
});

describe.each(backends)('the %s audit store', (_name, open) => {
  const store = () => {
    const s = open();
    opened.push(s);
    return s;
  };

  test('records a grant once: a second grant of the same workflow id leaves the first', async () => {
    const s = store();
    const workflowId = `run-${randomUUID()}`;
    await s.recordGrant({ workflowId, tools: ['note'], holder: { subject: 'alice' }, grantedAt: 1 });
    const second = await s.recordGrant({ workflowId, tools: ['note', 'raw_effect'], grantedAt: 2 });
    expect(second).toEqual({ workflowId, tools: ['note'], holder: { subject: 'alice' }, grantedAt: 1 });
    expect(await s.grantOf(workflowId)).toEqual(second);
    expect(await s.grantOf(`other-${randomUUID()}`)).toBeUndefined();
  });

  test("keeps the approver's subject, client and issuer", async () => {
    const s = store();
    const key = `wf/r/${randomUUID()}`;
    await s.write(decided(key));
    expect((await s.get(key))?.decidedByIdentity).toEqual(decided(key).decidedByIdentity);
    expect((await s.list({ workflowId: 'wf', limit: 1000 })).find((r) => r.idempotencyKey === key)).toMatchObject({
      decidedBy: 'mcp:carol (client app1)',
      decidedByIdentity: { subject: 'carol', clientId: 'app1', issuer: 'https://id.example' },
    });
  });
});

test('a SQLite audit file made before the identity column gains it when opened', async () => {
  const path = join(dir, 'old.sqlite');
  const old = new Database(path);
  old.exec(`CREATE TABLE approval_audit (idempotency_key TEXT PRIMARY KEY, workflow_id TEXT NOT NULL,
    step_id INTEGER NOT NULL, tool TEXT NOT NULL, arguments_digest TEXT NOT NULL, arguments TEXT NOT NULL,
    requested_at INTEGER NOT NULL, deadline INTEGER NOT NULL, decision TEXT, decided_by TEXT, reason TEXT,
    decided_at INTEGER, outcome TEXT, outcome_code TEXT, completed_at INTEGER, phase INTEGER NOT NULL)`);
  old.close();
  const store = new SqliteAuditStore({ path });
  opened.push(store);
  await store.write(decided('old/r/1'));
  expect((await store.get('old/r/1'))?.decidedByIdentity).toMatchObject({ subject: 'carol' });
});
