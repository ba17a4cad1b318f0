import { Connection, type Client } from '@temporalio/client';
import { connectClient } from '../client/agent-run-client';
import { connectionOptions, connectionSettingsFromEnv, type ConnectionSettings } from '../client/connection-settings';
import { encryptionKeysFromEnv } from '../encryption/encryption-keys';
import type { CliContext } from './command';
import type { CommandTracing } from './command-tracing';
import { DurableToolsError } from '../contract/durable-tools-error';

/**
 * How long the commands wait for the Temporal server before they say it cannot be reached (Temporal's own
 * default is 10 s, plus retries of the first call).
 */
export const CONNECT_TIMING = { connectTimeoutMs: 3_000 } as const;

/** The Temporal server could not be reached: says where it looked and what to do. */
export class ServerUnreachableError extends DurableToolsError<'SERVER_UNREACHABLE'> {
  override readonly name = 'ServerUnreachableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'SERVER_UNREACHABLE', options);
  }
}

/**
 * Connects a client with the settings of the environment; the connection is closed when the command ends. With
 * `tracing` (from `startCommandTracing`), the calls that change runs are traced.
 */
export async function connectForCommand(
  context: CliContext,
  options: { tracing?: CommandTracing | undefined } = {},
): Promise<{ client: Client; settings: ConnectionSettings }> {
  const settings = connectionSettingsFromEnv(context.env);
  // Outside the try: a bad key list is a configuration error, not an unreachable server.
  const encryption = encryptionKeysFromEnv(context.env) ?? false;
  let client: Client;
  try {
    client = await connectClient(
      { ...settings, connectTimeoutMs: CONNECT_TIMING.connectTimeoutMs },
      { encryption, ...(options.tracing ? { interceptors: options.tracing.interceptors } : {}) },
    );
  } catch (error) {
    throw unreachable(settings, error, context);
  }
  context.lifecycle.defer('the client connection', () => client.connection.close());
  try {
    await firstCall(client.connection, client.workflowService);
  } catch (error) {
    throw unreachable(settings, error, context);
  }
  return { client, settings };
}

/**
 * Checks that a Temporal server answers at the configured address before a worker is started against it
 * (the worker's own connection reports a refused port as a raw transport error, without the fix).
 */
export async function ensureServerReachable(settings: ConnectionSettings, context: CliContext): Promise<void> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({
      ...connectionOptions(settings),
      connectTimeout: CONNECT_TIMING.connectTimeoutMs,
    });
    await firstCall(connection, connection.workflowService);
  } catch (error) {
    throw unreachable(settings, error, context);
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

/** The first call, with the same deadline as the connection: a port that accepts but never answers fails too. */
function firstCall(connection: Pick<Connection, 'withDeadline'>, service: Client['workflowService']): Promise<unknown> {
  return connection.withDeadline(Date.now() + CONNECT_TIMING.connectTimeoutMs, () => service.getSystemInfo({}));
}

function unreachable(settings: ConnectionSettings, error: unknown, context: CliContext): ServerUnreachableError {
  const seconds = CONNECT_TIMING.connectTimeoutMs / 1000;
  const why = error instanceof Error ? error.message : String(error);
  const where = settings.addressFromEnv
    ? 'from TEMPORAL_ADDRESS or the Temporal config profile'
    : 'the default; TEMPORAL_ADDRESS is not set';
  return new ServerUnreachableError(
    `Cannot reach a Temporal server at ${settings.address} (${where}; namespace ${settings.namespace}) within ${seconds} s: ${why}. ` +
      `Start one with \`${context.self} dev --tools <module>\` or \`${context.self} server\`, ` +
      `or set TEMPORAL_ADDRESS to the host:port of yours.`,
    { cause: error },
  );
}
