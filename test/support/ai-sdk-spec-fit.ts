/**
 * Compile-time proof that both AI SDK lines fit the adapter's own spec (src/model/ai-sdk-spec.ts): a model of
 * each line is an {@link AiSdkLanguageModel}, what the adapter sends is valid call options of each line, and what
 * each line returns is an {@link AiSdkGenerateResult}. Type-checked by `tsc` and by test/unit/ai-sdk-spec.test.ts;
 * nothing here runs.
 */
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3Prompt,
  LanguageModelV3FunctionTool,
} from '@ai-sdk/provider';
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4Prompt,
  LanguageModelV4FunctionTool,
} from 'ai-sdk-7-provider';
import type {
  AiSdkCallOptions,
  AiSdkFunctionTool,
  AiSdkGenerateResult,
  AiSdkLanguageModel,
  AiSdkPrompt,
} from '../../src/model/ai-sdk-spec';

type Fits<Source extends Target, Target> = [Source, Target];

/** AI SDK 6 (`@ai-sdk/provider` 3). */
export type AiSdk6Fits = [
  Fits<LanguageModelV3, AiSdkLanguageModel>,
  Fits<AiSdkCallOptions, LanguageModelV3CallOptions>,
  Fits<AiSdkPrompt, LanguageModelV3Prompt>,
  Fits<AiSdkFunctionTool, LanguageModelV3FunctionTool>,
  Fits<LanguageModelV3GenerateResult, AiSdkGenerateResult>,
];

/** AI SDK 7 (`@ai-sdk/provider` 4). */
export type AiSdk7Fits = [
  Fits<LanguageModelV4, AiSdkLanguageModel>,
  Fits<AiSdkCallOptions, LanguageModelV4CallOptions>,
  Fits<AiSdkPrompt, LanguageModelV4Prompt>,
  Fits<AiSdkFunctionTool, LanguageModelV4FunctionTool>,
  Fits<LanguageModelV4GenerateResult, AiSdkGenerateResult>,
];
