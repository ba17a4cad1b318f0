import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApprovalAuditRecord } from '../../src/contract/approval-types';
import { SqliteAuditStore } from '../../src/stores/audit/sqlite-audit-store';

const record: ApprovalAuditRecord = {
  idempotencyKey: 'wf/run/1',
  workflowId: 'wf',
  stepId: 1,
  tool: 'pay',
  argumentsDigest: 'a'.repeat(64),
  arguments: { amountEur: 500 },
  requestedAt: 1,
  deadline: 2,
  decision: 'approved',
  decidedBy: 'alice',
  decidedAt: 2,
  editedArguments: { amountEur: 50 },
  editedArgumentsDigest: 'b'.repeat(64),
};

describe('the SQLite audit store and approvals with edits', () => {
  test('keeps both the original and the edited arguments of an approval', async () => {
    const store = new SqliteAuditStore({ path: join(mkdtempSync(join(tmpdir(), 'audit-edits-')), 'audit.sqlite') });
    await store.write(record);
    await expect(store.get(record.idempotencyKey)).resolves.toEqual(record);
    await store.close();
  });

  test('adds the edit columns to a table written before approvals with edits, keeping its rows', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'audit-edits-')), 'audit.sqlite');
    const old = new Database(path);
    old.exec(`CREATE TABLE approval_audit (
      idempotency_key TEXT PRIMARY KEY, workflow_id TEXT NOT NULL, step_id INTEGER NOT NULL, tool TEXT NOT NULL,
      arguments_digest TEXT NOT NULL, arguments TEXT NOT NULL, requested_at INTEGER NOT NULL, deadline INTEGER NOT NULL,
      decision TEXT, decided_by TEXT, reason TEXT, decided_at INTEGER, outcome TEXT, outcome_code TEXT,
      completed_at INTEGER, phase INTEGER NOT NULL)`);
    old
      .prepare(`INSERT INTO approval_audit VALUES ('old/1', 'old', 1, 'pay', ?, '{}', 1, 2,
        NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0)`)
      .run('c'.repeat(64));
    old.close();

    const store = new SqliteAuditStore({ path });
    await expect(store.get('old/1')).resolves.toMatchObject({ tool: 'pay', arguments: {} });
    await store.write(record);
    await expect(store.get(record.idempotencyKey)).resolves.toEqual(record);
    await store.close();
  });
});
