import { CancelledFailure } from '@temporalio/common';
import { cancelledCall } from '../../src/activities/tool-error-handling';
import { emptyTurnProblem, turnExcerpt, wireSafeArguments } from '../../src/model/model-turn-check';
import { parseToolArguments } from '../../src/guard/parse-tool-arguments';
import { classify } from '../../src/failures/classify';
import { HttpStatusError, PermanentToolError } from '../../src/failures/tool-errors';
import { z } from 'zod';

describe('truthful errors', () => {
  test("keeps a tool's own message next to the HTTP classification (402 Card declined)", () => {
    const error = Object.assign(new Error('Card declined: insufficient funds'), { status: 402 });
    const result = classify(error);
    expect(result.code).toBe('PAYMENT_REQUIRED');
    expect(result.message).toMatch(/^Card declined: insufficient funds\. The service answered HTTP 402/);
    expect(result.hint).toMatch(/payment or billing was refused/);
  });

  test('does not repeat the generic status line of an HttpStatusError as its own message', () => {
    const result = classify(new HttpStatusError(402, { statusText: 'Payment Required' }));
    expect(result.message).toMatch(/^The service answered HTTP 402/);
  });

  test.each([400, 422])('reports a downstream %i as REQUEST_REJECTED, not as a schema error', (status) => {
    const result = classify(new HttpStatusError(status, { bodyExcerpt: 'nights must be <= 30' }));
    expect(result.code).toBe('REQUEST_REJECTED');
    expect(result.kind).toBe('permanent');
    expect(result.hint).toMatch(/right format, but the service refused their content/);
    expect(result.message).toContain('nights must be <= 30');
  });

  test('looks error codes up as own properties only: a network code "constructor" is an unknown error', () => {
    const result = classify(Object.assign(new Error('odd'), { code: 'constructor' }));
    expect(result).toMatchObject({ kind: 'permanent', code: 'INTERNAL', rule: 'unknown' });
  });

  test('a taxonomy error with a code outside the union is reported as INTERNAL with a hint', () => {
    const result = classify(new PermanentToolError('odd', { code: 'constructor' as never }));
    expect(result.code).toBe('INTERNAL');
    expect(typeof result.hint).toBe('string');
  });

  test('an empty model turn is a problem, a turn with text or a tool call is not', () => {
    expect(emptyTurnProblem({ toolCalls: [] })).toBe('the turn has neither text nor tool calls');
    expect(emptyTurnProblem({ text: '  ', toolCalls: [] })).toBeDefined();
    expect(emptyTurnProblem({ text: 'Done.', toolCalls: [] })).toBeUndefined();
    expect(emptyTurnProblem({ toolCalls: [{}] })).toBeUndefined();
  });

  test('quotes the start of a malformed turn, whatever it is', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 50_000; i++) deep = [deep];
    expect(turnExcerpt(deep).length).toBeLessThanOrEqual(301);
    expect(turnExcerpt({ toolCalls: 'nope' })).toBe('{"toolCalls":"nope"}');
    expect(turnExcerpt(undefined)).toBe('undefined');
  });

  test('sends arguments nested too deep for the wire as text, which the guard then refuses', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = { a: deep };
    const sent = wireSafeArguments({ data: deep });
    expect(typeof sent).toBe('string');
    const parsed = parseToolArguments(z.object({ data: z.unknown() }), sent);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error.message).toContain('nesting deeper than');
    expect(wireSafeArguments({ a: 1 })).toEqual({ a: 1 });
  });

  test("a cancelled call that also failed carries the tool's own error", () => {
    const reason = new CancelledFailure('CANCELLED');
    const thrown = cancelledCall('pay', 1, new Error('ledger locked'), reason);
    expect(thrown).toBeInstanceOf(CancelledFailure);
    const [observation] = (thrown as CancelledFailure).details as [{ code: string; message: string }];
    expect(observation.code).toBe('CANCELLED');
    expect(observation.message).toContain('ledger locked');
  });

  test('a call that only stopped because of the cancellation reports the cancellation itself', () => {
    const reason = new CancelledFailure('CANCELLED');
    const abort = Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });
    expect(cancelledCall('pay', 1, abort, reason)).toBe(reason);
    expect(cancelledCall('pay', 1, reason, reason)).toBe(reason);
  });
});
