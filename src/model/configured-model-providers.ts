/**
 * Ready configurations for the AI SDK provider packages: `@ai-sdk/openai` (Chat Completions),
 * `@ai-sdk/anthropic` (Messages) and `@ai-sdk/openai-compatible` (vLLM, Ollama, llama.cpp server, LM Studio,
 * any server speaking Chat Completions), of either line: AI SDK 6 or AI SDK 7 (Node ≥ 22), whichever the
 * application installed. Each package is loaded on demand, so a worker that does not use a provider does not
 * need its package installed.
 */
import { aiSdkModelProvider, type AiSdkProviderOptions } from './ai-sdk-model-provider';
import type { AiSdkLanguageModel } from './ai-sdk-spec';
import { ModelConfigError } from './model-config-error';
import type { ModelProvider } from '../contract/model-types';

/** The providers durable-tools configures out of the box. */
export const MODEL_PROVIDER_KINDS = ['openai', 'anthropic', 'openai-compatible'] as const;

/** One of {@link MODEL_PROVIDER_KINDS}. */
export type ModelProviderKind = (typeof MODEL_PROVIDER_KINDS)[number];

/** The npm package behind each kind, per AI SDK line, with the version range to install. */
export const MODEL_PROVIDER_PACKAGES: Readonly<Record<6 | 7, Readonly<Record<ModelProviderKind, string>>>> = {
  6: {
    openai: '@ai-sdk/openai@^3',
    anthropic: '@ai-sdk/anthropic@^3',
    'openai-compatible': '@ai-sdk/openai-compatible@^2',
  },
  7: {
    openai: '@ai-sdk/openai@^4',
    anthropic: '@ai-sdk/anthropic@^4',
    'openai-compatible': '@ai-sdk/openai-compatible@^3',
  },
};

/** The first Node major the AI SDK 7 packages support (their `engines`). */
const AI_SDK_7_MIN_NODE = 22;

/** The model id a run gets when neither the configuration nor the run's settings name one. */
export const DEFAULT_MODEL_IDS: Readonly<Record<ModelProviderKind, string | undefined>> = {
  openai: 'gpt-4.1-mini',
  anthropic: 'claude-sonnet-4-5',
  'openai-compatible': undefined, // every local server has its own models
};

/** How to reach one provider. */
export interface ModelProviderConfig extends AiSdkProviderOptions {
  kind: ModelProviderKind;
  /** Default model id (a run's `model` setting overrides it). Required for `openai-compatible`. */
  model?: string;
  /** API key (default: the package's own variable, `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`). */
  apiKey?: string;
  /** Base URL of the API, e.g. `http://127.0.0.1:11434/v1`. Required for `openai-compatible`. */
  baseURL?: string;
  /** Extra request headers. */
  headers?: Record<string, string>;
}

/**
 * Builds a {@link ModelProvider} from a configuration, importing the provider package on demand.
 * Throws {@link ModelConfigError} when the package is missing or a required setting is not given.
 *
 * @example
 * ```ts
 * const local = await createConfiguredModelProvider({
 *   kind: 'openai-compatible', baseURL: 'http://127.0.0.1:11434/v1', model: 'qwen2.5:7b',
 * });
 * await createWorker({ tools, modelProviders: { 'openai-compatible': local } });
 * ```
 */
