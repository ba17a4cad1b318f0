/**
 * The part of the AI SDK's language model specification that durable-tools uses, written out here so that
 * it fits both lines: `LanguageModelV3` (`@ai-sdk/provider` 3, the AI SDK 6 provider packages, Node ≥ 20) and
 * `LanguageModelV4` (`@ai-sdk/provider` 4, the AI SDK 7 provider packages, Node ≥ 22). The two agree on every
 * field below; a model of either line is assignable to {@link AiSdkLanguageModel} (checked by
 * test/unit/ai-sdk-spec.test.ts against the real types of both lines), so nothing here imports
 * `@ai-sdk/provider` and the package's types work with whichever line an application installed.
 */

/** The specification versions the adapter drives, each with the AI SDK line whose providers implement it. */
export const AI_SDK_SPECIFICATIONS = {
  v3: { aiSdk: 6, providerPackage: '@ai-sdk/provider@^3', node: '>=20' },
  v4: { aiSdk: 7, providerPackage: '@ai-sdk/provider@^4', node: '>=22' },
} as const;

/** `v3` (AI SDK 6) or `v4` (AI SDK 7). */
export type AiSdkSpecificationVersion = keyof typeof AI_SDK_SPECIFICATIONS;

/** A JSON value, as both specs define it. */
export type AiSdkJsonValue = null | string | number | boolean | AiSdkJsonObject | AiSdkJsonValue[];

/** A JSON object, as both specs define it. */
export interface AiSdkJsonObject {
  [key: string]: AiSdkJsonValue | undefined;
}

/** A text part of a prompt message. */
export interface AiSdkTextPart {
  type: 'text';
  text: string;
}

/** An earlier tool call, resent in an assistant message. */
export interface AiSdkToolCallPart {
  type: 'tool-call';
  toolCallId: string;
  toolName: string;
  /** The call's arguments as a JSON object. */
  input: unknown;
}

/** The result of a tool call, sent in a tool message. */
export interface AiSdkToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output:
    | { type: 'json'; value: AiSdkJsonValue }
    | { type: 'error-json'; value: AiSdkJsonValue }
    | { type: 'error-text'; value: string };
}

/** One prompt message of the kinds durable-tools sends. */
export type AiSdkMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: AiSdkTextPart[] }
  | { role: 'assistant'; content: Array<AiSdkTextPart | AiSdkToolCallPart> }
  | { role: 'tool'; content: AiSdkToolResultPart[] };

/** A prompt: the system prompt, then the transcript. */
export type AiSdkPrompt = AiSdkMessage[];

/** A function tool offered to the model. */
export interface AiSdkFunctionTool {
  type: 'function';
  name: string;
  description?: string;
  /** The tool's JSON Schema (the specs type it as `JSONSchema7`). */
  inputSchema: AiSdkJsonObject;
}

/** The options of one `doGenerate` call as durable-tools fills them. */
export interface AiSdkCallOptions {
  prompt: AiSdkPrompt;
  tools?: AiSdkFunctionTool[];
  toolChoice?: { type: 'auto' };
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  stopSequences?: string[];
  seed?: number;
  /** Provider-specific options by provider name, passed through as the run's settings give them. */
  providerOptions?: Record<string, Record<string, AiSdkJsonValue | undefined>>;
  headers?: Record<string, string | undefined>;
  abortSignal?: AbortSignal;
}

/**
 * One part of a generate result, read by its `type`: `text` (with `text`) and `tool-call` (with `toolCallId`,
 * `toolName`, `input` as JSON text, `providerExecuted`) are used; every other part (reasoning, files, sources,
 * provider-executed results) is ignored.
 */
export interface AiSdkContentPart {
  type: string;
  text?: string;
  toolCallId?: string;
  toolName?: string;
  input?: string;
  providerExecuted?: boolean;
}

/** Token counts of a generate result (`undefined` where the provider gives none). */
export interface AiSdkUsage {
  inputTokens: { total: number | undefined; cacheRead: number | undefined };
  outputTokens: { total: number | undefined; reasoning: number | undefined };
}

/** What one `doGenerate` call returns, as far as durable-tools reads it. */
export interface AiSdkGenerateResult {
  content: readonly AiSdkContentPart[];
  /**
   * `unified` is one of `stop`, `length`, `content-filter`, `tool-calls`, `error`, `other`, and with the v4
   * spec also `interrupted` (the provider ended without a completion signal).
   */
  finishReason: { unified: string; raw: string | undefined };
  usage: AiSdkUsage;
  response?: { modelId?: string; headers?: Record<string, string> };
  request?: { body?: unknown };
}

/**
 * One part of a `doStream` stream, read by its `type`: `text-start` / `text-delta` (`id`, `delta`),
 * `tool-input-start` (`id`, `toolName`, `providerExecuted`), `tool-call` (as in a generate result),
 * `response-metadata` (`modelId`), `finish` (`finishReason`, `usage`) and `error` (`error`) are used; every other
 * part (reasoning, sources, files, raw chunks, AI SDK 7's `ping`) is ignored.
 */
export interface AiSdkStreamPart {
  type: string;
  id?: string;
  delta?: string;
  text?: string;
  toolCallId?: string;
  toolName?: string;
  input?: string;
  providerExecuted?: boolean;
  modelId?: string;
  finishReason?: AiSdkGenerateResult['finishReason'];
  usage?: AiSdkUsage;
  error?: unknown;
}

/** What one `doStream` call returns, as far as durable-tools reads it. */
export interface AiSdkStreamResult {
  stream: ReadableStream<AiSdkStreamPart>;
  request?: { body?: unknown };
  response?: { headers?: Record<string, string> };
}

/**
 * An AI SDK language model of either supported line: what `openai.chat(id)`, `anthropic.messages(id)` or
 * `createOpenAICompatible(...).chatModel(id)` return in AI SDK 6 (`v3`) and AI SDK 7 (`v4`).
 */
export interface AiSdkLanguageModel {
  readonly specificationVersion: AiSdkSpecificationVersion;
  readonly provider: string;
  readonly modelId: string;
  doGenerate(options: AiSdkCallOptions): PromiseLike<AiSdkGenerateResult>;
  doStream(options: AiSdkCallOptions): PromiseLike<AiSdkStreamResult>;
}

/** True when `version` is a specification the adapter drives. */
export function isSupportedSpecification(version: unknown): version is AiSdkSpecificationVersion {
  return typeof version === 'string' && Object.prototype.hasOwnProperty.call(AI_SDK_SPECIFICATIONS, version);
}
