import type { ModelToolCall, ModelTurn, TranscriptMessage } from '../contract/model-types';
import { PAYLOAD_LIMITS, truncateText } from '../contract/payload-limits';
import { transcriptToolCalls } from './run-budget';

/** A model turn as the run takes it: the calls it runs, its text, and how many calls it drops. */
export interface TurnReading {
  /** At most {@link PAYLOAD_LIMITS.maxToolCallsPerTurn} calls, in the model's order. */
  calls: ModelToolCall[];
  /** The turn's text, shortened to {@link PAYLOAD_LIMITS.modelTurnTextChars}; undefined when it had none. */
  text: string | undefined;
  /** Calls that will not run: those the model activity dropped and those past the per-turn limit. */
  dropped: number;
}

/** Reads a turn: a missing or malformed call list is no calls; calls past the per-turn limit are dropped. */
export function readTurn(turn: ModelTurn): TurnReading {
  const calls = (Array.isArray(turn.toolCalls) ? turn.toolCalls : []).slice(0, PAYLOAD_LIMITS.maxToolCallsPerTurn);
  const text = typeof turn.text === 'string' ? truncateText(turn.text, PAYLOAD_LIMITS.modelTurnTextChars) : undefined;
  const dropped = (turn.droppedToolCalls ?? 0) + Math.max(0, (turn.toolCalls?.length ?? 0) - calls.length);
  return { calls, text, dropped };
}

/**
 * What the transcript keeps of a turn: the assistant's message (arguments shortened) and, when calls were
 * dropped from a turn that still runs some, a note telling the model so.
 */
export function turnMessages(reading: TurnReading): TranscriptMessage[] {
  const { calls, text, dropped } = reading;
  const messages: TranscriptMessage[] = [
    { role: 'assistant', ...(text !== undefined ? { text } : {}), toolCalls: transcriptToolCalls(calls) },
  ];
  if (dropped > 0 && calls.length > 0) messages.push({ role: 'user', content: overCapNote(calls.length, dropped) });
  return messages;
}

/**
 * What the model reads after a turn over the per-turn cap (docs/limits.md, "Fan-out"): how many calls it asked
 * for, how many ran, and that the rest did not.
 */
export function overCapNote(ran: number, dropped: number): string {
  const asked = ran + dropped;
  return (
    `(You asked for ${grouped(asked)} tool calls in one turn; at most ` +
    `${PAYLOAD_LIMITS.maxToolCallsPerTurn} run per turn: the first ${ran} ran, the other ` +
    `${grouped(dropped)} did not. Ask for the ones you still need in your next turns.)`
  );
}

/** `1,000` (no `Intl` in workflow code). */
function grouped(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** The tool a call of the model names, as text (the model may send anything as the name). */
export function toolNameOf(call: ModelToolCall): string {
  return typeof call?.name === 'string' ? call.name : String(call?.name);
}
