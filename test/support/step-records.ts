import type { StepRecord } from '../../src/contract/agent-run-types';

/**
 * The record of a succeeded call of `tool` at step `stepId` of a source run (`src/first`): proposed by turn `stepId`,
 * arguments `{ n: stepId }`, key `src/first/<stepId>`, output `{ done: stepId }`; `fields` override any of it.
 */
export function succeededStep(stepId: number, tool: string, fields: Partial<StepRecord> = {}): StepRecord {
  return {
    stepId,
    turn: stepId,
    toolCallId: `call-${stepId}`,
    tool,
    arguments: { n: stepId },
    idempotencyKey: `src/first/${stepId}`,
    status: 'succeeded',
    observation: { status: 'ok', output: { done: stepId } },
    ...fields,
  };
}
