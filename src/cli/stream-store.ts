import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { openStreamStore, streamStoreConfigFromEnv } from '../stores/streams/open-stream-store';
import type { StreamStore } from '../stores/streams/stream-store';
import type { CliContext } from './command';

/**
 * The stream store the environment names, as the workers started from the same directory open it (a relative
 * SQLite path is resolved from the working directory); closed when the command ends. Undefined when the
 * environment says `off`, and with `existing`, when a SQLite file is not there yet (no worker streams to it; a
 * reader does not create it).
 */
export async function openCommandStreamStore(
  context: CliContext,
  { existing = false }: { existing?: boolean } = {},
): Promise<StreamStore | undefined> {
  const config = streamStoreConfigFromEnv(context.env);
  if (!config) return undefined;
  const path = config.kind === 'sqlite' && config.path ? resolve(context.cwd, config.path) : undefined;
  if (existing && path !== undefined && !existsSync(path)) return undefined;
  const store = await openStreamStore(config.kind === 'sqlite' && path !== undefined ? { ...config, path } : config);
  context.lifecycle.defer('the stream store', () => store.close());
  return store;
}
