import { open, seal } from './aes-gcm';
import { EncryptionError } from './encryption-error';
import type { EncryptionKeyring } from './encryption-keys';

/** Prefix of a text sealed by {@link sealText}: `dtenc:v1:<key id>:<base64 of iv | ciphertext | tag>`. */
export const SEALED_TEXT_PREFIX = 'dtenc:v1:';

/**
 * Encrypts a text for a store with the keyring's current key, as one self-describing string (the key id in
 * clear, so a rotated keyring still reads it).
 */
export function sealText(keyring: EncryptionKeyring, text: string): string {
  const { keyId, data } = seal(keyring, Buffer.from(text, 'utf8'));
  return `${SEALED_TEXT_PREFIX}${keyId}:${data.toString('base64')}`;
}

/** Whether a stored string is a sealed text. */
export function isSealedText(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(SEALED_TEXT_PREFIX);
}

/**
 * The text back from {@link sealText}.
 *
 * @throws {@link EncryptionError} `DECRYPTION_FAILED` (malformed or altered), `UNKNOWN_ENCRYPTION_KEY`.
 */
export function openText(keyring: EncryptionKeyring, sealed: string): string {
  const rest = sealed.slice(SEALED_TEXT_PREFIX.length);
  const colon = rest.indexOf(':');
  if (!sealed.startsWith(SEALED_TEXT_PREFIX) || colon <= 0) {
    throw new EncryptionError('A stored ciphertext is malformed.', 'DECRYPTION_FAILED');
  }
  const keyId = rest.slice(0, colon);
  return open(keyring, { keyId, data: Buffer.from(rest.slice(colon + 1), 'base64') }).toString('utf8');
}
