import type { TLSConfig } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';

/** Defaults of the connection settings. */
export const CONNECTION_DEFAULTS = {
  address: '127.0.0.1:7233',
  namespace: 'default',
  taskQueue: 'durable-tools',
} as const;

/** Where to find the Temporal server, how to authenticate and which task queue to use. */
export interface ConnectionSettings {
  /** `host:port` of the Temporal frontend. */
  address: string;
  namespace: string;
  taskQueue: string;
  /**
   * True when the address was configured (TEMPORAL_ADDRESS or the active profile of the TOML config file),
   * so no local dev server should be started.
   */
  addressFromEnv: boolean;
  /** Temporal Cloud API key (TEMPORAL_API_KEY or the profile's `api_key`); implies TLS. */
  apiKey?: string;
  /** TLS: `true`, `false`, or client certificates and server CA (mTLS) from the profile or TEMPORAL_TLS_* variables. */
  tls?: TLSConfig | boolean;
  /** gRPC metadata sent with every call (the profile's `grpc_meta`, TEMPORAL_GRPC_META_*). */
  metadata?: Record<string, string>;
  /**
   * How long a client connection waits for the server before it fails (default: Temporal's 10 s). The
   * `durable-tools` commands use 3 s, so an unreachable server is reported at once.
   */
  connectTimeoutMs?: number;
}

/**
 * Reads the connection settings the way Temporal's own CLI and SDKs do, with `@temporalio/envconfig`: the
 * profile `TEMPORAL_PROFILE` (default `default`) of the TOML file `TEMPORAL_CONFIG_FILE` (default
 * `~/.config/temporalio/temporal.toml`), overridden by `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`,
 * `TEMPORAL_API_KEY`, `TEMPORAL_TLS`, `TEMPORAL_TLS_*` (client certificate and key, server CA, server name)
 * and `TEMPORAL_GRPC_META_*`; plus `DURABLE_TOOLS_TASK_QUEUE`. Unset values take local defaults. Empty
 * variables count as unset.
 *
 * @example
 * ```ts
 * const { address, namespace, taskQueue } = connectionSettingsFromEnv();
 * ```
 */
export function connectionSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): ConnectionSettings {
  const overrideEnvVars = Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[1] !== ''),
  );
  const { connectionOptions, namespace } = loadClientConnectConfig({ overrideEnvVars });
  const { address, apiKey, tls, metadata } = connectionOptions;
  return {
    address: address ?? CONNECTION_DEFAULTS.address,
    namespace: namespace ?? CONNECTION_DEFAULTS.namespace,
    taskQueue: overrideEnvVars.DURABLE_TOOLS_TASK_QUEUE ?? CONNECTION_DEFAULTS.taskQueue,
    addressFromEnv: address !== undefined,
    ...(typeof apiKey === 'string' ? { apiKey } : {}),
    ...(tls !== undefined && tls !== null ? { tls } : {}),
    ...(metadata && Object.keys(metadata).length > 0 ? { metadata: metadata as Record<string, string> } : {}),
  };
}

/**
 * The options `Connection.connect` and `NativeConnection.connect` take, from connection settings.
 *
 * @example
 * ```ts
 * const connection = await Connection.connect(connectionOptions(connectionSettingsFromEnv()));
 * ```
 */
export function connectionOptions(
  settings: Pick<ConnectionSettings, 'address' | 'apiKey' | 'tls' | 'metadata' | 'connectTimeoutMs'>,
): {
  address: string;
  tls?: TLSConfig | boolean;
  apiKey?: string;
  metadata?: Record<string, string>;
  connectTimeout?: number;
} {
  return {
    address: settings.address,
    ...(settings.tls !== undefined ? { tls: settings.tls } : {}),
    ...(settings.apiKey ? { apiKey: settings.apiKey } : {}),
    ...(settings.metadata ? { metadata: settings.metadata } : {}),
    ...(settings.connectTimeoutMs !== undefined ? { connectTimeout: settings.connectTimeoutMs } : {}),
  };
}
