import type { Client } from '@temporalio/client';
import { connectClient } from '../client';
import { connectionSettingsFromEnv, type ConnectionSettings } from '../connection-settings';
import { encryptionKeysFromEnv } from '../encryption/encryption-keys';
import type { CliContext } from './command';

/** The Temporal server could not be reached: says where it looked and what to do. */
export class ServerUnreachableError extends Error {
  override readonly name = 'ServerUnreachableError';
  readonly code = 'SERVER_UNREACHABLE';
}

/** Connects a client with the settings of the environment; the connection is closed when the command ends. */
export async function connectForCommand(
  context: CliContext,
): Promise<{ client: Client; settings: ConnectionSettings }> {
  const settings = connectionSettingsFromEnv(context.env);
  // Outside the try: a bad key list is a configuration error, not an unreachable server.
  const encryption = encryptionKeysFromEnv(context.env) ?? false;
  let client: Client;
  try {
    client = await connectClient(settings, { encryption });
    await client.workflowService.getSystemInfo({});
  } catch (error) {
    throw new ServerUnreachableError(
      `Cannot reach a Temporal server at ${settings.address} (namespace ${settings.namespace}): ` +
        `${error instanceof Error ? error.message : String(error)}. Start one with \`${context.self} dev --tools <module>\` ` +
        `or \`${context.self} server\`, or set TEMPORAL_ADDRESS.`,
      { cause: error },
    );
  }
  context.lifecycle.defer('the client connection', () => client.connection.close());
  return { client, settings };
}
