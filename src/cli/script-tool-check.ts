import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { DESCRIBE_TOOLS_TOOL } from '../contract/tool-disclosure';
import type { ScriptedTurn } from '../model/scripted-model';

/** How long `run --script` waits for a worker to name its tools before it starts the run without the check. */
export const SCRIPT_TOOL_CHECK_MS = 10_000;

/**
 * The warning for a script that calls tools no worker of the task queue has (a typo such as `lookup_custmer`):
 * the run would answer each such call with `UNKNOWN_TOOL` and still complete. `undefined` when every tool is
 * known, the script calls none, or no worker named its tools within `waitMs` (the watcher then says whether a
 * worker polls at all).
 */
export async function scriptToolWarning(
  client: Client,
  taskQueue: string,
  script: readonly ScriptedTurn[],
  waitMs = SCRIPT_TOOL_CHECK_MS,
): Promise<string | undefined> {
  const called = [...new Set(script.flatMap((turn) => (turn.toolCalls ?? []).map((call) => call.name)))].filter(
    (name) => name !== DESCRIBE_TOOLS_TOOL,
  );
  if (called.length === 0) return undefined;
  const known = await workerToolNames(client, taskQueue, waitMs);
  if (!known) return undefined;
  const unknown = called.filter((name) => !known.has(name));
  if (unknown.length === 0) return undefined;
  const names = unknown.map((name) => JSON.stringify(name)).join(', ');
  return (
    `Warning: the script calls ${names}, which no worker of task queue "${taskQueue}" has; the run will answer ` +
    `${unknown.length === 1 ? 'that call' : 'those calls'} with UNKNOWN_TOOL. Its workers have: ${[...known].sort().join(', ') || '(no tools)'}.`
  );
}

/** The tool names a worker of the task queue reports (the `durableToolCatalog` workflow), or none in time. */
async function workerToolNames(client: Client, taskQueue: string, waitMs: number): Promise<Set<string> | undefined> {
  const names = client.workflow.execute('durableToolCatalog', {
    taskQueue,
    workflowId: `durable-tool-catalog-${randomUUID()}`,
    workflowExecutionTimeout: waitMs * 2,
    staticSummary: 'durable-tools run --script: which tools the workers have',
    args: [],
  }) as Promise<string[]>;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), waitMs)));
  try {
    const answer = await Promise.race([names.catch(() => undefined), late]);
    return answer ? new Set(answer) : undefined;
  } finally {
    clearTimeout(timer);
    names.catch(() => undefined);
  }
}
