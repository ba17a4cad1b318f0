import type { Tool as McpToolListing } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/**
 * The `tools/list` entry of one of the server's own tools (agent runs, approvals): the zod input schema as JSON
 * Schema, never destructive, idempotent when read-only, run inline (no task support). `openWorld`: whether it
 * reaches beyond the server (starting a run does; listing approvals does not).
 */
export function builtInToolListing(
  name: string,
  description: string,
  schema: z.ZodType,
  hints: { readOnly: boolean; openWorld: boolean },
): McpToolListing {
  const { $schema: _drop, ...inputSchema } = z.toJSONSchema(schema) as Record<string, unknown>;
  return {
    name,
    description,
    inputSchema: { type: 'object', ...inputSchema },
    annotations: {
      readOnlyHint: hints.readOnly,
      destructiveHint: false,
      idempotentHint: hints.readOnly,
      openWorldHint: hints.openWorld,
    },
    execution: { taskSupport: 'forbidden' },
  };
}
