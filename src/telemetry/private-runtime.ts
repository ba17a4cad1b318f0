import { DefaultLogger, Runtime } from '@temporalio/worker';
import { privateRuntimeLogger } from './private-logs';

/**
 * Installs Temporal's runtime with its default logger (`DefaultLogger('INFO')`) wrapped in
 * {@link privateRuntimeLogger}, unless a runtime exists already (yours, installed before, is kept as it is).
 * `createWorker` calls it before it connects: without it the first connection would instantiate the default
 * runtime, whose logger writes the SDK's own lines with the task token (or the whole activity task) in them.
 */
export function installPrivateRuntimeIfNone(): void {
  if (Runtime._instance !== undefined) return;
  Runtime.install({ logger: privateRuntimeLogger(new DefaultLogger('INFO')) });
}
