import { z } from 'zod';
import fc from 'fast-check';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { createToolActivities, type ToolActivity } from '../../src/activities/tool-activities';
import {
  ARGUMENT_GUARD_CEILINGS,
  ArgumentGuardConfigError,
  resolveArgumentGuard,
} from '../../src/guard/argument-guard-options';
import { defineTool } from '../../src/tools/define-tool';
import { ARGUMENT_GUARD_LIMITS } from '../../src/guard/json-arguments';
import { parseToolArguments } from '../../src/guard/parse-tool-arguments';
import { ToolDefinitionError } from '../../src/contract/tool-definition-error';
import { createToolRegistry } from '../../src/tools/tool-registry';
import { createWorker } from '../../src/runtime/create-worker';
import type { ToolErrorObservation } from '../../src/contract/activity-protocol';

function nested(levels: number): string {
  return `{"data":${'['.repeat(levels)}${']'.repeat(levels)}}`;
}

function errorOf(parsed: ReturnType<typeof parseToolArguments>): ToolErrorObservation {
  if (parsed.ok) throw new Error('expected INVALID_ARGUMENTS');
  return parsed.error;
}

const anything = z.object({ data: z.unknown() });

describe('guard limits are configurable', () => {
  test('the defaults are the documented ones', () => {
    expect(resolveArgumentGuard(undefined)).toEqual({ maxDepth: 64, maxIssues: 10, maxIssueChars: 300 });
  });

  test('a lower maxDepth refuses nesting the default accepts', () => {
    expect(parseToolArguments(anything, nested(10)).ok).toBe(true);
    const error = errorOf(parseToolArguments(anything, nested(10), { ...ARGUMENT_GUARD_LIMITS, maxDepth: 5 }));
    expect(error.message).toContain('nesting deeper than 5 levels');
  });

  test('a higher maxDepth accepts nesting the default refuses', () => {
    expect(errorOf(parseToolArguments(anything, nested(100))).message).toContain('deeper than 64');
    expect(parseToolArguments(anything, nested(100), { ...ARGUMENT_GUARD_LIMITS, maxDepth: 200 }).ok).toBe(true);
  });

  test('maxIssues and maxIssueChars bound the problems listed and their length', () => {
    const items = z.object({ items: z.array(z.object({ id: z.number() })) });
    const raw = { items: Array.from({ length: 30 }, (_, id) => ({ id, ['x'.repeat(500)]: 1 })) };
    const error = errorOf(parseToolArguments(items, raw, { maxDepth: 64, maxIssues: 3, maxIssueChars: 40 }));
    expect(error.issues).toHaveLength(3);
    expect(error.hint).toContain('and 27 more problems not listed');
    expect(error.issues?.every((issue) => issue.message.length <= 40)).toBe(true);
  });

  test.each([
    [{ maxDepth: 0 }, 'argumentGuard.maxDepth must be an integer from 1 to 256 (got 0)'],
    [{ maxDepth: 1_000 }, 'argumentGuard.maxDepth must be an integer from 1 to 256 (got 1000)'],
    [{ maxIssues: 2.5 }, 'argumentGuard.maxIssues must be an integer from 1 to 20 (got 2.5)'],
    [{ maxIssueChars: '300' }, 'argumentGuard.maxIssueChars must be an integer from 1 to 1000 (got "300")'],
    [{ maxDepht: 10 }, 'argumentGuard: unknown limit "maxDepht" (known: maxDepth, maxIssues, maxIssueChars)'],
    [42, 'argumentGuard must be an object of limits'],
  ])('a worker setting %j is refused with a clear error', (options, message) => {
    expect(() => resolveArgumentGuard(options)).toThrow(ArgumentGuardConfigError);
    expect(() => resolveArgumentGuard(options)).toThrow(message);
    try {
      resolveArgumentGuard(options);
    } catch (error) {
      expect(error).toMatchObject({ name: 'ArgumentGuardConfigError', code: 'INVALID_ARGUMENT_GUARD' });
    }
  });

  test('the ceilings are accepted', () => {
    expect(resolveArgumentGuard({ ...ARGUMENT_GUARD_CEILINGS })).toEqual(ARGUMENT_GUARD_CEILINGS);
  });

  test('createWorker refuses a bad argumentGuard before it connects to anything', async () => {
    await expect(createWorker({ tools: [], argumentGuard: { maxIssues: 50 } })).rejects.toThrow(
      'argumentGuard.maxIssues must be an integer from 1 to 20 (got 50)',
    );
  });

  test('a tool declaring a bad argumentGuard is refused by defineTool', () => {
    const declare = () =>
      defineTool({
        name: 'deep',
        description: 'Takes deep data.',
        input: anything,
        output: z.object({}),
        effect: 'read-only',
        idempotent: true,
        argumentGuard: { maxDepth: -1 },
      });
    expect(declare).toThrow(ToolDefinitionError);
    expect(declare).toThrow('Tool "deep": argumentGuard.maxDepth must be an integer from 1 to 256 (got -1)');
  });

  test("the worker's limit applies to its tools, and a tool's own limit wins over it", async () => {
    const tool = (name: string, argumentGuard?: { maxDepth: number }) =>
      defineTool({
        name,
        description: 'Takes deep data.',
        input: anything,
        output: z.object({ ok: z.boolean() }),
        effect: 'read-only',
        idempotent: true,
        ...(argumentGuard ? { argumentGuard } : {}),
      }).implement(async () => ({ ok: true }));
    const activities = createToolActivities({
      registry: createToolRegistry([tool('plain'), tool('deep', { maxDepth: 30 })]),
      argumentGuard: { maxDepth: 8 },
    });
    const call = (name: string) =>
      new MockActivityEnvironment({ attempt: 1 }).run(activities[name] as ToolActivity, {
        arguments: nested(20),
        idempotencyKey: `run/${name}`,
        stepId: 1,
      });
    const refused = await call('plain').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApplicationFailure);
    expect((refused as ApplicationFailure).message).toContain('nesting deeper than 8 levels');
    await expect(call('deep')).resolves.toMatchObject({ output: { ok: true } });
  });
});

