import { resolve } from 'node:path';
import { openStreamStore, streamStoreConfigFromEnv } from '../stores/streams/open-stream-store';
import type { StreamStore } from '../stores/streams/stream-store';
import type { CliContext } from './command';

/**
 * The stream store the environment names, as the workers started from the same directory open it (a relative
 * SQLite path is resolved from the working directory); closed when the command ends. Undefined when the
 * environment says `off`.
 */
export async function openCommandStreamStore(context: CliContext): Promise<StreamStore | undefined> {
  const config = streamStoreConfigFromEnv(context.env);
  if (!config) return undefined;
  const store = await openStreamStore(
    config.kind === 'sqlite' && config.path ? { ...config, path: resolve(context.cwd, config.path) } : config,
  );
  context.lifecycle.defer('the stream store', () => store.close());
  return store;
}
