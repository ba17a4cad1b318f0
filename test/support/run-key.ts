import type { WorkflowHandle } from '@temporalio/client';

/**
 * What every key of a run starts with: `${workflowId}/${firstExecutionRunId}` (docs/run-ownership.md), read
 * from the server for a handle that does not carry its first run id.
 */
export async function runKeyOf(handle: WorkflowHandle): Promise<string> {
  const description = await handle.describe();
  return `${handle.workflowId}/${description.raw.workflowExecutionInfo?.firstRunId || description.runId}`;
}
