import type { ChainedTurnPlanner, FusedClearance, NextChainedTurn, TakenTurn } from '../contract/fused-step';
import type { ModelSettings, TranscriptMessage } from '../contract/model-types';
import { jsonByteLength } from '../contract/payload-limits';
import { prepareCall } from './prepared-call';
import { judgeClearedTurn } from './fused-step-plan';
import { continueAsNewDue } from './run-carry-over';
import { turnLimitAbort } from './run-limits';
import { successObservation, toolMessage } from './step-observation';
import { boundTurnObservation } from './turn-observations';
import { readTurn, toolNameOf, turnMessages } from './turn-reading';

/*
 * Chained turns of the fast path (docs/fast-path.md, "Chained turns"): after a fused step's turn ran all its
 * calls, {@link planChainedTurn} tells whether the workflow would certainly ask the next turn as a local fused
 * step, with which messages and which clearance. The step then asks and runs it itself, and the workflow, when
 * it gets there, takes it instead of scheduling anything (fused-step.ts). Pure, and nothing here imports
 * `@temporalio/workflow`: the worker gives it to the activity (create-worker.ts), so the activity decides with
 * the very functions the workflow runs the loop with (agent-run.ts `playRound`, run-calls.ts `settleStep`).
 */

/**
 * The next turn of a chain, or undefined when the workflow might do anything but ask it as a local fused step
 * right away. In the workflow's order, after the turn taken: its verdict runs its calls (`judgeTurn`) and every
 * one of them ran and succeeded in the step (so no failure policy, approval or other command comes between);
 * then, before the next turn, the turn limit (`turnLimitAbort`), continue-as-new (`continueAsNewDue`) and the
 * fast path's bound on local calls in a row. The messages are those the workflow puts in the transcript: the
 * assistant's (`turnMessages`), then each call's observation within the turn's budget (`settleStep`).
 */
export const planChainedTurn: ChainedTurnPlanner = (
  taken: TakenTurn,
  settings: ModelSettings,
): NextChainedTurn | undefined => {
  const { turn, clearance, position, executed } = taken;
  const chain = clearance.chain;
  if (!chain) return undefined;
  const { verdict } = clearance;
  const { reading, usage, judged } = judgeClearedTurn(turn, settings, clearance);
  if (judged.verdict.kind !== 'run-calls' || executed.length !== reading.calls.length) return undefined;
  const messages = chainedMessages(taken);
  if (!messages) return undefined;
  const ran = executed.length;
  const localCalls = chain.localCalls + ran;
  if (localCalls >= chain.maxLocalCallsPerTask) return undefined;
  if (turnLimitAbort(verdict.turnNumber, verdict.limits, verdict.input)) return undefined;
  const generation = {
    ...chain.generation,
    stepsThisGeneration: chain.generation.stepsThisGeneration + ran,
    transcriptBytes: messages.reduce((sum, m) => sum + jsonByteLength(m), chain.generation.transcriptBytes),
  };
  if (continueAsNewDue({ ...generation, everySteps: generation.everySteps })) return undefined;
  const firstStepId = clearance.firstStepId + ran;
  const next: FusedClearance = {
    ...clearance,
    verdict: {
      ...verdict,
      usage: { ...usage, turns: [] },
      turnNumber: verdict.turnNumber + 1,
      stepCount: verdict.stepCount + ran,
      turnIssues: judged.turnIssues,
    },
    firstStepId,
    keys: clearance.keys.map((_, i) => `${chain.keyPrefix}/${firstStepId + i}`),
    irreversibleDone:
      clearance.irreversibleDone ||
      executed.some((call) => clearance.tools.find((tool) => tool.entry.name === call.tool)?.irreversible === true),
    // The next turn's local activity counts too, as `modelTurnRunsLocally` counts it.
    chain: { ...chain, localCalls: localCalls + 1, generation },
  };
  return {
    turn: verdict.turnNumber,
    fromIndex: position.fromIndex + position.messageCount,
    messages,
    clearance: next,
  };
};

/**
 * The transcript messages the workflow adds for the turn taken: the assistant's, then one per call in order,
 * each the call's observation as `settleStep` bounds it. Undefined when a call is not the one the turn's step
 * would run (another step id or tool), which the workflow would not take either.
 */
function chainedMessages(taken: TakenTurn): TranscriptMessage[] | undefined {
  const { clearance, executed } = taken;
  const reading = readTurn(taken.turn);
  const messages = turnMessages(reading);
  let usedBytes = 0;
  for (const [index, call] of reading.calls.entries()) {
    const done = executed[index];
    const stepId = clearance.firstStepId + index;
    const name = toolNameOf(call);
    const entry = clearance.tools.find((tool) => tool.entry.name === name)?.entry;
    if (!done || !entry || done.stepId !== stepId || done.tool !== name) return undefined;
    const observation = successObservation(done.result, prepareCall(call?.arguments, entry).secrets);
    const bounded = boundTurnObservation(observation, usedBytes);
    usedBytes = bounded.usedBytes;
    const toolCallId = typeof call?.id === 'string' ? call.id : `step_${stepId}`;
    messages.push(toolMessage({ toolCallId, tool: name, stepId }, bounded.observation));
  }
  return messages;
}
