import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { EncryptionCodec, ENCRYPTED_PAYLOAD } from '../../src/encryption/encryption-codec';
import { PAYLOAD_LIMITS } from '../../src/contract/payload-limits';
import { keyEntry, keyringOf } from '../support/encryption-keys';

const secret = { card: '4111 1111 1111 1111', holder: 'Ada Lovelace' };
const k1 = keyEntry('k1');
const k2 = keyEntry('k2');

function text(payload: Payload): string {
  return Buffer.from(payload.data ?? []).toString('latin1');
}

function keyIdOf(payload: Payload): string {
  return Buffer.from(payload.metadata?.[ENCRYPTED_PAYLOAD.keyIdKey] ?? []).toString('utf8');
}

describe('the encryption payload codec', () => {
  test('encodes a payload into ciphertext that decodes back to the same payload', async () => {
    const codec = new EncryptionCodec(keyringOf(k1));
    const plain = defaultPayloadConverter.toPayload(secret);
    const [encrypted] = await codec.encode([plain]);
    expect(text(encrypted!)).not.toContain('4111');
    expect(text(encrypted!)).not.toContain('Ada');
    expect(Buffer.from(encrypted!.metadata!.encoding!).toString()).toBe('binary/encrypted');
    expect(keyIdOf(encrypted!)).toBe('k1');
    const [decoded] = await codec.decode([encrypted!]);
    expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual(secret);
  });

  test('encrypting the same payload twice gives different ciphertexts (a fresh IV each time)', async () => {
    const codec = new EncryptionCodec(keyringOf(k1));
    const plain = defaultPayloadConverter.toPayload(secret);
    const [a, b] = await codec.encode([plain, plain]);
    expect(Buffer.from(a!.data!).equals(Buffer.from(b!.data!))).toBe(false);
  });

  test('after a rotation old payloads stay readable and new ones use the new key', async () => {
    const [old] = await new EncryptionCodec(keyringOf(k1)).encode([defaultPayloadConverter.toPayload(secret)]);
    const rotated = new EncryptionCodec(keyringOf(k2, k1));
    const [decodedOld] = await rotated.decode([old!]);
    expect(defaultPayloadConverter.fromPayload(decodedOld!)).toEqual(secret);
    const [fresh] = await rotated.encode([defaultPayloadConverter.toPayload(secret)]);
    expect(keyIdOf(fresh!)).toBe('k2');
  });

  test('a payload whose key was removed is refused with UNKNOWN_ENCRYPTION_KEY, naming no key id but how many are configured and what to do', async () => {
    const [old] = await new EncryptionCodec(keyringOf(k1)).encode([defaultPayloadConverter.toPayload(secret)]);
    const refusal = new EncryptionCodec(keyringOf(k2)).decode([old!]);
    await expect(refusal).rejects.toMatchObject({ name: 'EncryptionError', code: 'UNKNOWN_ENCRYPTION_KEY' });
    const message = ((await refusal.catch((error: unknown) => error)) as Error).message;
    expect(message).toContain('not among the 1 configured key.');
    expect(message).toContain('DURABLE_TOOLS_ENCRYPTION_KEYS');
    expect(message).not.toContain('k1');
    expect(message).not.toContain('k2');
  });

  test('an altered ciphertext is refused with DECRYPTION_FAILED', async () => {
    const codec = new EncryptionCodec(keyringOf(k1));
    const [encrypted] = await codec.encode([defaultPayloadConverter.toPayload(secret)]);
    const data = Buffer.from(encrypted!.data!);
    data[20] = data[20]! ^ 1;
    await expect(codec.decode([{ ...encrypted!, data }])).rejects.toMatchObject({ code: 'DECRYPTION_FAILED' });
  });

  test('a payload written before encryption was turned on passes through decode unchanged', async () => {
    const plain = defaultPayloadConverter.toPayload(secret);
    const [decoded] = await new EncryptionCodec(keyringOf(k1)).decode([plain]);
    expect(decoded).toBe(plain);
  });

  test('the largest payload the budget admits stays under Temporal’s limit once encrypted', async () => {
    // The biggest single payload the engine sends is one model turn's arguments (plus its text).
    const turn = {
      text: 'x'.repeat(PAYLOAD_LIMITS.modelTurnTextChars),
      args: 'y'.repeat(PAYLOAD_LIMITS.modelTurnArgumentBytes),
    };
    const plain = defaultPayloadConverter.toPayload(turn);
    const [encrypted] = await new EncryptionCodec(keyringOf(k1)).encode([plain]);
    const overhead = encrypted!.data!.length - plain.data!.length;
    expect(overhead).toBeLessThan(100);
    expect(encrypted!.data!.length + 100).toBeLessThan(PAYLOAD_LIMITS.temporalPayloadErrorBytes);
  });
});
