/**
 * Progressive disclosure of the tool catalog, and fencing of untrusted descriptions. Pure functions over
 * the JSON catalog: the workflow (which answers `describe_tools` deterministically) and the model activity
 * (which builds what the model sees) share them, so both sides agree on the view of each run.
 */
import type { ToolCatalogEntry } from './tool-catalog-entry';
import { DEFAULT_TOOL_RETRY } from './tool-defaults';

/**
 * Above this budget the model sees only names and one-line descriptions, plus `describe_tools`. Either
 * limit triggers it; set a limit to `Infinity` to turn that trigger off.
 */
export interface ToolDisclosureBudget {
  /** Most tools shown with full schemas (default 30). */
  maxTools?: number;
  /** Most schema tokens (estimated: JSON characters / 4) shown at once (default 8,000). */
  maxSchemaTokens?: number;
}

/** Defaults and bounds of progressive disclosure. */
export const TOOL_DISCLOSURE = {
  maxTools: 30,
  maxSchemaTokens: 8_000,
  /** Rough characters per token of JSON Schema text. */
  charsPerToken: 4,
  /** Most tools one `describe_tools` call returns. */
  maxNamesPerCall: 20,
  /** Longest one-line description in the summary view. */
  oneLineMaxChars: 160,
  /** Longest untrusted description shown at all. */
  untrustedMaxChars: 2_000,
} as const;

/** The name of the built-in read-only tool that returns full schemas. */
export const DESCRIBE_TOOLS_TOOL = 'describe_tools';

/** Estimated tokens of the catalog as the model would see it in full. */
export function estimateCatalogTokens(entries: readonly ToolCatalogEntry[]): number {
  let chars = 0;
  for (const entry of entries)
    chars += entry.name.length + entry.description.length + JSON.stringify(entry.inputSchema).length;
  return Math.ceil(chars / TOOL_DISCLOSURE.charsPerToken);
}

/**
 * Whether the run's visible catalog is over its budget, so the model gets the summary view. Never when a
 * tool of the catalog is itself called `describe_tools` (the built-in could not be told apart).
 */
export function exceedsCatalogBudget(entries: readonly ToolCatalogEntry[], budget: ToolDisclosureBudget = {}): boolean {
  if (entries.some((entry) => entry.name === DESCRIBE_TOOLS_TOOL)) return false;
  const maxTools = budget.maxTools ?? TOOL_DISCLOSURE.maxTools;
  const maxTokens = budget.maxSchemaTokens ?? TOOL_DISCLOSURE.maxSchemaTokens;
  return entries.length > maxTools || estimateCatalogTokens(entries) > maxTokens;
}

/**
 * The catalog as the model sees it. `full`: every schema, untrusted descriptions fenced. `summary`: names
 * and one-line descriptions with an open schema, plus `describe_tools` (first). The engine still validates
 * every call against the full schema.
 */
export function modelFacingCatalog(entries: readonly ToolCatalogEntry[], view: 'full' | 'summary'): ToolCatalogEntry[] {
  if (view === 'full') return entries.map((entry) => ({ ...entry, description: modelFacingDescription(entry) }));
  return [
    describeToolsEntry(),
    ...entries.map((entry) => ({
      ...entry,
      description: `${modelFacingDescription(entry, TOOL_DISCLOSURE.oneLineMaxChars)} Parameters: call ${DESCRIBE_TOOLS_TOOL} first.`,
      inputSchema: { type: 'object', additionalProperties: true },
    })),
  ];
}

