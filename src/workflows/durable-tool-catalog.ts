import { proxyActivities } from '@temporalio/workflow';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { ENGINE_ACTIVITY_OPTIONS } from './agent-run-defaults';

const { describeTools } = proxyActivities<{ describeTools(names?: readonly string[]): Promise<ToolCatalogEntry[]> }>(
  ENGINE_ACTIVITY_OPTIONS.describeTools,
);

/**
 * The names of the tools a worker of this task queue runs (its catalog, undo and hidden tools included). Asked by
 * `durable-tools run --script` before it starts a run, to warn of a script that calls a tool no worker has.
 */
export async function durableToolCatalog(): Promise<string[]> {
  return (await describeTools()).map((entry) => entry.name);
}
