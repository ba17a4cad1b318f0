/**
 * The built-in `fetch_tool_result` tool of runs whose catalog has a fetch-later tool (`asyncJob.fetchLater`):
 * such a call runs in the background and the model gets a handle at once; this tool returns the result when
 * the call is done, or its status. Pure (no Node built-ins): the workflow answers it, the model activity shows it.
 */
import { DEFAULT_TOOL_RETRY } from './tool-defaults';
import type { ToolCatalogEntry } from './tool-catalog-entry';

/** Name of the built-in tool that fetches a background call's result. */
export const FETCH_TOOL_RESULT_TOOL = 'fetch_tool_result';

/** Limits of `fetch_tool_result`. */
export const FETCH_TOOL_RESULT_LIMITS = {
  /** Longest a single fetch waits for the call to finish. */
  maxWaitSeconds: 300,
} as const;

/** What the model sees instead of the output of a call started in the background (or still running). */
export interface BackgroundCallStatus {
  $durableTools: 'background-call';
  handle: string;
  tool: string;
  status: 'running';
  hint: string;
}

/** Handle of the background call of step `stepId`. */
export function backgroundHandle(stepId: number): string {
  return `bg_${stepId}`;
}

/** Whether the run offers fetch-later: a visible tool allows it and no tool of its own takes the name. */
export function offersFetchLater(visible: readonly ToolCatalogEntry[]): boolean {
  return (
    visible.some((entry) => entry.asyncJob?.fetchLater === true) &&
    !visible.some((entry) => entry.name === FETCH_TOOL_RESULT_TOOL)
  );
}

/** The tools the model sees, plus `fetch_tool_result` when the run offers fetch-later (else unchanged). */
export function withFetchToolResult(
  visible: readonly ToolCatalogEntry[],
  shown: ToolCatalogEntry[],
): ToolCatalogEntry[] {
  return offersFetchLater(visible) ? [...shown, fetchToolResultEntry()] : shown;
}

/** The catalog entry of `fetch_tool_result`. */
export function fetchToolResultEntry(): ToolCatalogEntry {
  return {
    name: FETCH_TOOL_RESULT_TOOL,
    description:
      'Returns the result of a tool call that runs in the background, given the "handle" its call returned. ' +
      'While it still runs, says so; "waitSeconds" waits up to that long for it first. Do other work in between ' +
      'rather than waiting. Read-only.',
    inputSchema: {
      type: 'object',
      properties: {
        handle: { type: 'string', minLength: 1, maxLength: 100 },
        waitSeconds: { type: 'number', minimum: 0, maximum: FETCH_TOOL_RESULT_LIMITS.maxWaitSeconds },
      },
      required: ['handle'],
      additionalProperties: false,
    },
    outputSchema: { type: 'object' },
    effect: 'read-only',
    idempotent: true,
    approval: 'never',
    retry: { ...DEFAULT_TOOL_RETRY, maximumAttempts: 1 },
    timeoutMs: FETCH_TOOL_RESULT_LIMITS.maxWaitSeconds * 1_000,
  };
}

/** The validated arguments of a `fetch_tool_result` call, or the reason they are not valid. */
export function parseFetchArguments(
  args: unknown,
): { ok: true; handle: string; waitMs: number } | { ok: false; message: string } {
  let value = args;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return { ok: false, message: 'The arguments are not JSON.' };
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, message: 'The arguments must be an object { handle, waitSeconds? }.' };
  }
  const { handle, waitSeconds, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0) return { ok: false, message: `Unknown field "${Object.keys(rest)[0]}".` };
  if (typeof handle !== 'string' || handle.length === 0 || handle.length > 100) {
    return { ok: false, message: '"handle" must be the handle string a background call returned.' };
  }
  const max = FETCH_TOOL_RESULT_LIMITS.maxWaitSeconds;
  if (waitSeconds !== undefined && (typeof waitSeconds !== 'number' || !(waitSeconds >= 0 && waitSeconds <= max))) {
    return { ok: false, message: `"waitSeconds" must be a number from 0 to ${max}.` };
  }
  return { ok: true, handle, waitMs: Math.round((waitSeconds ?? 0) * 1_000) };
}