export async function createConfiguredModelProvider(config: ModelProviderConfig): Promise<ModelProvider> {
  const defaultModel = config.model ?? DEFAULT_MODEL_IDS[config.kind];
  const common = {
    ...(config.apiKey !== undefined ? { apiKey: config.apiKey } : {}),
    ...(config.baseURL !== undefined ? { baseURL: config.baseURL } : {}),
    ...(config.headers !== undefined ? { headers: config.headers } : {}),
  };
  let make: (modelId: string) => AiSdkLanguageModel;
  switch (config.kind) {
    case 'openai': {
      const { createOpenAI } = await importProvider(config.kind, () => import('@ai-sdk/openai'));
      const openai = createOpenAI(common);
      make = (id) => openai.chat(id);
      break;
    }
    case 'anthropic': {
      const { createAnthropic } = await importProvider(config.kind, () => import('@ai-sdk/anthropic'));
      const anthropic = createAnthropic(common);
      make = (id) => anthropic.messages(id);
      break;
    }
    case 'openai-compatible': {
      if (config.baseURL === undefined) {
        throw new ModelConfigError(
          'The openai-compatible provider needs a base URL (OPENAI_COMPATIBLE_BASE_URL, e.g. http://127.0.0.1:11434/v1 for Ollama).',
          'MISSING_BASE_URL',
        );
      }
      const { createOpenAICompatible } = await importProvider(config.kind, () => import('@ai-sdk/openai-compatible'));
      const compatible = createOpenAICompatible({ name: 'openai-compatible', ...common, baseURL: config.baseURL });
      make = (id) => compatible.chatModel(id);
      break;
    }
    default:
      throw new ModelConfigError(
        `Unknown model provider kind "${String((config as { kind: unknown }).kind)}"; use one of ${MODEL_PROVIDER_KINDS.join(', ')}.`,
        'UNKNOWN_PROVIDER_KIND',
      );
  }
  return aiSdkModelProvider((modelId) => {
    const id = modelId ?? defaultModel;
    if (id === undefined) {
      throw new ModelConfigError(
        `No model id for the ${config.kind} provider: set it in DURABLE_TOOLS_MODEL (${config.kind}:<model>) or in the run's settings ({ provider, model }).`,
        'MISSING_MODEL_ID',
      );
    }
    return make(id);
  }, config);
}

async function importProvider<T>(kind: ModelProviderKind, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'ERR_REQUIRE_ESM' && nodeMajor() < AI_SDK_7_MIN_NODE) {
      // The AI SDK 7 packages are ES modules only: a Node that cannot require them predates their engines.
      throw new ModelConfigError(
        `The installed ${packageName(MODEL_PROVIDER_PACKAGES[7][kind])} is of the AI SDK 7 line, which needs Node ≥ ${AI_SDK_7_MIN_NODE}; this worker runs Node ${process.versions.node}. Run the worker on Node ${AI_SDK_7_MIN_NODE}, or npm install ${MODEL_PROVIDER_PACKAGES[6][kind]} (AI SDK 6).`,
        'UNSUPPORTED_NODE_VERSION',
        { cause: error },
      );
    }
    if (code !== 'MODULE_NOT_FOUND') {
      throw new ModelConfigError(
        `The ${kind} model provider's package ${packageName(MODEL_PROVIDER_PACKAGES[6][kind])} is installed but does not load: ${(error as Error).message}`,
        'PROVIDER_LOAD_FAILED',
        { cause: error },
      );
    }
    throw new ModelConfigError(
      `The ${kind} model provider needs the package ${installHint(kind)}`,
      'PROVIDER_NOT_INSTALLED',
      {
        cause: error,
      },
    );
  }
}

function nodeMajor(): number {
  return Number(process.versions.node.split('.')[0]);
}

function packageName(spec: string): string {
  return spec.replace(/@\^\d+$/, '');
}

/** What to install for `kind` on this Node: either line from Node 22 on, the AI SDK 6 line before. */
function installHint(kind: ModelProviderKind): string {
  return nodeMajor() >= AI_SDK_7_MIN_NODE
    ? `${MODEL_PROVIDER_PACKAGES[7][kind]} (AI SDK 7) or ${MODEL_PROVIDER_PACKAGES[6][kind]} (AI SDK 6): npm install ${MODEL_PROVIDER_PACKAGES[7][kind]}`
    : `${MODEL_PROVIDER_PACKAGES[6][kind]} (AI SDK 6; AI SDK 7 needs Node ≥ ${AI_SDK_7_MIN_NODE}): npm install ${MODEL_PROVIDER_PACKAGES[6][kind]}`;
}

