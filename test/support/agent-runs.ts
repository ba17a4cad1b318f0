import type { Client } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { startAgentRun, waitForAgentRun, type AgentRunHandle } from '../../src/client/agent-run-client';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import type { AgentRunInput, AgentRunResult } from '../../src/contract/agent-run-types';

/** The input of a run toward `goal` whose model answers with `script` (the `scripted` provider), plus `more`. */
export function scriptedRun(
  goal: string,
  script: ScriptedTurn[],
  more: Omit<AgentRunInput, 'goal' | 'model'> = {},
): AgentRunInput {
  return { goal, model: { provider: 'scripted', script }, ...more };
}

/** A model turn that calls the tool `name` with `args`. */
export function callTurn(name: string, args: Record<string, unknown> = {}): ScriptedTurn {
  return { toolCalls: [{ name, arguments: args }] };
}

/** A run that ended, and its handle. */
export interface FinishedRun {
  handle: AgentRunHandle;
  result: AgentRunResult;
}

/** Starts the run `input` on `taskQueue` and waits for its result, with `worker` running until then. */
export async function runToEnd(
  worker: Worker,
  client: Client,
  taskQueue: string,
  input: AgentRunInput,
): Promise<FinishedRun> {
  return worker.runUntil(async () => {
    const handle = await startAgentRun(client, input, { taskQueue });
    return { handle, result: await waitForAgentRun(handle) };
  });
}
