import { DurableToolsError } from '../contract/durable-tools-error';

/** Codes of {@link EncryptionError}. */
export type EncryptionErrorCode =
  /** The key configuration (environment, keys file or options) is malformed: says which entry and why. */
  | 'INVALID_ENCRYPTION_KEYS'
  /** A ciphertext names a key id that is not configured (a retired key was removed too early). */
  | 'UNKNOWN_ENCRYPTION_KEY'
  /** A ciphertext does not decrypt: tampered with, truncated, or encrypted with another key of the same id. */
  | 'DECRYPTION_FAILED';

/**
 * A failure of payload or store encryption: bad key configuration, a ciphertext whose key is not
 * configured, or a ciphertext that does not authenticate. Never carries key material or plaintext.
 */
export class EncryptionError extends DurableToolsError<EncryptionErrorCode> {
  override readonly name = 'EncryptionError';
}