/** Environment variables read by {@link modelProviderConfigFromEnv}. */
export const MODEL_ENV = {
  /** `scripted` (default), `openai`, `anthropic` or `openai-compatible`, optionally `:<model id>`. */
  model: 'DURABLE_TOOLS_MODEL',
  /** Overrides the provider's own base URL variable. */
  baseURL: 'DURABLE_TOOLS_MODEL_BASE_URL',
  /** Overrides the provider's own API key variable. */
  apiKey: 'DURABLE_TOOLS_MODEL_API_KEY',
} as const;

const PROVIDER_VARIABLES: Readonly<Record<ModelProviderKind, { apiKey: string; baseURL: string }>> = {
  openai: { apiKey: 'OPENAI_API_KEY', baseURL: 'OPENAI_BASE_URL' },
  anthropic: { apiKey: 'ANTHROPIC_API_KEY', baseURL: 'ANTHROPIC_BASE_URL' },
  'openai-compatible': { apiKey: 'OPENAI_COMPATIBLE_API_KEY', baseURL: 'OPENAI_COMPATIBLE_BASE_URL' },
};

/**
 * Reads the model configuration of a worker from the environment: `DURABLE_TOOLS_MODEL=<kind>[:<model>]`,
 * the provider's usual key and base URL variables (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `ANTHROPIC_API_KEY`,
 * `ANTHROPIC_BASE_URL`, `OPENAI_COMPATIBLE_API_KEY`, `OPENAI_COMPATIBLE_BASE_URL`), and the overrides
 * `DURABLE_TOOLS_MODEL_BASE_URL` / `DURABLE_TOOLS_MODEL_API_KEY`. `undefined` when no model is configured
 * (or `scripted`): the worker then has only the offline scripted model.
 *
 * @example
 * ```ts
 * modelProviderConfigFromEnv({ DURABLE_TOOLS_MODEL: 'openai-compatible:llama3.2', OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:11434/v1' });
 * // { kind: 'openai-compatible', model: 'llama3.2', baseURL: 'http://127.0.0.1:11434/v1' }
 * ```
 */
export function modelProviderConfigFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
): ModelProviderConfig | undefined {
  const value = env[MODEL_ENV.model]?.trim();
  if (!value || value === 'scripted') return undefined;
  const colon = value.indexOf(':');
  const kind = (colon >= 0 ? value.slice(0, colon) : value).trim();
  const model = colon >= 0 ? value.slice(colon + 1).trim() : '';
  if (!(MODEL_PROVIDER_KINDS as readonly string[]).includes(kind)) {
    throw new ModelConfigError(
      `${MODEL_ENV.model}="${value}" names no known provider; use scripted, ${MODEL_PROVIDER_KINDS.join(', ')} (optionally followed by :<model id>).`,
      'UNKNOWN_PROVIDER_KIND',
    );
  }
  const variables = PROVIDER_VARIABLES[kind as ModelProviderKind];
  const apiKey = nonEmpty(env[MODEL_ENV.apiKey]) ?? nonEmpty(env[variables.apiKey]);
  const baseURL = nonEmpty(env[MODEL_ENV.baseURL]) ?? nonEmpty(env[variables.baseURL]);
  return {
    kind: kind as ModelProviderKind,
    ...(model !== '' ? { model } : {}),
    ...(apiKey !== undefined ? { apiKey } : {}),
    ...(baseURL !== undefined ? { baseURL } : {}),
  };
}

/**
 * The model providers a worker process registers from its environment: `{ [kind]: provider }` for the
 * configured one, `{}` when only the scripted model is wanted.
 */
export async function modelProvidersFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<Record<string, ModelProvider>> {
  const config = modelProviderConfigFromEnv(env);
  if (!config) return {};
  return { [config.kind]: await createConfiguredModelProvider(config) };
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
