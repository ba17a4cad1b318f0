import { serializeFailure, serializeResult } from '../stores/idempotency/idempotency-record';
import type {
  BeginOptions,
  BeginOutcome,
  FinishOptions,
  IdempotencyStore,
  InsertOutcome,
  LookupOutcome,
  StoredFailure,
  TakeOverOptions,
} from '../stores/idempotency/idempotency-store';
import type { EncryptionKeyring } from './encryption-keys';
import { isSealedText, openText, sealText } from './sealed-text';

/** The JSON a sealed result or failure detail is stored as: `{ "$sealed": "dtenc:v1:…" }`. */
const SEALED_FIELD = '$sealed';

/** Message of a stored failure whose real message and hint are sealed in its details. */
export const SEALED_FAILURE_MESSAGE = 'The stored failure is encrypted.';

/**
 * An idempotency store whose stored results and failures are encrypted with the keyring (the failure's
 * `code` stays readable; its message, hint and details are sealed). Keys, fingerprints (SHA-256 of the
 * arguments), owners and leases stay as they are. Records written before encryption was turned on, or with
 * a key since rotated out of first place, are still read.
 *
 * @example
 * ```ts
 * const store = new EncryptedIdempotencyStore(createIdempotencyStore(), keyring);
 * ```
 */
export class EncryptedIdempotencyStore implements IdempotencyStore {
  /** {@inheritDoc IdempotencyStore.lookup} Present when the inner store has it. */
  readonly lookup?: (key: string, fingerprint: string) => Promise<LookupOutcome>;
  /** {@inheritDoc IdempotencyStore.insertIfAbsent} Seals the result; present when the inner store has it. */
  readonly insertIfAbsent?: (
    key: string,
    fingerprint: string,
    result: unknown,
    options?: FinishOptions,
  ) => Promise<InsertOutcome>;
  /** {@inheritDoc IdempotencyStore.takeOverDeadHolder} Present when the inner store has it. */
  readonly takeOverDeadHolder?: (key: string, fingerprint: string, options: TakeOverOptions) => Promise<BeginOutcome>;

  constructor(
    private readonly inner: IdempotencyStore,
    private readonly keyring: EncryptionKeyring,
  ) {
    const { lookup, insertIfAbsent } = inner;
    if (lookup !== undefined && insertIfAbsent !== undefined) {
      this.lookup = async (key, fingerprint) => this.opened(await lookup.call(inner, key, fingerprint));
      this.insertIfAbsent = async (key, fingerprint, result, options) =>
        this.opened(await insertIfAbsent.call(inner, key, fingerprint, this.sealValue(result), options));
    }
    const { takeOverDeadHolder } = inner;
    if (takeOverDeadHolder !== undefined) {
      this.takeOverDeadHolder = async (key, fingerprint, options) =>
        this.opened(await takeOverDeadHolder.call(inner, key, fingerprint, options));
    }
  }

  async begin(key: string, fingerprint: string, options: BeginOptions): Promise<BeginOutcome> {
    return this.opened(await this.inner.begin(key, fingerprint, options));
  }

  heartbeat(key: string, token: string, leaseMs?: number): Promise<boolean> {
    return this.inner.heartbeat(key, token, leaseMs);
  }

  async complete(key: string, token: string, result: unknown, options?: FinishOptions): Promise<void> {
    await this.inner.complete(key, token, this.sealValue(result), options);
  }

  async fail(key: string, token: string, error: StoredFailure, options?: FinishOptions): Promise<void> {
    const json = serializeFailure(error);
    const sealed = {
      code: error.code,
      message: SEALED_FAILURE_MESSAGE,
      details: { [SEALED_FIELD]: sealText(this.keyring, json) },
    };
    await this.inner.fail(key, token, sealed, options);
  }

  release(key: string, token: string): Promise<boolean> {
    return this.inner.release(key, token);
  }

  reap(now?: number): Promise<number> {
    return this.inner.reap(now);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** The stored answer with its result or failure opened. */
  private opened<T extends { state: string }>(outcome: T): T {
    const found = outcome as T & { result?: unknown; error?: StoredFailure };
    if (found.state === 'completed') return { ...outcome, result: this.openValue(found.result) };
    if (found.state === 'failed') return { ...outcome, error: this.openFailure(found.error!) };
    return outcome;
  }

  /** `{ "$sealed": … }` of the result's JSON; `undefined` stays `undefined`. */
  private sealValue(result: unknown): unknown {
    // serializeResult refuses what is not JSON with the store's own NOT_JSON error.
    const json = serializeResult(result);
    return json === null ? undefined : { [SEALED_FIELD]: sealText(this.keyring, json) };
  }

  private openValue(stored: unknown): unknown {
    const sealed = sealedOf(stored);
    return sealed === undefined ? stored : JSON.parse(openText(this.keyring, sealed));
  }

  private openFailure(stored: StoredFailure): StoredFailure {
    const sealed = sealedOf(stored.details);
    return sealed === undefined ? stored : (JSON.parse(openText(this.keyring, sealed)) as StoredFailure);
  }
}

function sealedOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Object.keys(value).length !== 1) return undefined;
  const sealed = (value as Record<string, unknown>)[SEALED_FIELD];
  return isSealedText(sealed) ? sealed : undefined;
}
