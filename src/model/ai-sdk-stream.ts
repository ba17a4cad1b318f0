/**
 * One turn through the AI SDK's `doStream`: each part is reported to the engine's stream sink as it arrives
 * (text deltas, tool-call starts), and the parts are gathered into the generate result `doGenerate` would have
 * returned, so the turn is read by the same mapping (`fromGenerateResult`) whether streamed or not.
 */
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import type { ModelStreamSink } from '../contract/model-types';

/** Streams one call of `model`, reporting to `sink`; resolves with the whole result, rejects on an `error` part. */
export async function streamedGenerateResult(
  model: LanguageModelV3,
  call: LanguageModelV3CallOptions,
  sink: ModelStreamSink,
): Promise<LanguageModelV3GenerateResult> {
  const { stream, request, response } = await model.doStream(call);
  const content: LanguageModelV3Content[] = [];
  const texts = new Map<string, { type: 'text'; text: string }>();
  let finishReason: LanguageModelV3FinishReason | undefined;
  let usage: LanguageModelV3Usage | undefined;
  let modelId: string | undefined;
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const part: LanguageModelV3StreamPart = value;
      switch (part.type) {
        case 'text-start': {
          const text = { type: 'text' as const, text: '' };
          texts.set(part.id, text);
          content.push(text);
          break;
        }
        case 'text-delta': {
          let text = texts.get(part.id);
          if (!text) {
            text = { type: 'text', text: '' };
            texts.set(part.id, text);
            content.push(text);
          }
          text.text += part.delta;
          report(() => sink.text(part.delta));
          break;
        }
        case 'tool-input-start':
          if (part.providerExecuted !== true) report(() => sink.toolCallStart({ id: part.id, name: part.toolName }));
          break;
        case 'tool-call':
          content.push(part);
          break;
        case 'response-metadata':
          if (part.modelId) modelId = part.modelId;
          break;
        case 'finish':
          finishReason = part.finishReason;
          usage = part.usage;
          break;
        case 'error':
          throw part.error;
        default:
          break; // reasoning, sources, files, raw chunks: not part of a turn (as with doGenerate)
      }
    }
  } finally {
    reader.releaseLock();
  }
  return {
    content,
    finishReason: finishReason ?? { unified: 'other', raw: undefined },
    usage: usage ?? {
      inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: undefined, text: undefined, reasoning: undefined },
    },
    warnings: [],
    ...(request ? { request } : {}),
    response: { ...(response?.headers ? { headers: response.headers } : {}), ...(modelId ? { modelId } : {}) },
  };
}

/** A sink that throws must not break the turn. */
function report(send: () => void): void {
  try {
    send();
  } catch {
    // the live stream is best effort; the returned turn is the durable result
  }
}
