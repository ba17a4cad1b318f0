import { z } from 'zod';
import fc from 'fast-check';
import { canonicalJson, fingerprint } from '../../src/stores/idempotency/canonical-json';
import { ARGUMENT_GUARD_LIMITS } from '../../src/guard/json-arguments';
import { parseToolArguments } from '../../src/guard/parse-tool-arguments';

const schema = z.object({
  city: z.string(),
  nights: z.number().int(),
  room: z.enum(['single', 'double']),
  guest: z.object({ name: z.string(), vip: z.boolean().optional() }).optional(),
  tags: z.array(z.object({ label: z.string() })).optional(),
});

function problems(raw: unknown): string {
  const parsed = parseToolArguments(schema, raw);
  if (parsed.ok) throw new Error('expected a failure');
  expect(parsed.error).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS', retryable: false, attempts: 0 });
  return parsed.error.hint;
}

describe('parseToolArguments', () => {
  test('accepts a JSON string that matches the schema', () => {
    expect(parseToolArguments(schema, '{"city":"Berlin","nights":3,"room":"double"}')).toMatchObject({
      ok: true,
      value: { city: 'Berlin', nights: 3, room: 'double' },
    });
  });

  test('accepts an object that matches the schema', () => {
    expect(parseToolArguments(schema, { city: 'Rome', nights: 1, room: 'single' }).ok).toBe(true);
  });

  test('reports broken JSON with the parser message and a hint about the format', () => {
    const parsed = parseToolArguments(schema, '{"city": "Berlin", nights: 3}');
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.error.message).toMatch(/not valid JSON/);
      expect(parsed.error.hint).toMatch(/double-quoted keys/);
    }
  });

  test('reports JSON that is not an object', () => {
    expect(problems('[1,2]')).toMatch(/one JSON object/);
  });

  test('reports type drift and says to drop the quotes', () => {
    expect(problems({ city: 'Berlin', nights: '3', room: 'double' })).toContain(
      '`nights` must be a number, not a string: write 3 without quotes',
    );
  });

  test('reports a boolean sent as a string as type drift', () => {
    expect(problems({ city: 'B', nights: 1, room: 'single', guest: { name: 'A', vip: 'true' } })).toContain(
      '`guest.vip` must be a boolean, not a string',
    );
  });

  test('reports an enum value that does not exist and lists the allowed ones', () => {
    expect(problems({ city: 'Berlin', nights: 3, room: 'penthouse' })).toContain(
      '`room` must be one of "single", "double"; got "penthouse"',
    );
  });

  test('reports an invented field at the top level', () => {
    expect(problems({ city: 'Berlin', nights: 3, room: 'double', breakfast: true })).toContain(
      'remove the unknown field `breakfast`',
    );
  });

  test('reports an invented field inside a nested object', () => {
    expect(problems({ city: 'B', nights: 1, room: 'single', guest: { name: 'A', age: 40 } })).toContain(
      'remove the unknown field `age` in `guest`',
    );
  });

  test('reports an invented field inside an array element', () => {
    expect(problems({ city: 'B', nights: 1, room: 'single', tags: [{ label: 'x', color: 'red' }] })).toContain(
      '`color` in `tags[0]`',
    );
  });

  test('reports a missing required field', () => {
    expect(problems({ city: 'Berlin', room: 'double' })).toContain('`nights` is required');
  });

  test('lets a loose object keep extra fields', () => {
    const loose = z.looseObject({ a: z.number() });
    expect(parseToolArguments(loose, { a: 1, b: 2 }).ok).toBe(true);
  });

  test('treats absent arguments as an empty object', () => {
    expect(parseToolArguments(z.object({}), undefined)).toMatchObject({ ok: true, value: {} });
  });

  describe('one guard, consistent with the store', () => {
    const loose = z.object({ note: z.string().optional(), data: z.unknown().optional() });

    function failure(target: z.ZodType, raw: unknown) {
      const parsed = parseToolArguments(target, raw);
      if (parsed.ok) throw new Error(`expected a failure, got ${JSON.stringify(parsed.value)}`);
      expect(parsed.error.code).toBe('INVALID_ARGUMENTS');
      return parsed.error;
    }

    test('refuses a lone surrogate in a string value with a hint, instead of failing at the fingerprint', () => {
      const error = failure(loose, '{"note":"\\ud800"}');
      expect(error.message).toContain('`note`');
      expect(error.message).toContain('lone UTF-16 surrogate');
      expect(error.hint).toMatch(/well-formed Unicode/);
    });

    test('refuses a lone surrogate in a key', () => {
      expect(failure(loose, { data: { ['a\udc00']: 1 } }).message).toContain('lone UTF-16 surrogate');
    });

    test('refuses arguments nested 10 000 levels deep without overflowing the stack', () => {
      const deep = `{"data":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
      const error = failure(loose, deep);
      expect(error.message).toContain(`nesting deeper than ${ARGUMENT_GUARD_LIMITS.maxDepth} levels`);
      expect(error.hint).toMatch(/Flatten/);
    });

    test('refuses an object argument nested 100 000 levels deep without overflowing the stack', () => {
      let deep: unknown = 1;
      for (let i = 0; i < 100_000; i++) deep = { a: deep };
      expect(failure(loose, { data: deep }).message).toContain('nesting deeper than');
    });

    test('refuses values that are not JSON (NaN, functions, class instances)', () => {
      expect(failure(loose, { data: Number.NaN }).message).toContain('NaN is not a JSON number');
      expect(failure(loose, { data: () => 1 }).message).toContain('function is not JSON');
      expect(failure(loose, { data: new Map() }).message).toContain('not a plain JSON object');
    });

    test('finds an invented field in the member of a union that zod picks', () => {
      const union = z.object({ pick: z.union([z.object({ a: z.number() }), z.object({ b: z.string() })]) });
      expect(failure(union, { pick: { a: 1, c: 2 } }).hint).toContain('remove the unknown field `c` in `pick`');
    });

    test('finds an invented field in a discriminated union member', () => {
      const payment = z.object({
        method: z.discriminatedUnion('kind', [
          z.object({ kind: z.literal('card'), last4: z.string() }),
          z.object({ kind: z.literal('iban'), iban: z.string() }),
        ]),
      });
      const error = failure(payment, { method: { kind: 'card', last4: '4242', iban: 'DE00' } });
      expect(error.hint).toContain('remove the unknown field `iban` in `method`');
    });

    test('finds an invented field in an intersection only when neither side declares it', () => {
      const both = z.intersection(
        z.object({ a: z.number(), nested: z.object({ x: z.number() }) }),
        z.object({ b: z.number() }),
      );
      expect(parseToolArguments(both, { a: 1, b: 2, nested: { x: 1 } }).ok).toBe(true);
      const error = failure(both, { a: 1, b: 2, c: 3, nested: { x: 1, y: 2 } });
      expect(error.hint).toContain('remove the unknown field `c`');
      expect(error.hint).toContain('remove the unknown field `y` in `nested`');
    });

    test('finds an invented field inside the values of a record', () => {
      const rooms = z.object({ rooms: z.record(z.string(), z.object({ beds: z.number() })) });
      expect(failure(rooms, { rooms: { r1: { beds: 2, minibar: true } } }).hint).toContain('`minibar` in `rooms.r1`');
    });

    test.each(['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__proto__'])(
      'reports an invented field named %s like any other',
      (key) => {
        const raw = `{"city":"B","nights":1,"room":"single",${JSON.stringify(key)}:{"x":1}}`;
        expect(failure(schema, raw).hint).toContain(`remove the unknown field \`${key}\``);
      },
    );

    test('accepts a declared field named constructor that the model left out, and one it sent', () => {
      const odd = z.object({ constructor: z.string().optional(), toString: z.number().optional() });
      expect(parseToolArguments(odd, {}).ok).toBe(true);
      expect(parseToolArguments(odd, '{"constructor":"x","toString":2}')).toMatchObject({
        ok: true,
        value: { constructor: 'x', toString: 2 },
      });
    });

    test('lists at most the limit of problems and counts the rest, for 50 000 objects with an invented field', () => {
      const items = z.object({ items: z.array(z.object({ id: z.number() })) });
      const raw = JSON.stringify({ items: Array.from({ length: 50_000 }, (_, id) => ({ id, extra: 1 })) });
      const error = failure(items, raw);
      expect(error.issues).toHaveLength(ARGUMENT_GUARD_LIMITS.maxIssues);
      expect(error.message).toContain('50000 problems');
      expect(error.hint).toContain(`and ${50_000 - ARGUMENT_GUARD_LIMITS.maxIssues} more problems not listed`);
      expect(JSON.stringify(error).length).toBeLessThan(10_000);
    });

    test('lists at most the limit of schema errors too', () => {
      const items = z.object({ items: z.array(z.number()) });
      const error = failure(items, { items: Array.from({ length: 20_000 }, () => 'x') });
      expect(error.issues).toHaveLength(ARGUMENT_GUARD_LIMITS.maxIssues);
      expect(JSON.stringify(error).length).toBeLessThan(10_000);
    });

    test('returns what the model sent, without the defaults zod fills in, for the fingerprint', () => {
      const withDefault = z.object({ city: z.string(), currency: z.string().default('EUR') });
      const parsed = parseToolArguments(withDefault, '{"city":"Rome"}');
      expect(parsed).toMatchObject({ ok: true, value: { city: 'Rome', currency: 'EUR' } });
      if (parsed.ok) expect(canonicalJson(parsed.sent)).toBe('{"city":"Rome"}');
    });

    test('whatever the guard accepts can be fingerprinted', () => {
      const anything = z.object({ data: z.unknown() });
      fc.assert(
        fc.property(fc.jsonValue(), fc.string({ unit: 'binary' }), (data, text) => {
          for (const raw of [{ data }, { data: text }, JSON.stringify({ data, text })]) {
            const parsed = parseToolArguments(anything.passthrough(), raw);
            if (parsed.ok) expect(() => fingerprint(parsed.sent)).not.toThrow();
          }
        }),
        { numRuns: 300 },
      );
    });
  });
});
