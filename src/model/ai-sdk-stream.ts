/**
 * One turn through the AI SDK's `doStream`: each part is reported to the engine's stream sink as it arrives
 * (text deltas, tool-call starts), and the parts are gathered into the generate result `doGenerate` would have
 * returned, so the turn is read by the same mapping (`fromGenerateResult`) whether streamed or not.
 */
import type {
  AiSdkCallOptions,
  AiSdkContentPart,
  AiSdkGenerateResult,
  AiSdkLanguageModel,
  AiSdkStreamPart,
  AiSdkUsage,
} from './ai-sdk-spec';
import type { ModelStreamSink } from '../contract/model-types';

/** Streams one call of `model`, reporting to `sink`; resolves with the whole result, rejects on an `error` part. */
export async function streamedGenerateResult(
  model: AiSdkLanguageModel,
  call: AiSdkCallOptions,
  sink: ModelStreamSink,
): Promise<AiSdkGenerateResult> {
  const { stream, request, response } = await model.doStream(call);
  const content: AiSdkContentPart[] = [];
  const texts = new Map<string, { type: 'text'; text: string }>();
  let finishReason: AiSdkGenerateResult['finishReason'] | undefined;
  let usage: AiSdkUsage | undefined;
  let modelId: string | undefined;
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const part: AiSdkStreamPart = value;
      switch (part.type) {
        case 'text-start': {
          const text = { type: 'text' as const, text: '' };
          texts.set(part.id ?? '', text);
          content.push(text);
          break;
        }
        case 'text-delta': {
          const id = part.id ?? '';
          const delta = part.delta ?? '';
          let text = texts.get(id);
          if (!text) {
            text = { type: 'text', text: '' };
            texts.set(id, text);
            content.push(text);
          }
          text.text += delta;
          report(() => sink.text(delta));
          break;
        }
        case 'tool-input-start': {
          const start = { id: part.id ?? '', name: part.toolName ?? '' };
          if (part.providerExecuted !== true) report(() => sink.toolCallStart(start));
          break;
        }
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
      inputTokens: { total: undefined, cacheRead: undefined },
      outputTokens: { total: undefined, reasoning: undefined },
    },
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
