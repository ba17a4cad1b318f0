import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EncryptedIdempotencyStore } from '../../src/encryption/encrypted-idempotency-store';
import { EncryptedTranscriptStore } from '../../src/encryption/encrypted-transcript-store';
import type { EncryptionKeyring } from '../../src/encryption/encryption-keys';
import { SqliteIdempotencyStore } from '../../src/stores/idempotency/sqlite-idempotency-store';
import type { TranscriptMessage } from '../../src/contract/model-types';
import { MemoryTranscriptStore } from '../../src/stores/transcripts/memory-transcript-store';
import { SqliteTranscriptStore } from '../../src/stores/transcripts/sqlite-transcript-store';
import { keyEntry, keyringOf } from '../support/encryption-keys';

const dir = mkdtempSync(join(tmpdir(), 'encrypted-stores-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

const k1 = keyEntry('k1');
const k2 = keyEntry('k2');
const SECRET = '4111 1111 1111 1111';
const OWNER = { owner: 'test-worker' };

/** Every text cell of a SQLite file's table, as stored on disk. */
function storedCells(path: string, table: string): string {
  const db = new Database(path, { readonly: true });
  try {
    return JSON.stringify(db.prepare(`SELECT * FROM ${table}`).all());
  } finally {
    db.close();
  }
}

function idempotencyStore(path: string, keyring: EncryptionKeyring) {
  return new EncryptedIdempotencyStore(new SqliteIdempotencyStore({ path }), keyring);
}

async function completeWith(path: string, keyring: EncryptionKeyring, key: string, result: unknown) {
  const store = idempotencyStore(path, keyring);
  const outcome = await store.begin(key, 'fp', OWNER);
  if (outcome.state !== 'started') throw new Error(`unexpected ${outcome.state}`);
  await store.complete(key, outcome.token, result);
  await store.close();
}

describe('the idempotency store with encryption', () => {
  test('keeps a completed result as ciphertext on disk and replays it decrypted', async () => {
    const path = join(dir, `idem-${++files}.sqlite`);
    await completeWith(path, keyringOf(k1), 'run/1', { charged: SECRET });
    expect(storedCells(path, 'idempotency_keys')).not.toContain('4111');
    expect(storedCells(path, 'idempotency_keys')).toContain('dtenc:v1:k1:');
    const store = idempotencyStore(path, keyringOf(k1));
    await expect(store.begin('run/1', 'fp', OWNER)).resolves.toEqual({
      state: 'completed',
      result: { charged: SECRET },
    });
    await store.close();
  });

  test('keeps a permanent failure sealed except its code, and replays it whole', async () => {
    const path = join(dir, `idem-${++files}.sqlite`);
    const store = idempotencyStore(path, keyringOf(k1));
    const outcome = await store.begin('run/2', 'fp', OWNER);
    if (outcome.state !== 'started') throw new Error(`unexpected ${outcome.state}`);
    const failure = { code: 'CARD_DECLINED', message: `card ${SECRET} declined`, hint: 'ask for another card' };
    await store.fail('run/2', outcome.token, failure);
    expect(storedCells(path, 'idempotency_keys')).not.toContain('4111');
    expect(storedCells(path, 'idempotency_keys')).toContain('CARD_DECLINED');
    await expect(store.begin('run/2', 'fp', OWNER)).resolves.toEqual({ state: 'failed', error: failure });
    await store.close();
  });

  test('after a key rotation replays results sealed with the old key', async () => {
    const path = join(dir, `idem-${++files}.sqlite`);
    await completeWith(path, keyringOf(k1), 'run/3', { charged: SECRET });
    await completeWith(path, keyringOf(k2, k1), 'run/4', { charged: 'new' });
    expect(storedCells(path, 'idempotency_keys')).toContain('dtenc:v1:k2:');
    const store = idempotencyStore(path, keyringOf(k2, k1));
    await expect(store.begin('run/3', 'fp', OWNER)).resolves.toMatchObject({ result: { charged: SECRET } });
    await store.close();
  });

  test('replays results stored before encryption was turned on', async () => {
    const path = join(dir, `idem-${++files}.sqlite`);
    const plain = new SqliteIdempotencyStore({ path });
    const outcome = await plain.begin('run/5', 'fp', OWNER);
    if (outcome.state !== 'started') throw new Error(`unexpected ${outcome.state}`);
    await plain.complete('run/5', outcome.token, { before: true });
    await plain.close();
    const store = idempotencyStore(path, keyringOf(k1));
    await expect(store.begin('run/5', 'fp', OWNER)).resolves.toMatchObject({ result: { before: true } });
    await store.close();
  });

  test('still refuses a result that is not JSON with NOT_JSON', async () => {
    const store = idempotencyStore(join(dir, `idem-${++files}.sqlite`), keyringOf(k1));
    const outcome = await store.begin('run/6', 'fp', OWNER);
    if (outcome.state !== 'started') throw new Error(`unexpected ${outcome.state}`);
    await expect(store.complete('run/6', outcome.token, { n: Number.NaN })).rejects.toMatchObject({ code: 'NOT_JSON' });
    await store.close();
  });
  test.each(['complete', 'fail'] as const)(
    'keeps a record finished by %s with its own retention that long, then reaps it',
    async (finish) => {
      let now = 1_800_000_000_000;
      const store = new EncryptedIdempotencyStore(
        new SqliteIdempotencyStore({ path: join(dir, `idem-${++files}.sqlite`), clock: () => now }),
        keyringOf(k1),
      );
      const outcome = await store.begin('run/1', 'fp', OWNER);
      if (outcome.state !== 'started') throw new Error(`unexpected ${outcome.state}`);
      const week = 7 * 24 * 60 * 60 * 1000;
      if (finish === 'complete')
        await store.complete('run/1', outcome.token, { charged: SECRET }, { retentionMs: week });
      else await store.fail('run/1', outcome.token, { code: 'DENIED', message: SECRET }, { retentionMs: week });
      now += week - 1;

      await expect(store.begin('run/1', 'fp', OWNER)).resolves.toMatchObject({
        state: finish === 'complete' ? 'completed' : 'failed',
      });
      now += 1;
      await expect(store.reap()).resolves.toBe(1);
      await store.close();
    },
  );
});

describe('the transcript store with encryption', () => {
  const messages: TranscriptMessage[] = [
    { role: 'user', content: `Pay with ${SECRET}` },
    { role: 'assistant', toolCalls: [{ id: 'c1', name: 'pay', arguments: { card: SECRET } }] },
  ];

  test('keeps messages and stored payloads as ciphertext on disk and reads them back', async () => {
    const path = join(dir, `transcripts-${++files}.sqlite`);
    const store = new EncryptedTranscriptStore(new SqliteTranscriptStore({ path }), keyringOf(k1));
    await store.write('run', 0, messages);
    await store.putPayload('run/1/output', { runId: 'run', text: `{"card":"${SECRET}"}` });
    expect(storedCells(path, 'transcript_messages')).not.toContain('4111');
    expect(storedCells(path, 'stored_payloads')).not.toContain('4111');
    await expect(store.read('run')).resolves.toEqual(messages);
    await expect(store.getPayload('run/1/output')).resolves.toMatchObject({
      runId: 'run',
      text: `{"card":"${SECRET}"}`,
    });
    await store.close();
  });

  test("keeps a payload's own expiry, and reaps through to the inner store", async () => {
    let now = 0;
    const store = new EncryptedTranscriptStore(new MemoryTranscriptStore({ clock: () => now }), keyringOf(k1));
    await store.putPayload('run/2/output', { runId: 'run', text: '"x"', expiresAt: 500 });
    await expect(store.getPayload('run/2/output')).resolves.toEqual({ runId: 'run', text: '"x"', expiresAt: 500 });
    now = 500;
    await expect(store.reapPayloads()).resolves.toBe(1);
    await store.close();
  });

  test('after a key rotation reads what the old key sealed and appends with the new one', async () => {
    const path = join(dir, `transcripts-${++files}.sqlite`);
    const before = new EncryptedTranscriptStore(new SqliteTranscriptStore({ path }), keyringOf(k1));
    await before.write('run', 0, messages.slice(0, 1));
    await before.close();
    const after = new EncryptedTranscriptStore(new SqliteTranscriptStore({ path }), keyringOf(k2, k1));
    await expect(after.write('run', 1, messages.slice(1))).resolves.toBe(true);
    await expect(after.read('run')).resolves.toEqual(messages);
    expect(storedCells(path, 'transcript_messages')).toMatch(/dtenc:v1:k1:.*dtenc:v1:k2:/);
    await after.close();
  });
});

describe('insertIfAbsent with encryption', () => {
  test('keeps an inserted result as ciphertext on disk and replays it decrypted', async () => {
    const path = join(dir, `idem-${++files}.sqlite`);
    const store = idempotencyStore(path, keyringOf(k1));
    expect(await store.insertIfAbsent!('turn/1', 'fp', { said: SECRET })).toEqual({ state: 'inserted' });

    expect(storedCells(path, 'idempotency_keys')).not.toContain('4111');
    expect(await store.lookup!('turn/1', 'fp')).toEqual({ state: 'completed', result: { said: SECRET } });
    await store.close();
  });

  test("gives a later insert the first one's result, decrypted", async () => {
    const path = join(dir, `idem-${++files}.sqlite`);
    const store = idempotencyStore(path, keyringOf(k1));
    await store.insertIfAbsent!('turn/1', 'fp', { said: 'first' });

    expect(await store.insertIfAbsent!('turn/1', 'fp', { said: 'second' })).toEqual({
      state: 'completed',
      result: { said: 'first' },
    });
    await store.close();
  });

  test('has no insertIfAbsent over a store that has none', () => {
    const inner = new SqliteIdempotencyStore({ path: join(dir, `idem-${++files}.sqlite`) });
    Object.assign(inner, { lookup: undefined, insertIfAbsent: undefined });
    const store = new EncryptedIdempotencyStore(inner, keyringOf(k1));

    expect([store.lookup, store.insertIfAbsent]).toEqual([undefined, undefined]);
    return inner.close();
  });
});
