import type { ModelTurn } from './model-types';
import type { OversizedArgumentsMarker } from './claim-check-reference';
import { jsonByteLength, jsonTextOf, PAYLOAD_LIMITS, safeSlice, truncateText } from './payload-limits';

/**
 * A model turn that fits through Temporal whatever the model produced: text cut to
 * {@link PAYLOAD_LIMITS.modelTurnTextChars}, at most {@link PAYLOAD_LIMITS.maxToolCallsPerTurn} calls (the rest
 * counted in `droppedToolCalls`), and the arguments of any call above
 * {@link PAYLOAD_LIMITS.maxToolArgumentBytes} — or past {@link PAYLOAD_LIMITS.modelTurnArgumentBytes} for the
 * whole turn — replaced by an {@link OversizedArgumentsMarker}, which the workflow refuses as
 * `INVALID_ARGUMENTS` ("too large") before anything is scheduled.
 */
export function boundModelTurn(turn: ModelTurn): ModelTurn {
  const calls = turn.toolCalls.slice(0, PAYLOAD_LIMITS.maxToolCallsPerTurn);
  const dropped = turn.toolCalls.length - calls.length;
  let total = 0;
  const toolCalls = calls.map((call) => {
    const bytes = jsonByteLength(call.arguments);
    const fits = bytes <= PAYLOAD_LIMITS.maxToolArgumentBytes && total + bytes <= PAYLOAD_LIMITS.modelTurnArgumentBytes;
    if (fits) total += bytes;
    return {
      id: truncateText(call.id, 200),
      name: truncateText(call.name, 200),
      arguments: fits ? call.arguments : oversized(call.arguments, bytes),
    };
  });
  return {
    ...turn,
    ...(turn.text !== undefined ? { text: truncateText(turn.text, PAYLOAD_LIMITS.modelTurnTextChars) } : {}),
    toolCalls,
    done: turn.done,
    ...(dropped > 0 ? { droppedToolCalls: dropped + (turn.droppedToolCalls ?? 0) } : {}),
  };
}

function oversized(value: unknown, bytes: number): OversizedArgumentsMarker {
  return { $durableTools: 'oversized-arguments', bytes, preview: safeSlice(jsonTextOf(value) ?? '', 0, 200) };
}
