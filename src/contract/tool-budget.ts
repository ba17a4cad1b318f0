import { PAYLOAD_LIMITS } from './payload-limits';
import { ToolDefinitionError } from './tool-definition-error';

/** Budget overrides a tool may declare in `defineTool({ budget })`. */
export interface ToolBudgetOptions {
  /** Largest output (UTF-8 bytes of its JSON) the model sees inline; above it a claim check. Default 16 KB. */
  maxOutputBytes?: number;
  /** Largest output in estimated tokens the model sees inline. Default 4,000. */
  maxOutputTokens?: number;
  /** Characters of a stored output shown as its preview. Default 2,000. */
  previewChars?: number;
  /** Largest raw arguments accepted (bytes); above it `INVALID_ARGUMENTS` "too large". Default 256 KB. */
  maxArgumentBytes?: number;
}

/** The resolved budget of a tool, as its catalog entry carries it. */
export interface ToolBudget {
  maxOutputBytes: number;
  maxOutputTokens: number;
  previewChars: number;
  maxArgumentBytes: number;
}

/** The budget of a tool that declares none. */
export const DEFAULT_TOOL_BUDGET: Readonly<ToolBudget> = Object.freeze({
  maxOutputBytes: PAYLOAD_LIMITS.toolOutputBytes,
  maxOutputTokens: PAYLOAD_LIMITS.toolOutputTokens,
  previewChars: PAYLOAD_LIMITS.previewChars,
  maxArgumentBytes: PAYLOAD_LIMITS.toolArgumentBytes,
});

const CEILINGS: Readonly<ToolBudget> = Object.freeze({
  maxOutputBytes: PAYLOAD_LIMITS.maxToolOutputBytes,
  maxOutputTokens: PAYLOAD_LIMITS.maxToolOutputBytes,
  previewChars: PAYLOAD_LIMITS.previewChars * 4,
  maxArgumentBytes: PAYLOAD_LIMITS.maxToolArgumentBytes,
});

/**
 * Resolves a tool's budget: defaults for what it leaves out, every value a positive integer no higher than
 * the engine's ceiling (which keeps every payload under Temporal's limits).
 *
 * @throws {@link ToolDefinitionError} `INVALID_BUDGET` naming the field and the allowed range.
 */
export function resolveToolBudget(toolName: string, options: ToolBudgetOptions | undefined): ToolBudget {
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw new ToolDefinitionError(`Tool "${toolName}": budget must be an object.`, 'INVALID_BUDGET');
  }
  const budget: ToolBudget = { ...DEFAULT_TOOL_BUDGET };
  for (const field of Object.keys(DEFAULT_TOOL_BUDGET) as Array<keyof ToolBudget>) {
    const value: unknown = options?.[field];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > CEILINGS[field]) {
      throw new ToolDefinitionError(
        `Tool "${toolName}": budget.${field} must be an integer from 1 to ${CEILINGS[field]}, not ${String(value)}.`,
        'INVALID_BUDGET',
      );
    }
    budget[field] = value;
  }
  for (const field of Object.keys(options ?? {})) {
    if (!(field in DEFAULT_TOOL_BUDGET)) {
      throw new ToolDefinitionError(
        `Tool "${toolName}": unknown budget field "${field}" (known: ${Object.keys(DEFAULT_TOOL_BUDGET).join(', ')}).`,
        'INVALID_BUDGET',
      );
    }
  }
  if (budget.previewChars > budget.maxOutputBytes) budget.previewChars = budget.maxOutputBytes;
  return budget;
}

/** A catalog entry's budget; entries recorded before budgets existed get the defaults. */
export function budgetOf(entry: { budget?: ToolBudget }): ToolBudget {
  return entry.budget ?? DEFAULT_TOOL_BUDGET;
}
