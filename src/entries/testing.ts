/**
 * `durable-tools/testing`: what tests of tools and agents need — a real local Temporal dev server, the
 * offline scripted model and the check of its turn format, a seeded random source for predictable retry delays,
 * and in-memory stores.
 *
 * @packageDocumentation
 */
export { startDevServer, type DevServer, type DevServerOptions } from '../dev-server/dev-server';
export { TemporalCliError, type TemporalCliErrorCode } from '../dev-server/temporal-cli-error';
export { scriptedModel, type ScriptedTurn } from '../model/scripted-model';
// The scripted turn format, checked (`run --script` uses it; docs/scripted-model.md)
export {
  parseScriptedTurns,
  scriptedTurnSchema,
  ScriptedTurnsError,
  type ScriptedTurnsProblem,
} from '../model/scripted-turns';
export { createSeededRandom } from '../failures/seeded-random';
export { MemoryIdempotencyStore } from '../stores/idempotency/memory-idempotency-store';
export { MemoryTranscriptStore } from '../stores/transcripts/memory-transcript-store';
export { MemoryAuditStore } from '../stores/audit/memory-audit-store';
export { MemoryStreamStore } from '../stores/streams/memory-stream-store';
