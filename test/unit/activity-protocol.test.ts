import { ActivityFailure, ApplicationFailure, CancelledFailure, RetryState } from '@temporalio/common';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  describeActivityFailure,
  ENGINE_FAILURE_TYPES,
  engineFailure,
  failureMayHaveHadEffect,
  isEngineFailure,
  isToolErrorCode,
  observationFromFailure,
  readToolFailureDetails,
  TOOL_ERROR_CODES,
  toolFailure,
  type ToolErrorObservation,
} from '../../src/contract/activity-protocol';

const observation: ToolErrorObservation = {
  status: 'error',
  code: 'NOT_FOUND',
  message: 'Hotel 42 does not exist.',
  hint: 'Search first.',
  retryable: false,
  attempts: 1,
};

/** What the workflow receives when an activity fails: an ActivityFailure around the activity's failure. */
function asReceived(cause: Error): ActivityFailure {
  return new ActivityFailure('Activity task failed', 'book', '1', RetryState.NON_RETRYABLE_FAILURE, 'worker', cause);
}

describe('the workflow↔activity protocol', () => {
  it('carries the observation and the facts of a tool failure to the workflow unchanged', () => {
    const received = asReceived(toolFailure(observation, { mayHaveHadEffect: false }));
    expect(readToolFailureDetails(received)).toEqual({ observation, facts: { mayHaveHadEffect: false } });
    expect(observationFromFailure(received, 'book', 3)).toEqual(observation);
    expect(failureMayHaveHadEffect(received)).toBe(false);
  });

  it('makes a tool failure with a retry delay retryable and one without final', () => {
    const retry = toolFailure({ ...observation, retryable: true }, { mayHaveHadEffect: false }, 1234.4);
    expect(retry.nonRetryable).toBe(false);
    expect(retry.nextRetryDelay).toBe(1234);
    expect(retry.type).toBe('NOT_FOUND');
    expect(toolFailure(observation, { mayHaveHadEffect: true }).nonRetryable).toBe(true);
  });

  it('treats only own properties of the code table as codes', () => {
    expect(isToolErrorCode('RATE_LIMITED')).toBe(true);
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
      expect(isToolErrorCode(name)).toBe(false);
    }
  });

  it('does not trust details whose code is outside the closed union', () => {
    const forged = ApplicationFailure.create({
      type: 'constructor',
      message: 'odd',
      nonRetryable: true,
      details: [{ ...observation, code: 'constructor' }, { mayHaveHadEffect: false }],
    });
    const seen = observationFromFailure(asReceived(forged), 'book', 3);
    expect(seen.code).toBe(TOOL_ERROR_CODES.INTERNAL);
    expect(seen.message).toBe('constructor: odd');
  });

  it('reports a tool missing on the worker as TOOL_NOT_REGISTERED, without effect', () => {
    const notFound = asReceived(ApplicationFailure.create({ type: 'NotFoundError', message: 'no such activity' }));
    expect(observationFromFailure(notFound, 'book', 3)).toMatchObject({ code: 'TOOL_NOT_REGISTERED', attempts: 1 });
    expect(failureMayHaveHadEffect(notFound)).toBe(false);
  });

  it("keeps the type of a tool's own ApplicationFailure in the message when it is not one of our codes", () => {
    const own = asReceived(
      ApplicationFailure.create({ type: 'CardDeclined', message: 'Card declined', nonRetryable: true }),
    );
    expect(observationFromFailure(own, 'pay', 2)).toMatchObject({
      code: 'INTERNAL',
      message: 'CardDeclined: Card declined',
      retryable: false,
      attempts: 2,
    });
    expect(failureMayHaveHadEffect(own)).toBe(true);
  });

  it('describes a cancelled call as CANCELLED', () => {
    const cancelled = asReceived(new CancelledFailure('cancelled'));
    expect(observationFromFailure(cancelled, 'book', 3).code).toBe('CANCELLED');
  });

  it("recognises the engine's own failure types through an ActivityFailure", () => {
    const missing = asReceived(engineFailure(ENGINE_FAILURE_TYPES.TRANSCRIPT_MISSING, 'no transcript'));
    expect(isEngineFailure(missing, ENGINE_FAILURE_TYPES.TRANSCRIPT_MISSING)).toBe(true);
    expect(isEngineFailure(missing, ENGINE_FAILURE_TYPES.MODEL_OUTPUT_INVALID)).toBe(false);
    expect(engineFailure(ENGINE_FAILURE_TYPES.MODEL_OUTPUT_INVALID, 'x', { retryable: true }).nonRetryable).toBe(false);
  });

  it('describes an activity failure by its own type and message, not "Activity task failed"', () => {
    const invalid = asReceived(engineFailure(ENGINE_FAILURE_TYPES.MODEL_OUTPUT_INVALID, 'The turn is not an object.'));
    expect(describeActivityFailure(invalid)).toBe('MODEL_OUTPUT_INVALID: The turn is not an object.');
  });

  it('is the only module that spells a protocol failure type as a string literal', () => {
    const types = [...Object.values(TOOL_ERROR_CODES), ...Object.values(ENGINE_FAILURE_TYPES), 'NotFoundError'];
    const offenders: string[] = [];
    for (const dir of ['src/workflows', 'src/activities']) {
      for (const file of readdirSync(dir)) {
        const text = readFileSync(join(dir, file), 'utf8');
        for (const type of types) if (text.includes(`'${type}'`)) offenders.push(`${dir}/${file}: '${type}'`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
