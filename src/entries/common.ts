/**
 * What both `durable-tools/client` and `durable-tools/worker` export, listed once: the error base class, the
 * connection settings, payload encryption, client tracing, and the shapes both sides read (model settings, the
 * scripted turn format, tool observations and progress), and the live stream store both open. Nothing here loads a
 * worker, SQLite or Postgres (`openStreamStore` loads its driver only when called).
 *
 * Not an entry of its own: `/client` and `/worker` re-export it (and the root re-exports them).
 *
 * @packageDocumentation
 */

// The error base class of every error durable-tools throws
export { DurableToolsError } from '../contract/durable-tools-error';

// Connection settings
export { connectionSettingsFromEnv, connectionOptions, type ConnectionSettings } from '../client/connection-settings';

// Payload encryption (docs/security.md, "Encryption")
export { EncryptionCodec, encryptedDataConverter } from '../encryption/encryption-codec';
export {
  parseEncryptionKeys,
  encryptionKeysFromEnv,
  type EncryptionKey,
  type EncryptionKeyring,
} from '../encryption/encryption-keys';
export { EncryptionError, type EncryptionErrorCode } from '../encryption/encryption-error';

// Tracing of client calls (docs/telemetry.md)
export { tracingClientInterceptors } from '../telemetry/client-tracing';

// Shapes both sides read: model settings, scripted turns, tool observations and progress, payload limits
export type { ModelSettings } from '../contract/model-types';
export type { ScriptedTurn, ScriptedModelSettings } from '../model/scripted-model';
export {
  TOOL_ERROR_CODES,
  type ToolErrorCode,
  type ToolObservation,
  type ToolErrorObservation,
  type ToolSuccessObservation,
} from '../contract/activity-protocol';
export type { ToolProgress } from '../contract/tool-progress';
export { PAYLOAD_LIMITS } from '../contract/payload-limits';

// The live stream of runs: the store workers publish to and readers read from (docs/streaming.md)
export {
  openStreamStore,
  streamStoreConfigFromEnv,
  STREAM_STORE_ENV,
  type StreamStoreConfig,
} from '../stores/streams/open-stream-store';
export type { StreamStore } from '../stores/streams/stream-store';
export type { StreamRetentionOptions } from '../stores/streams/stream-retention';
export { StreamStoreError, type StreamStoreErrorCode } from '../stores/streams/stream-store-error';
export type {
  AgentStreamEvent,
  AgentStreamEventData,
  AgentStreamEventType,
  StreamSegment,
} from '../stores/streams/stream-events';
