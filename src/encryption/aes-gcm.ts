import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { EncryptionError } from './encryption-error';
import { ENCRYPTION_ENV, type EncryptionKeyring } from './encryption-keys';

/** Sizes of the AES-256-GCM framing: `iv (12) | ciphertext | tag (16)`. */
export const AES_GCM = { ivBytes: 12, tagBytes: 16, algorithm: 'aes-256-gcm' } as const;

/** A ciphertext and the id of the key that made it. */
export interface Sealed {
  keyId: string;
  /** `iv | ciphertext | tag`. */
  data: Buffer;
}

/** Encrypts with the keyring's current key and a fresh random IV. */
export function seal(keyring: EncryptionKeyring, plaintext: Uint8Array): Sealed {
  const iv = randomBytes(AES_GCM.ivBytes);
  const cipher = createCipheriv(AES_GCM.algorithm, keyring.current.key, iv);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { keyId: keyring.current.id, data: Buffer.concat([iv, body, cipher.getAuthTag()]) };
}

/**
 * Decrypts and authenticates a ciphertext with the key it names. Errors name no key id — neither the
 * ciphertext's nor the configured ones (a codec server answers them to its callers): they say how many keys are
 * configured and what to do.
 *
 * @throws {@link EncryptionError} `UNKNOWN_ENCRYPTION_KEY` when that key is not configured,
 * `DECRYPTION_FAILED` when the ciphertext does not authenticate.
 */
export function open(keyring: EncryptionKeyring, sealed: Sealed): Buffer {
  const entry = keyring.keys.get(sealed.keyId);
  if (!entry) {
    const count = keyring.keys.size;
    throw new EncryptionError(
      `Data was encrypted with a key that is not among the ${count} configured key${count === 1 ? '' : 's'}. ` +
        `Put the retired key back in ${ENCRYPTION_ENV.keys} (or ${ENCRYPTION_ENV.keysFile}) after the current one: ` +
        'keep retired keys in the list until nothing encrypted with them is read.',
      'UNKNOWN_ENCRYPTION_KEY',
    );
  }
  const { data } = sealed;
  if (data.length < AES_GCM.ivBytes + AES_GCM.tagBytes) {
    throw new EncryptionError('A ciphertext is truncated.', 'DECRYPTION_FAILED');
  }
  try {
    const decipher = createDecipheriv(AES_GCM.algorithm, entry.key, data.subarray(0, AES_GCM.ivBytes));
    decipher.setAuthTag(data.subarray(data.length - AES_GCM.tagBytes));
    return Buffer.concat([
      decipher.update(data.subarray(AES_GCM.ivBytes, data.length - AES_GCM.tagBytes)),
      decipher.final(),
    ]);
  } catch (error) {
    throw new EncryptionError(
      'A ciphertext does not authenticate: it was altered, or a configured key has the id of the key that made it.',
      'DECRYPTION_FAILED',
      { cause: error },
    );
  }
}
