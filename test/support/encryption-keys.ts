import { randomBytes } from 'node:crypto';
import { parseEncryptionKeys, type EncryptionKeyring } from '../../src/encryption/encryption-keys';

/** A fresh random 32-byte key as the `id:base64key` entry of `DURABLE_TOOLS_ENCRYPTION_KEYS`. */
export function keyEntry(id: string): string {
  return `${id}:${randomBytes(32).toString('base64')}`;
}

/** A keyring of the given entries (the first is current). */
export function keyringOf(...entries: string[]): EncryptionKeyring {
  return parseEncryptionKeys(entries.join(','));
}
