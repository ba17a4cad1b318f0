import type { StoredPayload, TranscriptStore } from './transcript-store';
import type { ToolBudget } from '../../contract/tool-budget';
import {
  argumentsHandle,
  isStoredArgumentsReference,
  isStoredOutputReference,
  outputHandle,
  READ_STORED_OUTPUT_TOOL,
  type StoredOutputReference,
} from '../../contract/claim-check-reference';
import { approxTokens, formatBytes, PAYLOAD_LIMITS, safeSlice } from '../../contract/payload-limits';
import { DurableToolsError } from '../../contract/durable-tools-error';

/** Where claim checks go: the worker's transcript store. */
export type PayloadStore = Pick<TranscriptStore, 'putPayload' | 'getPayload'>;

/** What {@link boundToolOutput} needs to know about the call. */
export interface OutputBudgetContext {
  budget: ToolBudget;
  idempotencyKey: string;
  /** The run that owns the output (`ToolContext.runKey`): only this run may read it back. */
  runId: string;
  /** The tool has an undo tool: keep a full copy of any output a compensation cannot carry inline. */
  compensable: boolean;
  /** Expiry of a stored output (epoch ms; a long call's `resultRetention`); default: the store's retention. */
  expiresAt?: number;
}

/**
 * Keeps a tool output within the tool's budget. An output whose JSON is above `maxOutputBytes` or
 * `maxOutputTokens` is stored in the transcript store under a handle derived from the idempotency key and
 * replaced by a {@link StoredOutputReference}: a preview, its size and how to page through it with
 * `read_stored_output`. Smaller outputs pass unchanged (a compensable tool's output above what a
 * compensation carries inline is also stored, so the undo tool receives it whole).
 *
 * Storing is idempotent (same handle, same text), so a retry or a replay stores nothing new.
 */
export async function boundToolOutput(
  output: unknown,
  store: PayloadStore,
  context: OutputBudgetContext,
): Promise<unknown> {
  if (isStoredOutputReference(output)) return output; // already a claim check (adopted or replayed)
  let text: string | undefined;
  try {
    text = JSON.stringify(output);
  } catch {
    return output; // not JSON at all: the payload converter will refuse it with its own error
  }
  if (text === undefined) return output;
  const bytes = Buffer.byteLength(text, 'utf8');
  const tokens = approxTokens(text);
  const { budget } = context;
  const handle = outputHandle(context.idempotencyKey);
  const payload: StoredPayload = {
    runId: context.runId,
    text,
    ...(context.expiresAt === undefined ? {} : { expiresAt: context.expiresAt }),
  };
  if (bytes <= budget.maxOutputBytes && tokens <= budget.maxOutputTokens) {
    // The workflow references outputs above compensationInlineBytes for the undo; store them (with a margin).
    if (context.compensable && bytes > PAYLOAD_LIMITS.compensationInlineBytes / 2)
      await store.putPayload(handle, payload);
    return output;
  }
  await store.putPayload(handle, payload);
  return storedOutputReference(handle, text, bytes, tokens, budget.previewChars);
}

/** The reference the model sees for a stored output. */
export function storedOutputReference(
  handle: string,
  text: string,
  bytes: number,
  tokens: number,
  previewChars: number,
): StoredOutputReference {
  const preview = safeSlice(text, 0, previewChars);
  return {
    $durableTools: 'stored-output',
    handle,
    bytes,
    approxTokens: tokens,
    chars: text.length,
    preview,
    hint:
      `The output is ${formatBytes(bytes)} (~${tokens} tokens), more than this tool may put in the conversation; ` +
      `it is stored. The preview shows its first ${preview.length} of ${text.length} characters. To read on, call ` +
      `${READ_STORED_OUTPUT_TOOL} with {"handle": ${JSON.stringify(handle)}, "offset": ${preview.length}}.`,
  };
}

/** Stores the raw arguments of a compensable call so that its compensation can read them back. */
export async function storeCallArguments(
  rawArguments: unknown,
  store: PayloadStore,
  idempotencyKey: string,
  runId: string,
): Promise<void> {
  const text = typeof rawArguments === 'string' ? rawArguments : JSON.stringify(rawArguments ?? null);
  await store.putPayload(argumentsHandle(idempotencyKey), { runId, text });
}

/** Why a compensation's stored data could not be read. */
export class ClaimCheckMissingError extends DurableToolsError<'CLAIM_CHECK_MISSING'> {
  override readonly name = 'ClaimCheckMissingError';
  constructor(readonly handle: string) {
    super(
      `The stored payload "${handle}" is not in this worker's transcript store. A memory store serves only the ` +
        'worker that wrote it: use the SQLite store (one machine) or Postgres (several) for runs that store payloads.',
      'CLAIM_CHECK_MISSING',
    );
  }
}

/**
 * Replaces the claim checks in a compensation's arguments (`originalInput`, `originalOutput`) by the stored
 * payloads, so the undo tool receives what the forward call was given and returned.
 *
 * @throws {@link ClaimCheckMissingError} when a payload is not in the store (or belongs to another run).
 */
export async function resolveCompensationArguments(
  args: unknown,
  store: PayloadStore,
  runId: string,
): Promise<unknown> {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return args;
  const resolved: Record<string, unknown> = { ...(args as Record<string, unknown>) };
  for (const field of ['originalInput', 'originalOutput'] as const) {
    const value = resolved[field];
    if (!isStoredArgumentsReference(value) && !isStoredOutputReference(value)) continue;
    const stored = await store.getPayload(value.handle);
    // Only this run's payloads: a reference forged inside arguments cannot read another run's data.
    if (!stored || stored.runId !== runId) throw new ClaimCheckMissingError(value.handle);
    resolved[field] = JSON.parse(stored.text) as unknown;
  }
  return resolved;
}
