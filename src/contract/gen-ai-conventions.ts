/**
 * The OpenTelemetry semantic conventions for generative AI that the engine's spans and metrics follow, beside its
 * own `durable_tools.*` names: semantic conventions v1.41 (the last release of the core repository with the GenAI
 * pages; they moved to open-telemetry/semantic-conventions-genai from v1.42 with the same names), as
 * `@opentelemetry/semantic-conventions` 1.45.0 exports them from its `incubating` entry. They are in Development:
 * copied here, as that package recommends, rather than imported from an entry that may break in a minor release.
 * Workflow-safe: the workflow's spans use them too.
 */

/** Attribute names (`ATTR_GEN_AI_*` and the stable `ATTR_ERROR_TYPE`). */
export const GEN_AI_ATTRIBUTES = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  requestTemperature: 'gen_ai.request.temperature',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  requestTopP: 'gen_ai.request.top_p',
  requestTopK: 'gen_ai.request.top_k',
  requestSeed: 'gen_ai.request.seed',
  responseModel: 'gen_ai.response.model',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  usageInputTokens: 'gen_ai.usage.input_tokens',
  usageOutputTokens: 'gen_ai.usage.output_tokens',
  tokenType: 'gen_ai.token.type',
  agentName: 'gen_ai.agent.name',
  conversationId: 'gen_ai.conversation.id',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  /** Stable (not GenAI-specific): the class of error an operation ended with; `_OTHER` when none is known. */
  errorType: 'error.type',
} as const;

/** Values of `gen_ai.operation.name` the engine reports (`GEN_AI_OPERATION_NAME_VALUE_*`). */
export const GEN_AI_OPERATIONS = {
  chat: 'chat',
  executeTool: 'execute_tool',
  invokeAgent: 'invoke_agent',
} as const;

/**
 * `gen_ai.tool.type` of the engine's tools: `function`, "a tool executed on the client-side, where the agent
 * generates parameters for a predefined function, and the client executes the logic" — the model proposes the
 * call, the engine's worker runs the tool (its own, an MCP server's or an agent tool alike).
 */
export const GEN_AI_TOOL_TYPE = 'function';

/** Values of `gen_ai.token.type`. */
export const GEN_AI_TOKEN_TYPES = { input: 'input', output: 'output' } as const;

/** `error.type` when no better class of error is known (`ERROR_TYPE_VALUE_OTHER`). */
export const ERROR_TYPE_OTHER = '_OTHER';

/** The GenAI client metrics (`METRIC_GEN_AI_CLIENT_*`). */
export const GEN_AI_METRICS = {
  /** Histogram, unit `{token}`: input and output tokens of each model call, by `gen_ai.token.type`. */
  tokenUsage: 'gen_ai.client.token.usage',
  /** Histogram, unit `s`: how long each model call took. */
  operationDuration: 'gen_ai.client.operation.duration',
} as const;

/** The bucket boundaries the convention gives `gen_ai.client.token.usage`. */
export const GEN_AI_TOKEN_USAGE_BUCKETS: readonly number[] = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];

/** The bucket boundaries (seconds) the convention gives `gen_ai.client.operation.duration`. */
export const GEN_AI_DURATION_BUCKETS_S: readonly number[] = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/** The convention's well-known `gen_ai.provider.name` values. */
const WELL_KNOWN_PROVIDERS = new Set([
  'anthropic',
  'aws.bedrock',
  'azure.ai.inference',
  'azure.ai.openai',
  'cohere',
  'deepseek',
  'gcp.gemini',
  'gcp.gen_ai',
  'gcp.vertex_ai',
  'groq',
  'ibm.watsonx.ai',
  'mistral_ai',
  'openai',
  'perplexity',
  'x_ai',
]);

/** Other spellings of well-known providers (AI SDK package names, common short names). */
const PROVIDER_ALIASES: Readonly<Record<string, string>> = {
  'amazon-bedrock': 'aws.bedrock',
  bedrock: 'aws.bedrock',
  azure: 'azure.ai.openai',
  google: 'gcp.gen_ai',
  gemini: 'gcp.gemini',
  'google-vertex': 'gcp.vertex_ai',
  vertex: 'gcp.vertex_ai',
  mistral: 'mistral_ai',
  xai: 'x_ai',
  watsonx: 'ibm.watsonx.ai',
};

/**
 * `gen_ai.provider.name` of a run's model provider (`ModelSettings.provider`, the name a worker registered it
 * under): the convention's well-known value when the name is one (`openai`, `anthropic`) or a usual spelling of
 * one (`google` is `gcp.gen_ai`, `mistral` is `mistral_ai`); otherwise the name itself, as the convention allows
 * (`scripted`, `openai-compatible`, a provider of your own).
 */
export function genAiProviderName(provider: string): string {
  const name = provider.trim().toLowerCase();
  if (WELL_KNOWN_PROVIDERS.has(name)) return name;
  return PROVIDER_ALIASES[name] ?? provider;
}
