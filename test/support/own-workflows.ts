/**
 * A user's own workflows, as an app would write them: they import only `durable-tools/workflow` (here its source,
 * src/entries/workflow.ts), Temporal's workflow API, and the tools' types. Bundled with the engine's `agentRun` (the
 * entry exports it) by test/integration/own-workflows.test.ts.
 */
import { condition, continueAsNew, defineSignal, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  callTool,
  proxyTools,
  runAgent,
  ToolCallFailure,
  withSaga,
  type AgentRunResult,
  type ToolErrorObservation,
} from '../../src/entries/workflow';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import type { OwnWorkflowTools } from './own-workflow-tools';

export { agentRun } from '../../src/entries/workflow';

const tools = proxyTools<OwnWorkflowTools>();

/** What {@link tripPipeline} did. */
export interface TripOutcome {
  bookingId: string;
  chargeId: string;
  confirmation: string;
}

/** Reserve, charge, confirm, in a saga: when a step fails, what the earlier ones did is undone, newest first. */
export async function tripPipeline(input: { city: string; agencyOpen: boolean }): Promise<TripOutcome> {
  return withSaga(async () => {
    const room = await tools.reserve_room({ city: input.city, nights: 2 });
    const charge = await tools.charge_card({ bookingId: room.bookingId, amountCents: room.priceCents });
    const { confirmation } = await tools.confirm_trip({ bookingId: room.bookingId, agencyOpen: input.agencyOpen });
    return { bookingId: room.bookingId, chargeId: charge.chargeId, confirmation };
  });
}

/** What {@link failingCall} caught. */
export interface CaughtFailure {
  isToolCallFailure: boolean;
  tool: string;
  idempotencyKey: string | undefined;
  type: string | undefined | null;
  observation: ToolErrorObservation;
}

/** Calls a tool that fails permanently: catches the typed failure and returns it, or lets it fail the workflow. */
export async function failingCall(input: { catchIt: boolean }): Promise<CaughtFailure> {
  try {
    await callTool('confirm_trip', { bookingId: 'b-1', agencyOpen: false });
    throw new Error('confirm_trip should have failed');
  } catch (error) {
    if (!input.catchIt || !(error instanceof ToolCallFailure)) throw error;
    return {
      isToolCallFailure: true,
      tool: error.tool,
      idempotencyKey: error.idempotencyKey,
      type: error.type,
      observation: error.observation,
    };
  }
}

/** Two calls per run; the first run continues as new once. Returns every key the calls got, oldest first. */
export async function continuingCalls(input: { keys: string[] }): Promise<{ keys: string[]; runId: string }> {
  const keys = [...input.keys];
  for (const note of ['a', 'b']) keys.push((await tools.stamp_key({ note })).key);
  if (input.keys.length === 0) await continueAsNew<typeof continuingCalls>({ keys });
  return { keys, runId: workflowInfo().firstExecutionRunId };
}

/** The signal {@link conciergeAgent} waits for: the goal to pursue. */
export const goSignal = defineSignal<[string]>('go');

/** Waits for its own signal, then runs an agent on the signalled goal inside this workflow. */
export async function conciergeAgent(input: { script: ScriptedTurn[] }): Promise<AgentRunResult> {
  let goal: string | undefined;
  setHandler(goSignal, (given) => void (goal = given));
  await condition(() => goal !== undefined);
  return runAgent({ goal: goal!, model: { provider: 'scripted', script: input.script } });
}

/** Sends a notice (a tool that needs approval) and returns what it returned. */
export async function gatedNotice(input: { to: string }): Promise<{ sent: boolean }> {
  return tools.send_notice({ to: input.to, text: 'Your trip is booked.' });
}

/**
 * Reserves a room and registers an undo of its own in a saga, then waits until the workflow is cancelled: the
 * own undo (it stamps a key) and the room's cancellation run then, newest first.
 */
export async function sagaUntilCancelled(input: { city: string }): Promise<never> {
  return withSaga(async (saga) => {
    await tools.reserve_room({ city: input.city, nights: 1 });
    saga.add(() => tools.stamp_key({ note: `own undo ${input.city}` }), 'own step');
    await condition(() => false);
    throw new Error('unreachable');
  });
}

/** An embedded agent that sends a notice (it waits for approval), then a notice of the workflow's own. */
export async function agentThenNotice(input: { to: string }): Promise<{ agent: string; sent: boolean }> {
  const result = await runAgent({
    goal: `Tell ${input.to}.`,
    model: {
      provider: 'scripted',
      script: [
        { toolCalls: [{ name: 'send_notice', arguments: { to: input.to, text: 'From the agent.' } }] },
        { text: 'Told.', final: true },
      ],
    },
  });
  const { sent } = await tools.send_notice({ to: input.to, text: 'From the workflow.' });
  return { agent: result.status, sent };
}

/** An agent that reads long reports until its transcript is too large for one generation of its workflow. */
export async function boundedAgent(): Promise<AgentRunResult> {
  return runAgent({
    goal: 'Read every report.',
    model: {
      provider: 'scripted',
      script: [{ toolCalls: [{ name: 'read_report', arguments: { page: 1 } }] }],
      repeat: 40,
    },
    limits: { maxTurns: 100, maxSteps: 100 },
  });
}

/**
 * A saga whose own undo fails: the room is reserved, an undo of its own registered, and the confirmation fails; the
 * room is still cancelled, and the saga reports the undo that failed.
 */
export async function sagaWithFailingUndo(input: { city: string }): Promise<void> {
  await withSaga(async (saga) => {
    saga.add(async () => {
      throw new Error('the ledger is read-only');
    }, 'ledger entry');
    const room = await tools.reserve_room({ city: input.city, nights: 1 });
    await tools.confirm_trip({ bookingId: room.bookingId, agencyOpen: false });
  });
}
