import { DurableToolsError } from '../../src/contract/durable-tools-error';
import { callKey, checkOwnCallId, numberCall, type CallScope } from '../../src/workflows/workflow-call-scope';

const scope = (callIdPrefix: string): CallScope =>
  ({ runKey: 'wf/first-run', callIdPrefix, count: 0, state: { stepCount: 0 } }) as unknown as CallScope;

describe('the calls of a workflow execution', () => {
  it('are numbered from 1, the number being the call id in the chain’s first run', () => {
    const first = scope('');
    expect([numberCall(first), numberCall(first)]).toEqual([
      { number: 1, callId: '1' },
      { number: 2, callId: '2' },
    ]);
  });

  it('get ids prefixed with the run they continued from in a later run of the chain', () => {
    const continued = scope('previous-run/');
    expect(numberCall(continued)).toEqual({ number: 1, callId: 'previous-run/1' });
  });

  it('take a call id of the caller’s own, and still count it', () => {
    const own = scope('');
    expect(numberCall(own, 'reserve:alpenhof')).toEqual({ number: 1, callId: 'reserve:alpenhof' });
    expect(numberCall(own)).toEqual({ number: 2, callId: '2' });
  });

  it('have keys under the first run: `${workflowId}/${firstExecutionRunId}/${callId}`', () => {
    expect(callKey(scope(''), 'previous-run/3')).toBe('wf/first-run/previous-run/3');
  });
});

describe('a call id of the caller’s own', () => {
  it.each(['reserve-1', 'a.b:c_d', 'x'])('may be %s', (callId) => {
    expect(() => checkOwnCallId(callId)).not.toThrow();
  });

  it.each(['7', '', 'a/b', 'with space', 'x'.repeat(129)])(
    'may not be %j (a generated id, or not a plain word)',
    (callId) => {
      expect(() => checkOwnCallId(callId)).toThrow(DurableToolsError);
    },
  );
});
