import type { TranscriptMessage } from './model-types';

/*
 * Read once: in Temporal's workflow sandbox (a vm context) every read of a global such as `Math` goes through the
 * context's property interceptor, ~0.1 µs each; inside the loop below that was ~50 µs per checksum of 250 chars.
 */
const { imul } = Math;

/**
 * A checksum of a model request's transcript delta (its position and messages), the same in the workflow and on
 * the worker: a fused step that chained a turn returns it, and the workflow takes that turn only when its own
 * delta has the same checksum (docs/fast-path.md, "Chained turns"). Two 32-bit FNV-1a hashes of the JSON text
 * with different offsets, as 16 hex digits. Not a security measure: both sides are the engine's own code.
 *
 * The hashes are kept as int32 in the loop (the bits an unsigned value would have; `imul` and `^` read only
 * those), so V8's interpreter allocates no number per character before the function is optimised.
 */
export function transcriptChecksum(fromIndex: number, messages: readonly TranscriptMessage[]): string {
  const text = JSON.stringify({ fromIndex, messages });
  let a = 0x811c9dc5 | 0;
  let b = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    a = imul(a ^ code, 0x01000193);
    b = imul(b ^ code, 0x01000193 + 0x3a8);
  }
  return hex8(a) + hex8(b);
}

function hex8(hash: number): string {
  return (hash >>> 0).toString(16).padStart(8, '0');
}
