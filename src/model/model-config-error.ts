import { DurableToolsError } from '../contract/durable-tools-error';

/** What went wrong while configuring a model provider. */
export type ModelConfigErrorCode =
  | 'UNKNOWN_PROVIDER_KIND'
  | 'PROVIDER_NOT_INSTALLED'
  | 'PROVIDER_LOAD_FAILED'
  | 'MISSING_BASE_URL'
  | 'MISSING_MODEL_ID'
  | 'UNSUPPORTED_SPECIFICATION'
  | 'UNSUPPORTED_NODE_VERSION';

/**
 * A model provider cannot be built from its configuration (a provider package is not installed or
 * needs a newer Node, a required setting is missing). Thrown on the worker at start-up, before any run uses the provider.
 */
export class ModelConfigError extends DurableToolsError<ModelConfigErrorCode> {
  override readonly name = 'ModelConfigError';
}
