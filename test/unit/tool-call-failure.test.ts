import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import { TOOL_ERROR_CODES, toolFailure, type ToolErrorObservation } from '../../src/contract/activity-protocol';
import { ToolCallFailure, toolFailureOf } from '../../src/contract/tool-call-failure';

const observation: ToolErrorObservation = {
  status: 'error',
  code: TOOL_ERROR_CODES.CONFLICT,
  message: 'The room is taken.',
  hint: 'Pick another room.',
  retryable: false,
  attempts: 1,
};

const activityFailure = (cause: Error) =>
  new ActivityFailure('Activity task failed', 'reserve_room', '1', RetryState.NON_RETRYABLE_FAILURE, 'worker', cause);

describe('ToolCallFailure', () => {
  const failure = new ToolCallFailure(observation, { tool: 'reserve_room', idempotencyKey: 'wf/run/1' });

  it('is a non-retryable ApplicationFailure whose type is the observation’s code', () => {
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure.type).toBe(TOOL_ERROR_CODES.CONFLICT);
    expect(failure.nonRetryable).toBe(true);
  });

  it('carries the observation, the tool and the key, also as its details', () => {
    expect(failure.observation).toEqual(observation);
    expect(failure.tool).toBe('reserve_room');
    expect(failure.idempotencyKey).toBe('wf/run/1');
    expect(failure.details).toEqual([observation, { tool: 'reserve_room', idempotencyKey: 'wf/run/1' }]);
  });

  it('is not what a plain ApplicationFailure is an instance of', () => {
    expect(ApplicationFailure.create({ message: 'other' })).not.toBeInstanceOf(ToolCallFailure);
  });
});

describe('toolFailureOf', () => {
  it('reads the observation of a ToolCallFailure', () => {
    expect(toolFailureOf(new ToolCallFailure(observation, { tool: 'reserve_room' }))).toEqual(observation);
  });

  it('reads it through a failed workflow’s chain of causes, as a client sees it', () => {
    const crossed = ApplicationFailure.create({
      type: observation.code,
      message: observation.message,
      details: [observation, { tool: 'reserve_room' }],
    });
    const failed = new WorkflowFailedError('Workflow execution failed', crossed, RetryState.NON_RETRYABLE_FAILURE);
    expect(toolFailureOf(failed)).toEqual(observation);
  });

  it('reads a tool activity’s own failure', () => {
    expect(toolFailureOf(activityFailure(toolFailure(observation, { mayHaveHadEffect: false })))).toEqual(observation);
  });

  it('is undefined for a failure that carries no observation', () => {
    expect(toolFailureOf(activityFailure(ApplicationFailure.create({ type: 'Oops', details: [{ code: 'x' }] })))).toBe(
      undefined,
    );
    expect(toolFailureOf(new Error('plain'))).toBeUndefined();
    expect(toolFailureOf(undefined)).toBeUndefined();
  });
});
