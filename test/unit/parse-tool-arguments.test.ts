import { z } from 'zod';
import { parseToolArguments } from '../../src/tools/parse-tool-arguments';

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
    expect(parseToolArguments(schema, '{"city":"Berlin","nights":3,"room":"double"}')).toEqual({
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
    expect(parseToolArguments(z.object({}), undefined)).toEqual({ ok: true, value: {} });
  });
});
