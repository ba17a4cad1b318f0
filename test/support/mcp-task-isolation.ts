import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { waitFor } from './wait-for';

/**
 * Makes each of two callers create a task (`add` with `task`), waits until each lists its own, and expects neither
 * to list the other's. Resolves with the two task ids.
 */
export async function expectTasksListedToTheirCallersOnly(
  first: McpClient,
  second: McpClient,
): Promise<[firsts: string, seconds: string]> {
  const task = async (client: McpClient) =>
    (
      await client.request(
        { method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 2 }, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      )
    ).task.taskId;
  const [firsts, seconds] = [await task(first), await task(second)];
  const listed = async (client: McpClient) => (await client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
  await waitFor('both tasks to be listed for their callers', async () => {
    const [a, b] = [await listed(first), await listed(second)];
    return a.includes(firsts) && b.includes(seconds);
  });
  expect(await listed(first)).not.toContain(seconds);
  expect(await listed(second)).not.toContain(firsts);
  return [firsts, seconds];
}
