import { DurableToolsError } from '../contract/durable-tools-error';

/** Codes of {@link WorkerPluginError}. */
export type WorkerPluginErrorCode =
  /** The worker already registers an activity under a name the engine needs (a tool's, `describeTools`, ...). */
  | 'ACTIVITY_NAME_TAKEN'
  /** The worker already has a sink under the name the engine's tracing needs (`exporter`). */
  | 'SINK_NAME_TAKEN';

/**
 * The `durableTools` plugin cannot add what it needs to a worker without overriding one of the worker's own
 * settings; it never does that silently. Raised by `Worker.create`, before anything polls.
 */
export class WorkerPluginError extends DurableToolsError<WorkerPluginErrorCode> {
  override readonly name = 'WorkerPluginError';
}
