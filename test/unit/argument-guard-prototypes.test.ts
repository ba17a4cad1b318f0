import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { parseToolArguments } from '../../src/guard/parse-tool-arguments';

/**
 * What a tool receives from the argument guard is what `JSON.parse` would have made: ordinary objects
 * (`Object.prototype`, own data properties) whatever their keys — `toString`, `valueOf`, `constructor`,
 * `hasOwnProperty` — and wherever they sit (under `z.any()`, `z.unknown()`, a loose object, a record, an array).
 */

/** Keys that name members of `Object.prototype` (but `__proto__`, which the guard refuses), and ordinary ones. */
const PROTOTYPE_KEYS = Object.getOwnPropertyNames(Object.prototype).filter((key) => key !== '__proto__');
const key = fc.oneof(fc.constantFrom(...PROTOTYPE_KEYS), fc.string({ maxLength: 6 }));

/** Any JSON value whose objects may carry prototype-member keys, at most a few levels deep. */
const { json } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
    fc.string({ maxLength: 8 }),
    fc.array(tie('json'), { maxLength: 4 }),
    fc.dictionary(key, tie('json'), { maxKeys: 5, noNullPrototype: true }),
  ),
}));
const jsonObject = fc.dictionary(key, json, { maxKeys: 5, noNullPrototype: true });

/** Schemas that hand nested objects through untouched, each with the arguments it receives for `payload`. */
const PASS_THROUGH: Array<{ name: string; schema: z.ZodType; wrap: (payload: unknown) => unknown }> = [
  { name: 'z.any()', schema: z.object({ data: z.any() }), wrap: (data) => ({ data }) },
  { name: 'z.unknown()', schema: z.object({ data: z.unknown() }), wrap: (data) => ({ data }) },
  { name: 'z.looseObject', schema: z.looseObject({ id: z.number() }), wrap: (data) => ({ id: 1, extra: data }) },
  {
    name: 'z.record',
    schema: z.object({ byName: z.record(z.string(), z.unknown()) }),
    wrap: (data) => ({ byName: { first: data } }),
  },
  { name: 'z.array', schema: z.object({ list: z.array(z.unknown()) }), wrap: (data) => ({ list: [data, [data]] }) },
];

/** Every object in `value` has `Object.prototype` and only own enumerable data properties. */
function everyObjectIsOrdinary(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      if (Object.getPrototypeOf(node) !== Array.prototype) return false;
      stack.push(...node);
      continue;
    }
    if (Object.getPrototypeOf(node) !== Object.prototype) return false;
    for (const name of Object.getOwnPropertyNames(node)) {
      const descriptor = Object.getOwnPropertyDescriptor(node, name)!;
      if (!('value' in descriptor) || !descriptor.enumerable) return false;
      stack.push(descriptor.value);
    }
  }
  return true;
}

describe('objects the argument guard hands to a tool', () => {
  const prototypeBefore = Object.getOwnPropertyNames(Object.prototype).sort();
  afterAll(() => {
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeBefore);
  });

  test.each(PASS_THROUGH)(
    'under $name, any JSON object comes out deep-equal to JSON.parse of it, with Object.prototype',
    ({ schema, wrap }) => {
      fc.assert(
        fc.property(jsonObject, (payload) => {
          const text = JSON.stringify(wrap(payload));
          const parsed = parseToolArguments(schema, text);
          expect(parsed.ok).toBe(true);
          if (!parsed.ok) return;
          // node's deep-strict equality compares prototypes too (jest's toStrictEqual reads `.constructor`).
          expect(isDeepStrictEqual(parsed.value, JSON.parse(text))).toBe(true);
          expect(JSON.stringify(parsed.value)).toBe(text); // the keys in the order the model wrote them
          expect(everyObjectIsOrdinary(parsed.value)).toBe(true);
          expect(everyObjectIsOrdinary(parsed.sent)).toBe(true);
        }),
        { numRuns: 200 },
      );
    },
  );

  test.each(PASS_THROUGH)(
    'under $name, an object without prototype-member keys works with String(), template literals and JSON.stringify',
    ({ schema, wrap }) => {
      const parsed = parseToolArguments(schema, JSON.stringify(wrap({ a: 1, nested: { b: [{ c: 'x' }] } })));
      expect(parsed.ok).toBe(true);
      const values = parsed.ok ? Object.values(parsed.value as Record<string, unknown>) : [];
      for (const value of values) {
        expect(() => String(value)).not.toThrow();
        expect(() => `${String(value)} ${JSON.stringify(value)}`).not.toThrow();
        if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
          expect(String(value)).toBe('[object Object]');
          expect(Object.prototype.hasOwnProperty.call(value, 'toString')).toBe(false);
        }
      }
    },
  );

  test('keys named toString, valueOf, constructor and hasOwnProperty are own data fields, as JSON.parse makes them', () => {
    const raw = '{"data":{"toString":"t","valueOf":1,"constructor":{"name":"c"},"hasOwnProperty":false,"k":2}}';
    const parsed = parseToolArguments(z.object({ data: z.any() }), raw);
    expect(parsed.ok).toBe(true);
    const data = (parsed.ok ? parsed.value.data : undefined) as Record<string, unknown>;
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
    expect(Object.keys(data)).toEqual(['toString', 'valueOf', 'constructor', 'hasOwnProperty', 'k']);
    expect(isDeepStrictEqual(data, JSON.parse(raw).data)).toBe(true);
    expect(data['constructor']).toEqual({ name: 'c' });
  });

  test('a declared field named after an Object.prototype member is still absent when the model left it out', () => {
    const odd = z.object({ toString: z.string().optional(), data: z.unknown() });
    const parsed = parseToolArguments(odd, '{"data":{"x":1}}');
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(Object.hasOwn(parsed.value, 'toString')).toBe(false);
    expect(String(parsed.value.data)).toBe('[object Object]');
  });
});
