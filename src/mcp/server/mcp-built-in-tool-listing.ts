import type { Tool as McpToolListing } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/**
 * The `tools/list` entry of one of the server's own tools (agent runs, approvals): the zod input schema as JSON
 * Schema, never destructive, idempotent when read-only, run inline (no task support). `openWorld`: whether it
 * reaches beyond the server (starting a run does; listing approvals does not). `output`: the zod schema of the
 * structured content, listed as the tool's output schema.
 */
export function builtInToolListing(
  name: string,
  description: string,
  schema: z.ZodType,
  hints: { readOnly: boolean; openWorld: boolean },
  output?: z.ZodType,
): McpToolListing {
  const inputSchema = withoutDialect(z.toJSONSchema(schema) as Record<string, unknown>);
  const outputSchema = output ? withoutDialect(z.toJSONSchema(output) as Record<string, unknown>) : undefined;
  return {
    name,
    description,
    inputSchema: { type: 'object', ...inputSchema },
    ...(outputSchema ? { outputSchema: { type: 'object', ...outputSchema } } : {}),
    annotations: {
      readOnlyHint: hints.readOnly,
      destructiveHint: false,
      idempotentHint: hints.readOnly,
      openWorldHint: hints.openWorld,
    },
    execution: { taskSupport: 'forbidden' },
  };
}

function withoutDialect(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _drop, ...rest } = schema;
  return rest;
}
