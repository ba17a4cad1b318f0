import { setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import type { AgentRunCarryOver, AgentRunInput, AgentRunResult } from '../contract/agent-run-types';
import type { ConversationMessage } from '../contract/conversation-types';
import { runAgentLoop } from './agent-run';
import type { Conversation } from './conversation-state';
import { offerUndoStep } from './conversation-undo';
import { buildCarryOver } from './run-carry-over';
import { AGENT_RUN_DEFAULTS } from './run-limits';
import type { RunLoop } from './run-types';

/**
 * One message's turn: the agent loop (`runAgentLoop`, as `runAgent` embeds it) over the conversation's transcript
 * with the message added, from where the last turn left the agent: the step counter (keys
 * `${workflowId}/${firstExecutionRunId}/${stepId}` across messages and generations), the compensations owed, the
 * transcript cursor and usage. Its turn and step limits are the message's own; token and cost budgets are the
 * conversation's. Afterwards the conversation holds the agent's state for the next message, even when the turn
 * threw (a cancellation: the loop ran what was owed, so nothing is owed twice).
 */
export async function playTurn(talk: Conversation, message: ConversationMessage): Promise<AgentRunResult> {
  const { runKey } = talk.view;
  setCurrentDetails(`**Message ${message.seq}:** ${message.text}`.slice(0, 2_000));
  let loop: RunLoop | undefined;
  try {
    return await runAgentLoop(turnInput(talk, message), {
      scope: { keyPrefix: runKey, runKey },
      modelRunKey: runKey,
      trackApprovalSearchAttribute: talk.input.agent.trackApprovalSearchAttribute === true,
      conversationId: workflowInfo().workflowId,
      opened: (run) => {
        loop = run;
        run.continuesBetweenTurns = true;
        offerUndoStep(run);
      },
    });
  } finally {
    if (loop) keepAgentState(talk, loop);
  }
}

/** The turn's run input: the agent's settings, the message as goal, and the carried state with the message added. */
function turnInput(talk: Conversation, message: ConversationMessage): AgentRunInput {
  const { agent } = talk.input;
  const carried: AgentRunCarryOver = {
    ...talk.run,
    unsentMessages: [...talk.run.unsentMessages, { role: 'user', content: message.text }],
  };
  const used = carried.stepCount + (carried.subAgentSteps ?? 0);
  return {
    ...agent,
    goal: message.text,
    limits: {
      ...agent.limits,
      maxTurns: carried.turns + (agent.limits?.maxTurns ?? AGENT_RUN_DEFAULTS.maxTurns),
      maxSteps: used + (agent.limits?.maxSteps ?? AGENT_RUN_DEFAULTS.maxSteps),
    },
    carriedOver: carried,
  };
}

/** What the turn leaves for the next: its counters, compensations owed, transcript cursor and usage. */
function keepAgentState(talk: Conversation, loop: RunLoop): void {
  const carry = buildCarryOver(loop.state, loop.counters, {
    compensations: loop.step.pending,
    transcript: loop.transcript.carryOver(),
    irreversibleDone: loop.step.irreversibleDone,
    runScopedKeys: true,
  });
  talk.run = { ...carry, generation: talk.view.generation };
  talk.lastLoop = loop;
  talk.transcriptBytes += loop.transcript.generationBytes;
  talk.view.stepCount = loop.state.stepCount;
}
