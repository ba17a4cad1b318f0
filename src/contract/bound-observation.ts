import type { ToolErrorObservation, ToolObservation } from './activity-protocol';
import type { ShortenedValue } from './claim-check-reference';
import { isStoredOutputReference } from './claim-check-reference';
import { jsonByteLength, jsonTextOf, PAYLOAD_LIMITS, safeSlice, truncateText } from './payload-limits';

/**
 * An error observation within budget: message and hint cut to {@link PAYLOAD_LIMITS.errorTextChars},
 * at most {@link PAYLOAD_LIMITS.errorIssues} issues (the count of the rest is said in the last one).
 * Pure: the tool wrapper applies it before a failure crosses the wire, the workflow again on receipt.
 */
export function boundErrorObservation(observation: ToolErrorObservation): ToolErrorObservation {
  const limit = PAYLOAD_LIMITS.errorTextChars;
  const bounded: ToolErrorObservation = {
    ...observation,
    message: truncateText(String(observation.message), limit),
    hint: truncateText(String(observation.hint), limit),
  };
  if (observation.missingScope !== undefined)
    bounded.missingScope = truncateText(String(observation.missingScope), 500);
  const issues = observation.issues;
  if (Array.isArray(issues)) {
    const kept = issues.slice(0, PAYLOAD_LIMITS.errorIssues).map((issue) => ({
      path: truncateText(String(issue?.path), 200),
      message: truncateText(String(issue?.message), 500),
    }));
    if (issues.length > kept.length) {
      kept.push({ path: '(more)', message: `${issues.length - kept.length} more problems not listed` });
    }
    bounded.issues = kept;
  }
  return bounded;
}

/**
 * Any observation within `maxBytes`: errors are bounded as above; an inline output larger than `maxBytes`
 * (a tool on an older worker, or an output the workflow must shorten) becomes a {@link ShortenedValue}
 * preview. Stored-output references pass unchanged (they are small by construction).
 */
export function boundObservation(observation: ToolObservation, maxBytes: number, note?: string): ToolObservation {
  if (observation.status === 'error') return boundErrorObservation(observation);
  if (isStoredOutputReference(observation.output)) return observation;
  const bytes = jsonByteLength(observation.output);
  if (bytes <= maxBytes) return observation;
  return { ...observation, output: shortened(observation.output, bytes, PAYLOAD_LIMITS.previewChars, note) };
}

/** A preview of a value in place of the value. */
export function shortened(value: unknown, bytes: number, previewChars: number, note?: string): ShortenedValue {
  const text = jsonTextOf(value) ?? '';
  return {
    $durableTools: 'shortened',
    bytes,
    preview: safeSlice(text, 0, previewChars),
    ...(note ? { note } : {}),
  };
}
