/**
 * The payload and context budget of durable-tools. Pure data and arithmetic, safe in workflow code.
 *
 * Temporal refuses any single payload (an activity's input or result, a continue-as-new input, a query
 * answer, a workflow result) over ~2 MB — and when the payload is a command of the workflow it terminates
 * the workflow — and warns from 256 KB. Every number below keeps what the engine sends well under that,
 * whatever a model or a tool produces. See docs/limits.md.
 */
export const PAYLOAD_LIMITS = {
  /** Temporal's hard limit of one payload (the server's default `limit.blobSize.error`). */
  temporalPayloadErrorBytes: 2 * 1024 * 1024,
  /** Temporal's default warning threshold (`limit.blobSize.warn`). */
  temporalPayloadWarnBytes: 256 * 1024,

  /** Default budget of one tool output the model sees inline; above it the output is a claim check. */
  toolOutputBytes: 16 * 1024,
  /** Default budget of one tool output in (estimated) tokens. */
  toolOutputTokens: 4_000,
  /** Characters of a claim-checked output shown to the model as its preview (default). */
  previewChars: 2_000,
  /** Highest per-tool output budget a tool may declare. */
  maxToolOutputBytes: 64 * 1024,

  /** Default limit of one call's raw arguments (as the model sent them); above it: INVALID_ARGUMENTS. */
  toolArgumentBytes: 256 * 1024,
  /** Highest per-tool argument limit: an activity input must stay well under the hard limit. */
  maxToolArgumentBytes: 1536 * 1024,
  /** All arguments of one model turn together; calls beyond it are refused as too large. */
  modelTurnArgumentBytes: 1792 * 1024,
  /** Text of one model turn. */
  modelTurnTextChars: 64 * 1024,
  /** Tool calls run per model turn; the rest are refused. */
  maxToolCallsPerTurn: 32,

  /** Characters of a call's arguments kept in the transcript, the run state and the result. */
  recordedArgumentChars: 2_000,
  /** Characters of an error's message or hint. */
  errorTextChars: 2_000,
  /** Field-level problems kept in one error observation. */
  errorIssues: 20,
  /** Inline observations of one turn in the transcript; later ones of the turn are shortened. */
  turnObservationBytes: 512 * 1024,
  /** A generation continues as new when its transcript passes this (bounds a full resend to the model). */
  generationTranscriptBytes: 768 * 1024,
  /** A compensation carries arguments or an output inline up to this; above it a stored reference. */
  compensationInlineBytes: 4 * 1024,
  /** The query answer and the workflow result; older steps are compacted beyond it. */
  runViewBytes: 512 * 1024,
  /** Everything a client passes to start a run (goal, model settings, options). */
  runInputBytes: 256 * 1024,
} as const;

/** UTF-8 length of a string, without `Buffer` or `TextEncoder` (usable in workflow code). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i += 1;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * A rough token count of a text: ~4 ASCII characters per token, one token per other character (CJK text,
 * emoji). Good enough to keep a model's context in budget; not a tokenizer.
 */
export function approxTokens(text: string): number {
  let ascii = 0;
  let other = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) ascii += 1;
    else if (code < 0xdc00 || code > 0xdfff) other += 1; // a surrogate pair counts once
  }
  return Math.ceil(ascii / 4) + other;
}

/**
 * The JSON text of a value as the payload converter would write it, or undefined when it has none
 * (cycles, nesting too deep for `JSON.stringify`, bigint). Strings count as they are (raw model arguments).
 */
export function jsonTextOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return undefined;
  }
}

/** UTF-8 size of a value's JSON text; `Infinity` when it cannot be serialized at all. */
export function jsonByteLength(value: unknown): number {
  const text = jsonTextOf(value);
  return text === undefined ? Number.POSITIVE_INFINITY : utf8Length(text);
}

/** `text[start, end)` moved inwards so that no surrogate pair is cut in half. */
export function safeSlice(text: string, start: number, end: number): string {
  let from = Math.max(0, Math.min(start, text.length));
  let to = Math.max(from, Math.min(end, text.length));
  if (from > 0 && isLowSurrogate(text.charCodeAt(from)) && isHighSurrogate(text.charCodeAt(from - 1))) from += 1;
  if (to < text.length && to > from && isHighSurrogate(text.charCodeAt(to - 1)) && isLowSurrogate(text.charCodeAt(to)))
    to -= 1;
  return text.slice(from, Math.max(from, to));
}

/** The text cut to `maxChars` characters with a note of how much was left out. */
export function truncateText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const note = `… [${text.length - maxChars} more characters]`;
  return safeSlice(text, 0, Math.max(0, maxChars - note.length)) + note;
}

/** Human size: `150 KB`, `1.5 MB`. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return 'too large to measure';
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
