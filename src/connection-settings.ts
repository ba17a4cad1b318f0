/** Defaults of the connection settings. */
export const CONNECTION_DEFAULTS = {
  address: '127.0.0.1:7233',
  namespace: 'default',
  taskQueue: 'durable-tools',
} as const;

/** Where to find the Temporal server and which task queue to use. */
export interface ConnectionSettings {
  /** `host:port` of the Temporal frontend. */
  address: string;
  namespace: string;
  taskQueue: string;
  /** True when TEMPORAL_ADDRESS was set explicitly (so no local dev server should be started). */
  addressFromEnv: boolean;
  /** Temporal Cloud API key (TEMPORAL_API_KEY); implies TLS. */
  apiKey?: string;
  /** Use TLS (TEMPORAL_TLS=true, or implied by an API key). */
  tls: boolean;
}

/**
 * Reads the connection settings from the environment: `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`,
 * `TEMPORAL_API_KEY`, `TEMPORAL_TLS` and `DURABLE_TOOLS_TASK_QUEUE`, with local defaults.
 *
 * @example
 * ```ts
 * const { address, namespace, taskQueue } = connectionSettingsFromEnv();
 * ```
 */
export function connectionSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): ConnectionSettings {
  const apiKey = env.TEMPORAL_API_KEY || undefined;
  return {
    address: env.TEMPORAL_ADDRESS || CONNECTION_DEFAULTS.address,
    namespace: env.TEMPORAL_NAMESPACE || CONNECTION_DEFAULTS.namespace,
    taskQueue: env.DURABLE_TOOLS_TASK_QUEUE || CONNECTION_DEFAULTS.taskQueue,
    addressFromEnv: Boolean(env.TEMPORAL_ADDRESS),
    ...(apiKey ? { apiKey } : {}),
    tls: env.TEMPORAL_TLS === 'true' || env.TEMPORAL_TLS === '1' || apiKey !== undefined,
  };
}
