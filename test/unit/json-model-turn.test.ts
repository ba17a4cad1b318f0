import fc from 'fast-check';
import { createModelActivities } from '../../src/activities/model-activities';
import { jsonModelTurn, notJsonMessage } from '../../src/model/json-model-turn';
import type { ModelProvider } from '../../src/contract/model-types';
import { createToolRegistry } from '../../src/tools/tool-registry';

/**
 * The model-turn normaliser on the worker: whatever a provider returns, the workflow sees JSON; values JSON
 * cannot carry are found with their place.
 */

function problemOf(raw: unknown) {
  const result = jsonModelTurn(raw);
  if (result.ok) throw new Error(`expected a problem, got ${JSON.stringify(result.turn)}`);
  return result.problem;
}

function call(name: unknown, args: unknown) {
  return { text: 'calling', toolCalls: [{ id: 'c1', name, arguments: args }], done: false };
}

const cyclic: Record<string, unknown> = { a: 1 };
cyclic['self'] = cyclic;
const sparse = [1, , 3];

describe('jsonModelTurn', () => {
  test.each([
    ['a symbol as tool name', call(Symbol('book'), {}), 'toolCalls[0].name', 'a symbol'],
    ['a BigInt in the arguments', call('book', { nights: 3n }), 'toolCalls[0].arguments.nights', 'a BigInt'],
    ['a function as arguments', call('book', () => ({ room: 'a' })), 'toolCalls[0].arguments', 'a function'],
    ['a Map as arguments', call('book', new Map([['room', 'a']])), 'toolCalls[0].arguments', 'a Map'],
    ['a Date in the arguments', call('book', { at: new Date(0) }), 'toolCalls[0].arguments.at', 'a Date'],
    ['a class instance', call('book', { x: new (class Point {})() }), 'toolCalls[0].arguments.x', 'a class'],
    ['a cycle', call('book', cyclic), 'toolCalls[0].arguments.self', 'a cycle'],
    [
      'undefined inside an array',
      call('book', { list: [1, undefined] }),
      'toolCalls[0].arguments.list[1]',
      'undefined',
    ],
    ['a hole in an array', call('book', { list: sparse }), 'toolCalls[0].arguments.list[1]', 'a hole'],
    ['NaN', call('book', { n: Number.NaN }), 'toolCalls[0].arguments.n', 'NaN'],
    ['a symbol as text', { text: Symbol('hi'), toolCalls: [] }, 'text', 'a symbol'],
    ['a Map as the list of calls', { toolCalls: new Map() }, 'toolCalls', 'a Map'],
    ['undefined as a call', { toolCalls: [undefined] }, 'toolCalls[0]', 'undefined'],
    ['a function as the turn', () => ({}), '(turn)', 'a function'],
  ])('finds %s and says where', (_, raw, path, found) => {
    const problem = problemOf(raw);
    expect(problem.path).toBe(path);
    expect(problem.found).toContain(found);
    expect(notJsonMessage(problem)).toContain(`\`${path}\``);
  });

  test('never throws on a proxy whose traps throw, or a getter that throws', () => {
    const trap = () => {
      throw new Error('trap');
    };
    const hostile = new Proxy({}, { get: trap, getPrototypeOf: trap, ownKeys: trap, getOwnPropertyDescriptor: trap });
    expect(problemOf(hostile).found).toContain('could not be read');
    expect(problemOf(call('book', hostile)).found).toContain('could not be read');
    const getter = { text: 'x', toolCalls: [], done: true };
    Object.defineProperty(getter, 'text', { enumerable: true, get: trap });
    expect(problemOf(getter).found).toContain('trap');
  });

  test('reads every property once, so a getter cannot answer JSON first and a BigInt later', () => {
    let reads = 0;
    const args = {};
    Object.defineProperty(args, 'n', { enumerable: true, get: () => (++reads === 1 ? 1 : 2n) });
    const result = jsonModelTurn(call('book', args));
    expect(result.ok).toBe(true);
    expect(JSON.stringify(result.ok ? result.turn : undefined)).toContain('"n":1');
    expect(reads).toBe(1);
  });

  test('keeps a __proto__ key of the arguments as a field (the argument guard then refuses it)', () => {
    const args = JSON.parse('{"__proto__":{"polluted":true},"room":"a"}') as unknown;
    const result = jsonModelTurn(call('book', args));
    expect(result.ok).toBe(true);
    const copied = result.ok
      ? (result.turn as { toolCalls: Array<{ arguments: object }> }).toolCalls[0]!.arguments
      : {};
    expect(Object.getPrototypeOf(copied)).toBe(Object.prototype);
    expect(Object.keys(copied)).toEqual(['__proto__', 'room']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  test("leaves out a call's extra fields and junk metadata, as the turn schema would, without judging them", () => {
    const result = jsonModelTurn({
      text: 'hi',
      toolCalls: [{ id: 'c1', name: 'book', arguments: { room: 'a' }, providerMetadata: new Map() }],
      usage: { inputTokens: 10n },
      modelId: 'm',
      raw: new Map(),
    });
    expect(result).toEqual({
      ok: true,
      turn: { text: 'hi', toolCalls: [{ id: 'c1', name: 'book', arguments: { room: 'a' } }], modelId: 'm' },
    });
  });

  test('returns JSON that is not a turn as it is, for the turn schema to refuse', () => {
    expect(jsonModelTurn('call everything')).toEqual({ ok: true, turn: 'call everything' });
    expect(jsonModelTurn({ toolCalls: 'call everything' })).toEqual({
      ok: true,
      turn: { toolCalls: 'call everything' },
    });
    expect(jsonModelTurn(undefined)).toEqual({ ok: true, turn: undefined });
  });

  test('copies 100 000 levels of nested arguments without overflowing the stack', () => {
    let deep: unknown = [];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(jsonModelTurn(call('book', { deep })).ok).toBe(true);
  });

  test('any JSON turn comes out the same JSON', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.jsonValue(), fc.boolean(), (text, name, args, done) => {
        const turn = { text, toolCalls: [{ id: 'c1', name, arguments: args }], done };
        const result = jsonModelTurn(turn);
        expect(result.ok).toBe(true);
        // Compared as JSON text: -0 is 0 in JSON, and an own "__proto__" key compares as a key.
        expect(JSON.stringify(result.ok ? result.turn : undefined)).toBe(JSON.stringify(turn));
      }),
      { numRuns: 300 },
    );
  });
});

describe('callModel with a provider that returns what JSON cannot carry', () => {
  async function callModelWith(provider: ModelProvider) {
    const { callModel } = createModelActivities({ registry: createToolRegistry([]), providers: { odd: provider } });
    return callModel({
      runKey: `run-${Math.random()}`,
      goal: 'g',
      settings: { provider: 'odd' },
      turn: 0,
      fromIndex: 0,
      messages: [{ role: 'user', content: 'g' }],
    });
  }

  test.each([
    ['a symbol as tool name', call(Symbol('book'), {})],
    ['a BigInt in the arguments', call('book', { nights: 3n })],
    ['a function as arguments', call('book', () => ({}))],
    ['a cycle', call('book', cyclic)],
  ])('turns %s into a MODEL_OUTPUT_NOT_JSON issue without calls, which JSON carries', async (_, raw) => {
    const turn = await callModelWith(async () => raw as never);
    expect(turn).toMatchObject({ toolCalls: [], done: false, issue: { code: 'MODEL_OUTPUT_NOT_JSON' } });
    expect(turn.issue?.message).toContain('is not JSON');
    expect(JSON.parse(JSON.stringify(turn))).toEqual(turn);
  });
});
