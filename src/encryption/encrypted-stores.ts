import type { IdempotencyStore } from '../stores/idempotency/idempotency-store';
import type { TranscriptStore } from '../stores/transcripts/transcript-store';
import { EncryptedIdempotencyStore } from './encrypted-idempotency-store';
import { EncryptedTranscriptStore } from './encrypted-transcript-store';
import type { EncryptionKeyring } from './encryption-keys';

/** The idempotency store, encrypting its stored results when a keyring is given (as it is otherwise). */
export function withIdempotencyEncryption<S extends IdempotencyStore | undefined>(
  store: S,
  keyring: EncryptionKeyring | undefined,
): S | EncryptedIdempotencyStore {
  return store && keyring ? new EncryptedIdempotencyStore(store, keyring) : store;
}

/** The transcript store, encrypting messages and stored payloads when a keyring is given (as it is otherwise). */
export function withTranscriptEncryption(
  store: TranscriptStore,
  keyring: EncryptionKeyring | undefined,
): TranscriptStore {
  return keyring ? new EncryptedTranscriptStore(store, keyring) : store;
}
