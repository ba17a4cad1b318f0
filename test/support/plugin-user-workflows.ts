/**
 * A user's own workflows module for the worker plugin's test (test/integration/worker-plugin.test.ts): a workflow
 * of the app, calling an activity the `durableTools` plugin registers through `proxyActivities`.
 */
import { proxyActivities } from '@temporalio/workflow';

const { describeTools } = proxyActivities<{ describeTools(): Promise<Array<{ name: string }>> }>({
  startToCloseTimeout: '30 seconds',
});

/** The names of the tools the worker's plugin offers, read through its `describeTools` activity. */
export async function listToolNames(): Promise<string[]> {
  return (await describeTools()).map((entry) => entry.name);
}