describe('__proto__ keys are forbidden wherever they are', () => {
  const rooms = z.object({ rooms: z.record(z.string(), z.object({ beds: z.number() })), meta: z.unknown() });

  test('a __proto__ key in a record value is INVALID_ARGUMENTS, not silently dropped', () => {
    const error = errorOf(parseToolArguments(rooms, '{"rooms":{"__proto__":{"beds":1},"r1":{"beds":2}},"meta":1}'));
    expect(error.code).toBe('INVALID_ARGUMENTS');
    expect(error.hint).toContain('remove the forbidden field `__proto__` in `rooms`');
  });

  test('a __proto__ key in a loose object or an unknown value is refused too', () => {
    const loose = z.looseObject({ a: z.number() });
    expect(errorOf(parseToolArguments(loose, '{"a":1,"__proto__":{"admin":true}}')).hint).toContain(
      'remove the forbidden field `__proto__`',
    );
    expect(errorOf(parseToolArguments(rooms, '{"rooms":{},"meta":{"x":[{"__proto__":1}]}}')).hint).toContain(
      'in `meta.x[0]`',
    );
  });

  test('wherever a __proto__ key is put, the arguments are refused and no prototype changes', () => {
    const schemas = [
      rooms,
      z.object({ tags: z.record(z.string(), z.string()) }),
      z.looseObject({ a: z.number().optional() }),
      z.object({ list: z.array(z.record(z.string(), z.unknown())) }),
      z.object({ data: z.unknown() }).catchall(z.unknown()),
    ];
    const valid = [
      { rooms: { r1: { beds: 2 } }, meta: { deep: { er: [1, { x: 2 }] } } },
      { tags: { a: 'b', c: 'd' } },
      { a: 1, extra: { nested: {} } },
      { list: [{ a: 1 }, { b: { c: {} } }] },
      { data: { x: [{}] }, other: {} },
    ];
    const before = Object.getOwnPropertyNames(Object.prototype).sort();
    fc.assert(
      fc.property(fc.nat(schemas.length - 1), fc.nat(), fc.jsonValue(), (which, spot, payload) => {
        const text = withProtoKeyAt(JSON.stringify(valid[which]), spot, JSON.stringify(payload));
        const parsed = parseToolArguments(schemas[which]!, text);
        expect(parsed.ok).toBe(false);
        expect(errorOf(parsed).hint).toContain('`__proto__`');
        expect(({} as Record<string, unknown>)['beds']).toBeUndefined();
      }),
      { numRuns: 300 },
    );
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(before);
  });
});

/** The JSON text with `"__proto__": payload` inserted as the first key of its n-th object (modulo their count). */
function withProtoKeyAt(json: string, n: number, payload: string): string {
  const opens = [...json.matchAll(/\{/g)].map((match) => match.index);
  const at = opens[n % opens.length]! + 1;
  const empty = json[at] === '}';
  return `${json.slice(0, at)}"__proto__":${payload}${empty ? '' : ','}${json.slice(at)}`;
}
