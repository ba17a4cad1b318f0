import type { TranscriptMessage } from './model-types';

/**
 * A checksum of a model request's transcript delta (its position and messages), the same in the workflow and on
 * the worker: a fused step that chained a turn returns it, and the workflow takes that turn only when its own
 * delta has the same checksum (docs/fast-path.md, "Chained turns"). Two 32-bit FNV-1a hashes of the JSON text
 * with different offsets, as 16 hex digits. Not a security measure: both sides are the engine's own code.
 */
export function transcriptChecksum(fromIndex: number, messages: readonly TranscriptMessage[]): string {
  const text = JSON.stringify({ fromIndex, messages });
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193) >>> 0;
    b = Math.imul(b ^ code, 0x01000193 + 0x3a8) >>> 0;
  }
  return a.toString(16).padStart(8, '0') + b.toString(16).padStart(8, '0');
}
