import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { open, seal } from './aes-gcm';
import type { EncryptionKeyring } from './encryption-keys';

/** Metadata of an encrypted payload (the names Temporal's samples and codec servers use). */
export const ENCRYPTED_PAYLOAD = {
  /** `encoding` of an encrypted payload. */
  encoding: 'binary/encrypted',
  /** Metadata key holding the id of the key that encrypted the payload. */
  keyIdKey: 'encryption-key-id',
} as const;

const ProtoPayload = temporal.api.common.v1.Payload;
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/**
 * A Temporal payload codec that encrypts every payload with AES-256-GCM (random 12-byte IV, the key id in
 * the payload's metadata). Encodes with the keyring's current key; decodes with whichever configured key the
 * payload names, so payloads written before a key rotation stay readable. Payloads that are not encrypted
 * (written before encryption was turned on) pass through unchanged.
 *
 * @example
 * ```ts
 * const client = new Client({ connection, dataConverter: { payloadCodecs: [new EncryptionCodec(keyring)] } });
 * ```
 */
export class EncryptionCodec implements PayloadCodec {
  constructor(private readonly keyring: EncryptionKeyring) {}

  /** Encrypts each payload (the whole payload, metadata included, as protobuf bytes). */
  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const { keyId, data } = seal(this.keyring, ProtoPayload.encode(payload).finish());
      return {
        metadata: {
          encoding: utf8.encode(ENCRYPTED_PAYLOAD.encoding),
          [ENCRYPTED_PAYLOAD.keyIdKey]: utf8.encode(keyId),
        },
        data,
      };
    });
  }

  /**
   * Decrypts each encrypted payload; others pass through.
   *
   * @throws {@link EncryptionError} `UNKNOWN_ENCRYPTION_KEY` or `DECRYPTION_FAILED`.
   */
  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (!isEncryptedPayload(payload)) return payload;
      const keyId = fromUtf8.decode(payload.metadata?.[ENCRYPTED_PAYLOAD.keyIdKey] ?? new Uint8Array());
      const plain = open(this.keyring, { keyId, data: Buffer.from(payload.data ?? new Uint8Array()) });
      return ProtoPayload.decode(plain);
    });
  }
}

/** Whether a payload is one {@link EncryptionCodec} encrypted. */
export function isEncryptedPayload(payload: Payload): boolean {
  const encoding = payload.metadata?.encoding;
  return encoding !== undefined && fromUtf8.decode(encoding) === ENCRYPTED_PAYLOAD.encoding;
}

/**
 * A data converter that encrypts with the keyring, after any codecs `base` already has (undefined keyring:
 * `base` unchanged). Clients and workers of one namespace must use the same keys.
 *
 * @example
 * ```ts
 * const client = new Client({ connection, namespace, dataConverter: encryptedDataConverter(keyring) });
 * ```
 */
export function encryptedDataConverter(
  keyring: EncryptionKeyring | undefined,
  base: DataConverter = {},
): DataConverter | undefined {
  if (!keyring) return Object.keys(base).length > 0 ? base : undefined;
  return { ...base, payloadCodecs: [...(base.payloadCodecs ?? []), new EncryptionCodec(keyring)] };
}
