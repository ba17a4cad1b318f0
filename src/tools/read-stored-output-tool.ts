import { z } from 'zod';
import { defineTool, type Tool } from './define-tool';
import { PermanentToolError } from '../failures/tool-errors';
import { createToolRegistry, type ToolRegistry } from './tool-registry';
import type { PayloadStore } from '../stores/transcripts/claim-check';
import { READ_STORED_OUTPUT_TOOL } from '../contract/claim-check-reference';
import { PAYLOAD_LIMITS, safeSlice } from '../contract/payload-limits';

/** Page sizes of `read_stored_output`, in characters of the stored JSON text. */
export const READ_STORED_OUTPUT_PAGE = {
  defaultChars: 6_000,
  /** At most 6 bytes per character once JSON-escaped: a page stays far below the tool's own budget. */
  maxChars: 8_000,
} as const;

const input = z.object({
  handle: z.string().min(1).max(1_000).describe('The handle of a stored output, from its preview.'),
  offset: z.number().int().min(0).optional().describe('Character to start at (default 0).'),
  maxChars: z
    .number()
    .int()
    .min(1)
    .max(READ_STORED_OUTPUT_PAGE.maxChars)
    .optional()
    .describe(`Characters to read (default ${READ_STORED_OUTPUT_PAGE.defaultChars}).`),
});

const output = z.object({
  handle: z.string(),
  offset: z.number(),
  text: z.string(),
  totalChars: z.number(),
  /** Where the next page starts; null at the end. */
  nextOffset: z.number().nullable(),
});

/**
 * The built-in read-only tool that pages through a tool output stored as a claim check. It reads the
 * worker's transcript store, so with several workers that store must be shared (Postgres); a memory store
 * only answers on the worker that stored the output. A run can read only its own outputs (stored under its
 * `runKey`), not those of an earlier run with the same workflow id.
 *
 * `createWorker` registers it; a worker built by hand adds it to its registry.
 */
export function createReadStoredOutputTool(store: PayloadStore): Tool {
  return defineTool({
    name: READ_STORED_OUTPUT_TOOL,
    description:
      'Reads a page of a tool output that was too large for the conversation and was stored. Use it with the ' +
      '"handle" from a stored output\'s preview and the "offset" where you want to go on. Do not use it for anything else.',
    input,
    output,
    effect: 'read-only',
    idempotent: true,
    retry: { maximumAttempts: 3 },
    budget: {
      maxOutputBytes: PAYLOAD_LIMITS.maxToolOutputBytes,
      maxOutputTokens: PAYLOAD_LIMITS.maxToolOutputBytes,
    },
  }).implement(async ({ handle, offset = 0, maxChars = READ_STORED_OUTPUT_PAGE.defaultChars }, ctx) => {
    const stored = await store.getPayload(handle);
    if (!stored || stored.runId !== (ctx.runKey ?? ctx.runId) || !handle.startsWith('out:')) {
      throw new PermanentToolError(`There is no stored output "${handle}" in this run (or it expired).`, {
        code: 'NOT_FOUND',
        hint: 'Use the exact handle shown in a stored output of this run; an expired output is gone: call the tool that produced it again if you still need it.',
      });
    }
    const start = Math.min(offset, stored.text.length);
    const text = safeSlice(stored.text, start, start + maxChars);
    const end = start + text.length;
    return {
      handle,
      offset: start,
      text,
      totalChars: stored.text.length,
      nextOffset: end < stored.text.length ? end : null,
    };
  }) as unknown as Tool;
}

/** The registry plus `read_stored_output` reading `store` (unchanged when it already has the tool). */
export function withReadStoredOutputTool(registry: ToolRegistry, store: PayloadStore): ToolRegistry {
  if (registry.has(READ_STORED_OUTPUT_TOOL)) return registry;
  return createToolRegistry([...registry.list(), createReadStoredOutputTool(store)]);
}
