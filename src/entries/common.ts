/**
 * What both `durable-tools/client` and `durable-tools/worker` export, listed once: the error family, the
 * connection settings, payload encryption, the tool observation a run records, the payload limits, and the live
 * stream store both open. Nothing here loads a worker, SQLite or Postgres (`openStreamStore` loads its driver only
 * when called).
 *
 * Not an entry of its own: `/client` and `/worker` re-export it.
 *
 * @packageDocumentation
 */
export * from './error-family';

// Connection settings (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TLS, API key)
export { connectionSettingsFromEnv, type ConnectionSettings } from '../client/connection-settings';

// Payload encryption (docs/security.md, "Encryption")
export { encryptedDataConverter } from '../encryption/encryption-codec';
export { parseEncryptionKeys, encryptionKeysFromEnv, type EncryptionKeyring } from '../encryption/encryption-keys';

// What a tool call gave the run, and the payload limits both sides keep
export type { ToolObservation } from '../contract/activity-protocol';
export { PAYLOAD_LIMITS } from '../contract/payload-limits';

// The live stream of runs: the store workers publish to and readers read from (docs/streaming.md)
export { openStreamStore, type StreamStoreConfig } from '../stores/streams/open-stream-store';
export type { StreamStore } from '../stores/streams/stream-store';

// The authority of a run: its grant, recorded by its trusted starter, and who acted (docs/security.md)
export type { RunGrantStore } from '../stores/audit/run-grant-store';