/** The catalog entry of the built-in `describe_tools` tool. */
export function describeToolsEntry(): ToolCatalogEntry {
  return {
    name: DESCRIBE_TOOLS_TOOL,
    description:
      'Returns the full description and JSON Schema of the parameters of the named tools. Call it before using a ' +
      `tool whose parameters you do not know (at most ${TOOL_DISCLOSURE.maxNamesPerCall} names per call). Read-only.`,
    inputSchema: {
      type: 'object',
      properties: {
        names: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: TOOL_DISCLOSURE.maxNamesPerCall },
      },
      required: ['names'],
      additionalProperties: false,
    },
    outputSchema: { type: 'object' },
    effect: 'read-only',
    idempotent: true,
    approval: 'never',
    retry: { ...DEFAULT_TOOL_RETRY, maximumAttempts: 1 },
    timeoutMs: 1_000,
  };
}

/** What `describe_tools` answers: the schemas, or an error the model can correct. */
export type DescribeToolsAnswer =
  | {
      ok: true;
      output: { tools: Array<{ name: string; description: string; inputSchema: unknown }>; unknown: string[] };
    }
  | { ok: false; message: string; hint: string };

/**
 * Answers a `describe_tools` call from the run's visible catalog (hidden tools stay hidden: they are
 * reported as unknown). The arguments are the model's raw, untrusted input.
 */
export function answerDescribeTools(rawArguments: unknown, visible: readonly ToolCatalogEntry[]): DescribeToolsAnswer {
  let args = rawArguments;
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      return invalid('The arguments are not valid JSON.');
    }
  }
  const names = (args as { names?: unknown } | null)?.names;
  if (!Array.isArray(names) || names.length === 0 || !names.every((name) => typeof name === 'string')) {
    return invalid('`names` must be a non-empty array of tool names.');
  }
  if (names.length > TOOL_DISCLOSURE.maxNamesPerCall) {
    return invalid(`At most ${TOOL_DISCLOSURE.maxNamesPerCall} names per call; got ${names.length}.`);
  }
  const byName = new Map(visible.map((entry) => [entry.name, entry]));
  const tools: Array<{ name: string; description: string; inputSchema: unknown }> = [];
  const unknown: string[] = [];
  for (const name of new Set(names as string[])) {
    const entry = byName.get(name);
    if (entry) tools.push({ name, description: modelFacingDescription(entry), inputSchema: entry.inputSchema });
    else unknown.push(name.slice(0, 64));
  }
  return { ok: true, output: { tools, unknown } };
}

function invalid(message: string): DescribeToolsAnswer {
  return {
    ok: false,
    message,
    hint: `Call ${DESCRIBE_TOOLS_TOOL} with {"names": ["tool_a", "tool_b"]} (1 to ${TOOL_DISCLOSURE.maxNamesPerCall} names).`,
  };
}

/**
 * The description the model reads: trusted ones as written (cut to `maxChars` on one line when given),
 * untrusted ones fenced as data.
 */
export function modelFacingDescription(entry: ToolCatalogEntry, maxChars?: number): string {
  const text = maxChars !== undefined ? oneLine(entry.description, maxChars) : entry.description;
  return entry.trust === 'untrusted' ? fenceUntrusted(text) : text;
}

/** The first line (or sentence) of a description, at most `maxChars` characters. */
export function oneLine(text: string, maxChars: number = TOOL_DISCLOSURE.oneLineMaxChars): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const sentence = /^(.+?[.!?])(\s|$)/.exec(flat)?.[1] ?? flat;
  return sentence.length > maxChars ? `${sentence.slice(0, maxChars - 1)}…` : sentence;
}

/**
 * Wraps third-party text so the model reads it as data: inside `<untrusted-tool-description>` tags, with
 * any tag of that name inside the text neutralised (a description cannot close the fence early) and the
 * length bounded.
 */
export function fenceUntrusted(text: string): string {
  const bounded =
    text.length > TOOL_DISCLOSURE.untrustedMaxChars ? `${text.slice(0, TOOL_DISCLOSURE.untrustedMaxChars - 1)}…` : text;
  const neutral = bounded.replace(/<\s*\/?\s*untrusted-tool-description[^>]*>/gi, '[tag removed]');
  return `<untrusted-tool-description>${neutral}</untrusted-tool-description>`;
}
