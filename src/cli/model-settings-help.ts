import { MODEL_ENV } from '../model/configured-model-providers';

/** The model settings of a worker command, for its help: where the worker's model provider comes from. */
export const MODEL_SETTINGS_HELP = `model: runs with {"provider":"scripted"} always work offline; a real model comes from
  ${MODEL_ENV.model}=openai|anthropic|openai-compatible[:<model id>], with the provider's own key and URL
  variables (OPENAI_API_KEY, ANTHROPIC_API_KEY, OPENAI_COMPATIBLE_BASE_URL, ...) or ${MODEL_ENV.apiKey} and
  ${MODEL_ENV.baseURL} (docs/models.md)`;
