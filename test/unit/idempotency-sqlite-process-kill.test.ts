import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteIdempotencyStore } from '../../src/stores/idempotency/sqlite-idempotency-store';

const WRITER = join(__dirname, '..', 'support', 'sqlite-killed-writer.ts');
const dir = mkdtempSync(join(tmpdir(), 'sqlite-kill-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the writer until it has killed itself; resolves with what it printed and the signal it died of. */
function runKilledWriter(path: string, synchronous: 'FULL' | 'NORMAL', count: number) {
  return new Promise<{ out: string; signal: NodeJS.Signals | null }>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WRITER, path, synchronous, String(count)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (_code, signal) => resolve({ out, signal }));
  });
}

test.each(['NORMAL', 'FULL'] as const)(
  'with synchronous=%s every commit of a SIGKILLed process is there when the file is opened again',
  async (synchronous) => {
    const path = join(dir, `${synchronous}.sqlite`);
    const count = 20;

    const { out, signal } = await runKilledWriter(path, synchronous, count);

    expect([out, signal]).toEqual(['written\n', 'SIGKILL']);
    const store = new SqliteIdempotencyStore({ path, synchronous });
    try {
      for (let i = 0; i < count; i++) {
        expect(await store.lookup(`tool/${i}`, 'fp')).toEqual({ state: 'completed', result: { paid: i } });
        expect(await store.lookup(`turn/${i}`, 'model-turn')).toEqual({
          state: 'completed',
          result: { text: `turn ${i}` },
        });
      }
    } finally {
      await store.close();
    }
  },
);
