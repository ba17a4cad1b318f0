import { chmodSync, existsSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setPrivateStateWarn } from '../../src/stores/private-state';
import { SqliteAuditStore } from '../../src/stores/audit/sqlite-audit-store';
import { SqliteIdempotencyStore } from '../../src/stores/idempotency/sqlite-idempotency-store';
import { SqliteTranscriptStore } from '../../src/stores/transcripts/sqlite-transcript-store';

/**
 * State at rest is private: the directories the stores create are 0700, the store files 0600, SQLite's -wal
 * and -shm files too (checked on disk, after a write), whatever the process's umask; looser state the engine
 * owns is tightened.
 */

function modeOf(path: string): string {
  return (statSync(path).mode & 0o777).toString(8);
}

/** One SQLite store of each kind: open it at `path`, write something, and close it. */
const STORES: Array<{ name: string; open: (path: string) => { write(): Promise<unknown>; close(): Promise<void> } }> = [
  {
    name: 'idempotency',
    open: (path) => {
      const store = new SqliteIdempotencyStore({ path });
      return { write: () => store.begin('run/1', 'fp', { owner: 'test' }), close: () => store.close() };
    },
  },
  {
    name: 'transcript (outputs, async-job records)',
    open: (path) => {
      const store = new SqliteTranscriptStore({ path });
      return {
        write: () => store.putPayload('job:run/1', { runId: 'run', text: '{"secret":"s","taskToken":"t"}' }),
        close: () => store.close(),
      };
    },
  },
  {
    name: 'audit',
    open: (path) => {
      const store = new SqliteAuditStore({ path });
      return {
        write: () =>
          store.write({
            idempotencyKey: 'run/1',
            workflowId: 'run',
            stepId: 1,
            tool: 'pay',
            argumentsDigest: 'd',
            arguments: { card: '4111' },
            requestedAt: 1,
            deadline: 2,
          }),
        close: () => store.close(),
      };
    },
  },
];

let warnings: string[] = [];
let restoreWarn: (message: string) => void;
let umaskBefore: number;
beforeEach(() => {
  warnings = [];
  restoreWarn = setPrivateStateWarn((message) => warnings.push(message));
  umaskBefore = process.umask();
});
afterEach(() => {
  setPrivateStateWarn(restoreWarn);
  process.umask(umaskBefore);
});

describe.each(STORES)('the SQLite $name store', ({ open }) => {
  test('creates .data 0700 and its file, -wal and -shm 0600, even under umask 000', async () => {
    const root = mkdtempSync(join(tmpdir(), 'at-rest-'));
    const path = join(root, '.data', 'store.sqlite');
    process.umask(0);
    const store = open(path);
    await store.write();
    expect(modeOf(join(root, '.data'))).toBe('700');
    for (const file of [path, `${path}-wal`, `${path}-shm`]) {
      expect(existsSync(file)).toBe(true);
      expect([file, modeOf(file)]).toEqual([file, '600']);
    }
    await store.close();
    expect(warnings).toEqual([]);
  });

  test('tightens an existing .data directory and store files that an older version left 755 and 644', async () => {
    const root = mkdtempSync(join(tmpdir(), 'at-rest-'));
    const dir = join(root, '.data');
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    const path = join(dir, 'store.sqlite');
    const first = open(path);
    await first.write();
    await first.close();
    chmodSync(path, 0o644);
    writeFileSync(`${path}-journal`, '');
    chmodSync(`${path}-journal`, 0o644);
    const second = open(path);
    await second.write();
    expect(modeOf(dir)).toBe('700');
    for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`].filter(existsSync)) {
      expect([file, modeOf(file)]).toEqual([file, '600']);
    }
    await second.close();
  });

  test('leaves a directory the user chose as it is, with the files in it 0600', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'at-rest-own-'));
    chmodSync(dir, 0o755);
    const path = join(dir, 'mine.sqlite');
    const store = open(path);
    await store.write();
    expect(modeOf(dir)).toBe('755');
    expect(modeOf(path)).toBe('600');
    expect(modeOf(`${path}-wal`)).toBe('600');
    await store.close();
  });
});
