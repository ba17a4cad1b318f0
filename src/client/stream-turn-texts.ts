import type { AgentStreamEvent } from '../stores/streams/stream-events';

/**
 * The text of each model turn as a reader should show it, by turn number: a turn's text is its latest segment's,
 * so a retried or re-executed turn replaces what its earlier attempt streamed instead of adding to it.
 */
export function streamTurnTexts(events: Iterable<AgentStreamEvent>): Map<number, string> {
  const texts = new Map<number, string>();
  for (const event of events) {
    if (event.type === 'segment-start') texts.set(event.segment.turn, '');
    else if (event.type === 'text-delta')
      texts.set(event.segment.turn, (texts.get(event.segment.turn) ?? '') + event.delta);
  }
  return texts;
}
