/**
 * The shapes that stand in for large payloads kept out of Temporal's history (claim checks). Pure data,
 * shared by the workflow and the worker.
 */

/** Name of the built-in read-only tool that pages through a stored output. */
export const READ_STORED_OUTPUT_TOOL = 'read_stored_output';

/**
 * What the model (and the run state, the result, a compensation) sees instead of a tool output above the
 * tool's budget: the output is stored in the worker's transcript store under `handle`.
 */
export interface StoredOutputReference {
  $durableTools: 'stored-output';
  /** Pass to `read_stored_output` to read the output page by page. */
  handle: string;
  /** UTF-8 size of the output's JSON text. */
  bytes: number;
  /** Rough token count of the output's JSON text. */
  approxTokens: number;
  /** Characters of the JSON text (what `offset` counts). */
  chars: number;
  /** The first characters of the output's JSON text. */
  preview: string;
  hint: string;
}

/**
 * Raw arguments of a compensable call kept out of history: the forward call stored them under `handle`,
 * and the compensation's activity reads them back before calling the undo tool.
 */
export interface StoredArgumentsReference {
  $durableTools: 'stored-arguments';
  handle: string;
  bytes: number;
}

/** What a model turn carries instead of arguments too large to send through Temporal. */
export interface OversizedArgumentsMarker {
  $durableTools: 'oversized-arguments';
  bytes: number;
  preview: string;
}

/** An inline value shortened by the engine (in the transcript, the run state or the result). */
export interface ShortenedValue {
  $durableTools: 'shortened';
  bytes: number;
  preview: string;
  note?: string;
}

/** Handle of a call's stored output, derived from its idempotency key. */
export function outputHandle(idempotencyKey: string): string {
  return `out:${idempotencyKey}`;
}

/** Handle of a call's stored arguments, derived from its idempotency key. */
export function argumentsHandle(idempotencyKey: string): string {
  return `args:${idempotencyKey}`;
}

export function isStoredOutputReference(value: unknown): value is StoredOutputReference {
  return tagOf(value) === 'stored-output' && typeof (value as { handle?: unknown }).handle === 'string';
}

export function isStoredArgumentsReference(value: unknown): value is StoredArgumentsReference {
  return tagOf(value) === 'stored-arguments' && typeof (value as { handle?: unknown }).handle === 'string';
}

export function isOversizedArguments(value: unknown): value is OversizedArgumentsMarker {
  return tagOf(value) === 'oversized-arguments';
}

function tagOf(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  return Object.prototype.hasOwnProperty.call(value, '$durableTools')
    ? (value as { $durableTools?: unknown }).$durableTools
    : undefined;
}
