import type { TranscriptMessage } from '../contract/model-types';
import { HANDOFF_CONVERSATION_MAX_CHARS } from '../contract/sub-agent-spec';
import { truncateText } from '../contract/payload-limits';

function observationText(message: Extract<TranscriptMessage, { role: 'tool' }>): string {
  const { observation } = message;
  const body =
    observation.status === 'ok'
      ? JSON.stringify(observation.output)
      : `error ${observation.code}: ${observation.message}`;
  return `[${message.name} → ${truncateText(body ?? '', 1_000)}]`;
}

function line(message: TranscriptMessage): string {
  switch (message.role) {
    case 'user':
      return `User: ${message.content}`;
    case 'assistant': {
      const calls = message.toolCalls.map((call) => call.name).join(', ');
      return `Assistant: ${message.text ?? ''}${calls ? ` (calls ${calls})` : ''}`.trim();
    }
    case 'tool':
      return `Tool ${observationText(message)}`;
  }
}

/**
 * The parent's conversation as a handoff passes it to the child: one line per message, newest kept when it is
 * too long (the first message, the user's goal, always stays), within {@link HANDOFF_CONVERSATION_MAX_CHARS}.
 */
export function handoffConversation(messages: readonly TranscriptMessage[]): string {
  const lines = messages.map((message) => truncateText(line(message), 2_000));
  if (lines.length === 0) return '';
  const [first, ...rest] = lines;
  let used = first!.length;
  const kept: string[] = [];
  for (let index = rest.length - 1; index >= 0; index--) {
    const next = rest[index]!;
    if (used + next.length + 1 > HANDOFF_CONVERSATION_MAX_CHARS) {
      kept.unshift(`(${index + 1} earlier messages left out)`);
      break;
    }
    kept.unshift(next);
    used += next.length + 1;
  }
  return [first, ...kept].join('\n');
}
