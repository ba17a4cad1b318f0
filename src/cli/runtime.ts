import { DefaultLogger, Runtime } from '@temporalio/worker';

/**
 * Installs the Temporal runtime for a command that runs a worker: warnings and errors only, and no signal
 * handlers of its own — the command's lifecycle decides when the worker drains and in which order things stop.
 */
export function installRuntime(): void {
  Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: [] });
}
