import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EncryptionError } from '../../src/encryption/encryption-error';
import { encryptionKeysFromEnv, parseEncryptionKeys } from '../../src/encryption/encryption-keys';
import { keyEntry } from '../support/encryption-keys';

function refusal(text: string): EncryptionError {
  try {
    parseEncryptionKeys(text, 'TEST_KEYS');
  } catch (error) {
    expect(error).toBeInstanceOf(EncryptionError);
    expect((error as EncryptionError).code).toBe('INVALID_ENCRYPTION_KEYS');
    return error as EncryptionError;
  }
  throw new Error(`"${text}" was accepted`);
}

describe('encryption key configuration', () => {
  test('the first key listed is the current one and every key is kept for reading', () => {
    const keyring = parseEncryptionKeys(`${keyEntry('new')}, ${keyEntry('old')}`);
    expect(keyring.current.id).toBe('new');
    expect([...keyring.keys.keys()]).toEqual(['new', 'old']);
    expect(keyring.current.key).toHaveLength(32);
  });

  test('a keys file takes one key a line with comments', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keys-'));
    const file = join(dir, 'keys');
    writeFileSync(file, `# rotated 2026-11\n${keyEntry('k2')}\n${keyEntry('k1')} # retired\n`);
    const keyring = encryptionKeysFromEnv({ DURABLE_TOOLS_ENCRYPTION_KEYS_FILE: file });
    expect([...(keyring?.keys.keys() ?? [])]).toEqual(['k2', 'k1']);
  });

  test('without configuration encryption is off', () => {
    expect(encryptionKeysFromEnv({})).toBeUndefined();
    expect(encryptionKeysFromEnv({ DURABLE_TOOLS_ENCRYPTION_KEYS: '  ' })).toBeUndefined();
  });

  test('a key of the wrong length is refused naming its entry, neither its id nor its material', () => {
    const short = Buffer.alloc(16, 7).toString('base64');
    const error = refusal(`${keyEntry('k0')},k1:${short}`);
    expect(error.message).toMatch(/entry 2 of .*32 bytes.*not 16 bytes/);
    expect(error.message).not.toContain('k1');
    expect(error.message).not.toContain(short);
  });

  test('an entry written the wrong way round (key:id) is refused without quoting the key', () => {
    const material = Buffer.alloc(32, 9).toString('base64').replace(/=+$/, '');
    for (const entry of [`${material}:k1`, `${material}+/:k1`]) {
      const error = refusal(entry);
      expect(error.message).toMatch(/entry 1 of/);
      expect(error.message).not.toContain(material.slice(0, 12));
    }
  });

  test('an entry without an id, a bad id, text that is not base64 and duplicate ids are refused', () => {
    expect(refusal(Buffer.alloc(32).toString('base64')).message).toMatch(/no colon/);
    expect(refusal(`bad!id:${Buffer.alloc(32).toString('base64')}`).message).toMatch(/key id/);
    expect(refusal('k1:not*base64!').message).toMatch(/not base64|32 bytes/);
    expect(refusal(`${keyEntry('k1')},${keyEntry('k1')}`).message).toMatch(/Entries 1 and 2 .* same key id/);
    expect(refusal('').message).toMatch(/no key/);
  });

  test('setting both the inline list and a keys file is refused', () => {
    expect(() =>
      encryptionKeysFromEnv({ DURABLE_TOOLS_ENCRYPTION_KEYS: keyEntry('a'), DURABLE_TOOLS_ENCRYPTION_KEYS_FILE: '/x' }),
    ).toThrow(/not both/);
  });

  test('an unreadable keys file is a configuration error', () => {
    expect(() => encryptionKeysFromEnv({ DURABLE_TOOLS_ENCRYPTION_KEYS_FILE: '/nonexistent/keys' })).toThrow(
      expect.objectContaining({ code: 'INVALID_ENCRYPTION_KEYS' }),
    );
  });
});
