import type { WorkflowHandle } from '@temporalio/client';

/**
 * What every key of a run starts with: `${workflowId}/${firstExecutionRunId}` (docs/run-ownership.md), read
 * from the server for a handle that does not carry its first run id.
 */
export async function runKeyOf(handle: WorkflowHandle): Promise<string> {
  const description = await handle.describe();
  return `${handle.workflowId}/${description.raw.workflowExecutionInfo?.firstRunId || description.runId}`;
}

/**
 * Whether `key` is the key of step `step` of some execution chain of `workflowId` (the first run id between them
 * is not known to a caller that only has the workflow id, such as an MCP client).
 */
export function isStepKeyOf(workflowId: string, step: number, key: string): boolean {
  const prefix = `${workflowId}/`;
  const suffix = `/${step}`;
  return key.startsWith(prefix) && key.endsWith(suffix) && !key.slice(prefix.length, -suffix.length).includes('/');
}
