import type { TranscriptMessage } from '../contract/model-types';
import type { StoredPayload, TranscriptStore } from '../stores/transcripts/transcript-store';
import type { EncryptionKeyring } from './encryption-keys';
import { isSealedText, openText, sealText } from './sealed-text';

/** How a sealed message sits in the inner store: not a message a model or the engine ever writes. */
interface SealedMessage {
  role: 'sealed';
  sealed: string;
}

/**
 * A transcript store whose messages and stored payloads (claim checks, compensation arguments) are
 * encrypted with the keyring. Run keys, positions, handles and the owning run id stay as they are, so the
 * inner store's positional writes and run checks work unchanged. Plaintext written before encryption was
 * turned on is still read.
 *
 * @example
 * ```ts
 * const transcripts = new EncryptedTranscriptStore(createTranscriptStore(), keyring);
 * ```
 */
export class EncryptedTranscriptStore implements TranscriptStore {
  constructor(
    private readonly inner: TranscriptStore,
    private readonly keyring: EncryptionKeyring,
  ) {}

  write(runKey: string, fromIndex: number, messages: readonly TranscriptMessage[]): Promise<boolean> {
    const sealed = messages.map((message): SealedMessage => ({
      role: 'sealed',
      sealed: sealText(this.keyring, JSON.stringify(message)),
    }));
    // The inner store keeps messages as JSON without looking inside them.
    return this.inner.write(runKey, fromIndex, sealed as unknown as TranscriptMessage[]);
  }

  async read(runKey: string): Promise<TranscriptMessage[] | undefined> {
    const stored = await this.inner.read(runKey);
    return stored?.map((message) => this.openMessage(message));
  }

  putPayload(handle: string, payload: StoredPayload): Promise<void> {
    return this.inner.putPayload(handle, {
      runId: payload.runId,
      text: sealText(this.keyring, payload.text),
      ...(payload.expiresAt !== undefined ? { expiresAt: payload.expiresAt } : {}),
    });
  }

  async getPayload(handle: string): Promise<StoredPayload | undefined> {
    const stored = await this.inner.getPayload(handle);
    if (!stored || !isSealedText(stored.text)) return stored;
    return { ...stored, text: openText(this.keyring, stored.text) };
  }

  reapPayloads(now?: number): Promise<number> {
    return this.inner.reapPayloads(now);
  }

  delete(runKey: string): Promise<void> {
    return this.inner.delete(runKey);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private openMessage(message: TranscriptMessage): TranscriptMessage {
    const candidate = message as unknown as Partial<SealedMessage>;
    if (candidate.role !== 'sealed' || !isSealedText(candidate.sealed)) return message;
    return JSON.parse(openText(this.keyring, candidate.sealed)) as TranscriptMessage;
  }
}
