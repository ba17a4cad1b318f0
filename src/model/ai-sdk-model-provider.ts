import { DEFAULT_SYSTEM_PROMPT, fromGenerateResult, toLanguageModelPrompt, toLanguageModelTools } from './ai-sdk-mapping';
import {
  AI_SDK_SPECIFICATIONS,
  isSupportedSpecification,
  type AiSdkCallOptions,
  type AiSdkLanguageModel,
} from './ai-sdk-spec';
import { ModelConfigError } from './model-config-error';
import { streamedGenerateResult } from './ai-sdk-stream';
import type {
  ModelCallContext,
  ModelProvider,
  ModelRequest,
  ModelSettings,
  ModelTurn,
} from '../contract/model-types';

/**
 * A language model of AI SDK 6 (`LanguageModelV3`) or AI SDK 7 (`LanguageModelV4`), or a function that makes
 * one for a model id (`undefined`: the configured default).
 */
export type LanguageModelSource = AiSdkLanguageModel | ((modelId: string | undefined) => AiSdkLanguageModel);

/** Defaults of an AI SDK provider; a run's model settings override each of them. */
export interface AiSdkProviderOptions {
  /** System prompt (default {@link DEFAULT_SYSTEM_PROMPT}); settings: `system`. */
  system?: string;
  /** Output token limit of one turn; settings: `maxOutputTokens`. */
  maxOutputTokens?: number;
  /** Sampling temperature; settings: `temperature`. */
  temperature?: number;
  /**
   * Whether turns use the model's `doStream` when the worker streams to readers (default true). False: every turn
   * is one `doGenerate` call, streamed to readers as a whole turn when it returns.
   */
  stream?: boolean;
}

/**
 * Adapts any AI SDK language model to a {@link ModelProvider}: the `LanguageModelV3` spec (`@ai-sdk/provider`
 * 3, the AI SDK 6 provider packages) or the `LanguageModelV4` spec (`@ai-sdk/provider` 4, the AI SDK 7 provider
 * packages, Node ≥ 22), told apart by the model's `specificationVersion`. One turn is one `doGenerate` call carrying
 * the engine's abort signal (cancellation and the turn's deadline); the provider's own errors are thrown
 * unchanged for the engine to classify. When the worker streams turns (it has a stream store), a turn is one
 * `doStream` call instead, its text deltas and tool-call starts reported as they arrive and its parts read by the
 * same mapping, so the durable turn is the same either way. A run's settings may choose the model id (`model`),
 * override `system`, `maxOutputTokens` and `temperature`, and set every other call setting of the AI SDK (`topP`,
 * `topK`, `presencePenalty`, `frequencyPenalty`, `stopSequences`, `seed`, `providerOptions`, `headers`), passed
 * through as given. The agent's `instructions` (and a typed answer's JSON Schema) follow the system prompt.
 *
 * @example
 * ```ts
 * import { createOpenAI } from '@ai-sdk/openai';
 * const openai = createOpenAI({ apiKey: process.env.OPENAI_API_KEY });
 * const provider = aiSdkModelProvider((id) => openai.chat(id ?? 'gpt-4.1-mini'));
 * await createWorker({ tools, modelProviders: { openai: provider } });
 * // runs: model: { provider: 'openai', model: 'gpt-4.1' }
 * ```
 */
export function aiSdkModelProvider(source: LanguageModelSource, options: AiSdkProviderOptions = {}): ModelProvider {
  const models = new Map<string, AiSdkLanguageModel>();
  const modelFor = (modelId: string | undefined): AiSdkLanguageModel => {
    if (typeof source !== 'function') return source;
    const key = modelId ?? '';
    let model = models.get(key);
    if (!model) {
      model = source(modelId);
      models.set(key, model);
    }
    return model;
  };
  return async (request: ModelRequest, context: ModelCallContext): Promise<ModelTurn> => {
    const settings = request.settings;
    const model = modelFor(typeof settings.model === 'string' ? settings.model : undefined);
    assertSupported(model);
    const call: AiSdkCallOptions = {
      prompt: toLanguageModelPrompt(request, systemPrompt(request, options)),
      ...(request.tools.length > 0
        ? { tools: toLanguageModelTools(request.tools), toolChoice: { type: 'auto' as const } }
        : {}),
      ...callSettings(settings, options),
      abortSignal: context.signal,
    };
    const result =
      context.stream && options.stream !== false
        ? await streamedGenerateResult(model, call, context.stream)
        : await model.doGenerate(call);
    const turn = fromGenerateResult(result);
    return turn.modelId ? turn : { ...turn, modelId: model.modelId };
  };
}

/**
 * The turn's system prompt: the run's `system` setting, the provider's, or the engine's default; then the agent's
 * instructions; then, for a typed answer, the JSON Schema the answer must match.
 */
export function systemPrompt(request: ModelRequest, options: AiSdkProviderOptions = {}): string {
  const base = stringSetting(request.settings.system) ?? options.system ?? DEFAULT_SYSTEM_PROMPT;
  const parts = [base];
  if (request.instructions) parts.push(request.instructions);
  if (request.output) {
    parts.push(
      `Your final answer (the turn in which you call no tool) must be only one JSON object matching this JSON Schema, with no other text: ${JSON.stringify(request.output.schema)}`,
    );
  }
  return parts.join('\n\n');
}

/** The AI SDK call settings of a run's model settings, over the provider's defaults; anything else is left out. */
function callSettings(settings: ModelSettings, options: AiSdkProviderOptions): Partial<AiSdkCallOptions> {
  const numbers = {
    maxOutputTokens: numberSetting(settings.maxOutputTokens) ?? options.maxOutputTokens,
    temperature: numberSetting(settings.temperature) ?? options.temperature,
    topP: numberSetting(settings.topP),
    topK: numberSetting(settings.topK),
    presencePenalty: numberSetting(settings.presencePenalty),
    frequencyPenalty: numberSetting(settings.frequencyPenalty),
    seed: numberSetting(settings.seed),
  };
  const call: Partial<AiSdkCallOptions> = Object.fromEntries(
    Object.entries(numbers).filter(([, value]) => value !== undefined),
  );
  const stops = settings.stopSequences;
  if (Array.isArray(stops) && stops.every((stop) => typeof stop === 'string')) call.stopSequences = [...stops];
  if (isPlainObject(settings.providerOptions)) {
    call.providerOptions = settings.providerOptions as AiSdkCallOptions['providerOptions'];
  }
  if (isPlainObject(settings.headers)) call.headers = settings.headers as Record<string, string>;
  return call;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function assertSupported(model: AiSdkLanguageModel): void {
  const version: unknown = model.specificationVersion;
  if (isSupportedSpecification(version)) return;
  const supported = Object.entries(AI_SDK_SPECIFICATIONS)
    .map(([spec, line]) => `${spec} (AI SDK ${line.aiSdk})`)
    .join(' or ');
  throw new ModelConfigError(
    `The model ${model.provider}/${model.modelId} implements the AI SDK spec ${String(version)}; durable-tools drives ${supported}.`,
    'UNSUPPORTED_SPECIFICATION',
  );
}

function numberSetting(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function stringSetting(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
